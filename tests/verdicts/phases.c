/* SPDX-License-Identifier: MIT */
/*
 * phases.c - native training programs of the phase shapes of issue 22, on the
 * simulated device (tests/verdicts): phases MODE ARGS...
 *   train_eval T V LEAK  T training steps, then V evaluation batches (V > T)
 *   epochs E T V LEAK    E epochs of T training steps and V evaluation batches
 *   accum S A            S optimizer steps of A micro-steps (forward + backward) each
 *   steps N              N training steps alone
 * A training step runs the forward pass over LAYERS layers (each keeps an
 * activation to the backward pass), a loss, the backward pass (a gradient per
 * layer, freed with the layer's activation) and the optimizer step (a
 * temporary per layer); LEAK bytes are kept every training step. An
 * evaluation batch runs the forward pass with the activations freed at once
 * and a few metrics: it allocates at more sites than a training step, so
 * "the loop with the most sites" is the evaluation. The phases and the leak
 * are known by construction (the test's oracle is the command line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_runtime.h"

#define LAYERS 6
#define ACT (256u << 10)
#define GRAD (64u << 10)
#define OPT_TMP (32u << 10)
#define WEIGHT (1u << 20)

static void *kept[8192];
static int nkept;

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

__attribute__((noinline)) static void *layer_forward(int l)
{
	return must(ACT + (size_t)l * 4096);
}

__attribute__((noinline)) static void layer_backward(void *act)
{
	void *g = must(GRAD);
	release(g);
	release(act);
}

__attribute__((noinline)) static void optimizer_step(void)
{
	for (int l = 0; l < LAYERS; l++) {
		void *t = must(OPT_TMP);
		release(t);
	}
}

__attribute__((noinline)) static void record_loss(size_t leak)
{
	if (leak && nkept < 8192)
		kept[nkept++] = must(leak);
}

__attribute__((noinline)) static void forward_backward(void)
{
	void *act[LAYERS];
	for (int l = 0; l < LAYERS; l++)
		act[l] = layer_forward(l);
	void *loss = must(4096);
	for (int l = LAYERS; l-- > 0;)
		layer_backward(act[l]);
	release(loss);
}

static useconds_t step_sleep = 1000; /* the step's other work (data, host) */

__attribute__((noinline)) static void train_step(size_t leak)
{
	forward_backward();
	record_loss(leak);
	optimizer_step();
	if (step_sleep)
		usleep(step_sleep);
}

__attribute__((noinline)) static void eval_metric(size_t n)
{
	release(must(n));
}

__attribute__((noinline)) static void eval_batch(void)
{
	void *x = must(ACT);
	for (int l = 0; l < LAYERS; l++) {
		void *a = layer_forward(l);
		release(a);
	}
	release(x);
	for (size_t m = 0; m < 16; m++) /* top-k, confusion matrix, ...: more allocations than a step */
		eval_metric(512 * (m + 1));
	usleep(1500);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *mode = argv[1];
	long a = atol(argv[2]), b = argc > 3 ? atol(argv[3]) : 0, c = argc > 4 ? atol(argv[4]) : 0;
	size_t leak = argc > 5 ? (size_t)atol(argv[5]) : 0;
	if (cudaSetDevice(0))
		return 3;
	void *w[4];
	for (int i = 0; i < 4; i++)
		w[i] = must(WEIGHT);
	if (!strcmp(mode, "train_eval")) {
		for (long i = 0; i < a; i++)
			train_step(argc > 4 ? (size_t)c : 0);
		for (long i = 0; i < b; i++)
			eval_batch();
	} else if (!strcmp(mode, "train_free_eval")) { /* the kept losses dropped when training ends */
		for (long i = 0; i < a; i++)
			train_step((size_t)c);
		while (nkept)
			release(kept[--nkept]);
		for (long i = 0; i < b; i++)
			eval_batch();
	} else if (!strcmp(mode, "train_free_fastlast")) {
		/* the same, with the last step far shorter than the others (a
		 * loaded machine's sleeps overshoot in some steps and not in
		 * others): its end is not its start plus a typical step */
		step_sleep = 3000;
		for (long i = 0; i < a; i++) {
			if (i == a - 1)
				step_sleep = 0;
			train_step((size_t)c);
		}
		while (nkept)
			release(kept[--nkept]);
		for (long i = 0; i < b; i++)
			eval_batch();
	} else if (!strcmp(mode, "epochs")) {
		for (long e = 0; e < a; e++) {
			for (long i = 0; i < b; i++)
				train_step(leak);
			for (long i = 0; i < c; i++)
				eval_batch();
		}
	} else if (!strcmp(mode, "accum")) {
		for (long s = 0; s < a; s++) {
			for (long m = 0; m < b; m++)
				forward_backward();
			optimizer_step();
			usleep(1000);
		}
	} else if (!strcmp(mode, "steps")) {
		for (long i = 0; i < a; i++)
			train_step(0);
	} else {
		return 2;
	}
	for (int i = 0; i < 4; i++)
		release(w[i]);
	return 0;
}
