/* SPDX-License-Identifier: MIT */
/* export_workload.c - the program behind the diff and export tests, see
 * export_workload.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export_workload.h"
#include "sim_runtime.h"

static void *must(size_t n)
{
	void *p;
	if (cudaMalloc(&p, n))
		exit(3);
	return p;
}

/* Kept out of line so each site is its own frame. */
__attribute__((noinline)) static void *keep_loss(void)
{
	return must(EW_LOSS);
}

__attribute__((noinline)) static void *old_cache(void)
{
	return must(EW_OLD);
}

__attribute__((noinline)) static void *new_cache(void)
{
	return must(EW_NEW);
}

__attribute__((noinline)) static void load_model(void **w)
{
	for (int i = 0; i < EW_WEIGHTS; i++)
		w[i] = must(EW_WEIGHT_SIZE);
}

__attribute__((noinline)) static void train_step(int newer)
{
	void *act = must(EW_ACT_SIZE);
	(void)keep_loss();
	(void)(newer ? new_cache() : old_cache());
	usleep(EW_ITER_US);
	if (cudaFree(act))
		exit(3);
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[2], "base") && strcmp(argv[2], "new"))) {
		fprintf(stderr, "usage: export_workload ITERS base|new\n");
		return 2;
	}
	int iters = atoi(argv[1]), newer = !strcmp(argv[2], "new");
	if (cudaSetDevice(0))
		return 3;
	void *w[EW_WEIGHTS];
	load_model(w);
	for (int i = 0; i < iters; i++)
		train_step(newer);
	return 0;
}
