/* SPDX-License-Identifier: MIT */
/*
 * torch_workload.c - drives the libc10_cuda.so double like PyTorch drives its
 * caching allocator, loaded the way Python loads torch (dlopen RTLD_LOCAL of
 * TREE/torch/lib/libc10_cuda.so, which pulls in libc10.so beside it), on
 * device 1 of the simulated driver (TLM_SIM_MEMORY=64M). The pattern
 * (docs/pytorch.md's story in miniature):
 *
 *  1. 8 blocks of 256 KiB share one 2 MiB segment; 12 blocks of 3 MiB get a
 *     4 MiB segment each; 12 blocks of 1 MiB fill the 1 MiB tails: the peak
 *     of allocated bytes (50 MiB in 50 MiB reserved).
 *  2. Every other 3 MiB block and 256 KiB block is freed, and one segment
 *     is emptied: 3 MiB holes.
 *  3. 8 MiB: a new segment, the peak of reserved bytes (58 MiB).
 *  4. 12 MiB: cudaMalloc fails, the empty segment is released, it fails
 *     again: an OOM by fragmentation (19 MiB free in holes + 10 MiB free on
 *     the device, but no 12 MiB in one piece).
 *  5. 40 MiB: an OOM by exhaustion.
 *  6. some frees; a CPU allocator's call of the hook (must be ignored).
 *
 * Then it writes the double's exact accounting to $TLM_TEST_TRUTH.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "torch_double.h"

#define MiB (1u << 20)

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "torch_workload: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: torch_workload TREE\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/torch/lib/libc10_cuda.so", argv[1]);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "torch_workload: %s\n", dlerror());
		return 2;
	}
	snprintf(path, sizeof path, "%s/torch/lib/libc10.so", argv[1]);
	void *hc = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!hc) {
		fprintf(stderr, "torch_workload: libc10.so not loaded from the tree: %s\n", dlerror());
		return 2;
	}
	dbl_init_fn init = (dbl_init_fn)sym(h, "dbl_init");
	dbl_malloc_fn mal = (dbl_malloc_fn)sym(h, "dbl_malloc");
	dbl_free_fn fre = (dbl_free_fn)sym(h, "dbl_free");
	dbl_cpu_report_fn cpu = (dbl_cpu_report_fn)sym(h, "dbl_cpu_report");
	dbl_truth_fn get_truth = (dbl_truth_fn)sym(h, "dbl_truth");
	c10dbl_calls_fn mem_calls = (c10dbl_calls_fn)sym(hc, "c10dbl_mem_calls");
	c10dbl_calls_fn oom_calls = (c10dbl_calls_fn)sym(hc, "c10dbl_oom_calls");

	if (init(1)) {
		fprintf(stderr, "torch_workload: cudaSetDevice(1) failed\n");
		return 2;
	}
	void *small[8], *big[12], *mid[12];
	for (int i = 0; i < 8; i++)
		small[i] = mal(256u << 10);
	for (int i = 0; i < 12; i++)
		big[i] = mal(3 * MiB);
	for (int i = 0; i < 12; i++)
		mid[i] = mal(1 * MiB);
	for (int i = 0; i < 12; i++)
		if ((i < 8 && !small[i]) || !big[i] || !mid[i]) {
			fprintf(stderr, "torch_workload: step 1 failed\n");
			return 3;
		}
	for (int i = 0; i < 12; i += 2)
		fre(big[i]);
	for (int i = 0; i < 8; i += 2)
		fre(small[i]);
	fre(big[1]);
	fre(mid[1]);
	void *a = mal(8 * MiB);
	void *b = mal(12 * MiB);
	void *c = mal(40 * MiB);
	if (!a || b || c) {
		fprintf(stderr, "torch_workload: steps 3-5 did not go as planned\n");
		return 3;
	}
	fre(a);
	for (int i = 2; i < 12; i += 3)
		fre(mid[i]);
	cpu();

	struct dbl_truth t;
	get_truth(&t);
	const char *tp = getenv("TLM_TEST_TRUTH");
	FILE *f = tp ? fopen(tp, "w") : NULL;
	if (!f)
		return 4;
	fprintf(f, "N peak_allocated %llu\n", (unsigned long long)t.peak_allocated);
	fprintf(f, "N peak_reserved %llu\n", (unsigned long long)t.peak_reserved);
	fprintf(f, "N allocated_at_peak %llu\n", (unsigned long long)t.allocated_at_peak);
	fprintf(f, "N largest_gap_at_peak %llu\n", (unsigned long long)t.largest_gap_at_peak);
	fprintf(f, "N frag_at_peak %.12f\n", t.frag_at_peak);
	fprintf(f, "N ext_frag_at_peak %.12f\n", t.ext_frag_at_peak);
	fprintf(f, "N reserved_at_peak_allocated %llu\n", (unsigned long long)t.reserved_at_peak_allocated);
	fprintf(f, "N frag_at_peak_allocated %.12f\n", t.frag_at_peak_allocated);
	fprintf(f, "N allocated_end %llu\n", (unsigned long long)t.allocated);
	fprintf(f, "N reserved_end %llu\n", (unsigned long long)t.reserved);
	fprintf(f, "N live_blocks %llu\n", (unsigned long long)t.live_blocks);
	fprintf(f, "N nooms %u\n", t.nooms);
	for (unsigned i = 0; i < t.nooms; i++) {
		const struct dbl_oom *o = &t.oom[i];
		fprintf(f, "N oom%u_requested %llu\n", i, (unsigned long long)o->requested);
		fprintf(f, "N oom%u_reserved_free %llu\n", i, (unsigned long long)o->reserved_free);
		fprintf(f, "N oom%u_largest_free %llu\n", i, (unsigned long long)o->largest_free);
		fprintf(f, "N oom%u_device_free %llu\n", i, (unsigned long long)o->device_free);
		fprintf(f, "N oom%u_allocated %llu\n", i, (unsigned long long)o->allocated);
		fprintf(f, "N oom%u_reserved %llu\n", i, (unsigned long long)o->reserved);
		fprintf(f, "N oom%u_failures %u\n", i, o->driver_failures);
		fprintf(f, "N oom%u_fragmentation %d\n", i, o->fragmentation);
	}
	fprintf(f, "N hook_calls %ld\n", t.hook_calls);
	fprintf(f, "N oom_calls %ld\n", t.oom_calls);
	fprintf(f, "N forwarded_mem %ld\n", mem_calls());
	fprintf(f, "N forwarded_oom %ld\n", oom_calls());
	fclose(f);
	return 0;
}
