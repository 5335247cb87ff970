/* SPDX-License-Identifier: MIT */
/*
 * steps_workload.c - a training loop on the simulated device, for the step
 * analysis (steps_workload.h): steps_workload MODE STEPS LEAK, MODE one of
 *   train    the loop alone
 *   eval     the loop, then an evaluation phase longer than it (other sites)
 *   between  3 evaluation steps after every 4th training step
 *   epochs   3 epochs, each of STEPS/3 steps, 5 evaluation steps and a
 *            checkpoint save (a 2 MiB staging buffer)
 *   warmup   step 0 creates optimizer state, steps 0 and 1 grow a cache
 *   vary     activations of another size each step (steps of varying length)
 *   none     no loop: a few allocations from distinct sites
 * It writes to $TLM_TEST_TRUTH the device's free memory right after the
 * first allocation (what the report's forecast starts from) and that size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_runtime.h"
#include "steps_workload.h"

static void *weights[SW_WEIGHTS];
static void *kept[4096];
static int nkept;
static const char *mode;
static unsigned long long leak;

static void *must(size_t n)
{
	void *p;
	if (cudaMalloc(&p, n))
		exit(3);
	return p;
}

static void release(void *p)
{
	if (cudaFree(p))
		exit(3);
}

__attribute__((noinline)) static void keep(size_t n)
{
	if (nkept < 4096)
		kept[nkept++] = must(n);
}

__attribute__((noinline)) static void layer_forward(void **h, void **o, size_t scale)
{
	*h = must(SW_H * scale);
	*o = must(SW_O * scale);
}

__attribute__((noinline)) static void layer_backward(void *h, void *o, size_t scale)
{
	void *g = must(SW_O * scale);
	release(g);
	release(o);
	release(h);
}

__attribute__((noinline)) static void record_loss(void)
{
	keep(leak);
}

__attribute__((noinline)) static void optimizer_init(void)
{
	for (int i = 0; i < SW_OPT_N; i++)
		keep(SW_OPT);
}

__attribute__((noinline)) static void grow_cache(void)
{
	keep(SW_CACHE);
}

__attribute__((noinline)) static void train_step(int i)
{
	void *h[SW_LAYERS], *o[SW_LAYERS];
	size_t scale = !strcmp(mode, "vary") ? 1 + (size_t)(i % 3) : 1;
	for (int l = 0; l < SW_LAYERS; l++)
		layer_forward(&h[l], &o[l], scale);
	void *loss = must(SW_LOSS);
	if (leak)
		record_loss();
	for (int l = SW_LAYERS; l-- > 0;)
		layer_backward(h[l], o[l], scale);
	release(loss);
	if (!strcmp(mode, "warmup")) {
		if (i == 0)
			optimizer_init();
		if (i < 2)
			grow_cache();
	}
	usleep(SW_STEP_US);
}

__attribute__((noinline)) static void eval_step(int us)
{
	void *x = must(SW_H);
	void *y = must(SW_O);
	release(x);
	release(y);
	usleep((useconds_t)us);
}

__attribute__((noinline)) static void save_checkpoint(void)
{
	void *staging = must(2u << 20);
	usleep(2000);
	release(staging);
}

__attribute__((noinline)) static void no_loop(void)
{
	void *a = must(1 << 20);
	void *b = must(3 << 20);
	usleep(5000);
	release(a);
	keep(5 << 20);
	usleep(5000);
	release(b);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	mode = argv[1];
	int steps = atoi(argv[2]);
	leak = strtoull(argv[3], NULL, 10);
	if (cudaSetDevice(0))
		return 3;
	size_t free_b = 0, total_b = 0;
	weights[0] = must(SW_WEIGHT);
	if (cudaMemGetInfo(&free_b, &total_b))
		return 3;
	for (int i = 1; i < SW_WEIGHTS; i++)
		weights[i] = must(SW_WEIGHT);
	if (!strcmp(mode, "none")) {
		no_loop();
	} else if (!strcmp(mode, "epochs")) {
		for (int e = 0, i = 0; e < 3; e++) {
			for (int s = 0; s < steps / 3; s++)
				train_step(i++);
			for (int v = 0; v < 5; v++)
				eval_step(SW_STEP_US);
			save_checkpoint();
		}
	} else {
		for (int i = 0; i < steps; i++) {
			train_step(i);
			if (!strcmp(mode, "between") && i % SW_EVAL_EVERY == SW_EVAL_EVERY - 1)
				for (int e = 0; e < 3; e++)
					eval_step(SW_STEP_US);
		}
		if (!strcmp(mode, "eval"))
			for (int e = 0; e < SW_EVAL_STEPS; e++)
				eval_step(SW_EVAL_US);
	}
	const char *t = getenv("TLM_TEST_TRUTH");
	FILE *f = t && *t ? fopen(t, "w") : NULL;
	if (f) {
		fprintf(f, "N free_first %zu\n", free_b);
		fprintf(f, "N first_size %u\n", SW_WEIGHT);
		fclose(f);
	}
	return 0;
}
