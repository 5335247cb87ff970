/* SPDX-License-Identifier: MIT */
/*
 * torch_double.h - the C interface of the libc10_cuda.so double (a small
 * caching allocator laid out like PyTorch's) and the exact accounting it
 * keeps, which the tests compare with tlm's report.
 */
#ifndef TLM_TEST_TORCH_DOUBLE_H
#define TLM_TEST_TORCH_DOUBLE_H

#include <stddef.h>
#include <stdint.h>

#define DBL_MAX_OOMS 4

struct dbl_oom {
	uint64_t requested;      /* the block size asked for (rounded to 512 B, as torch does) */
	uint64_t reserved_free;  /* reserved - allocated then */
	uint64_t largest_free;   /* largest free gap inside one segment then */
	uint64_t device_free;    /* cudaMemGetInfo after the last failed cudaMalloc */
	uint64_t allocated, reserved;
	unsigned driver_failures;/* failed cudaMalloc calls on the way */
	int fragmentation;       /* 1: reserved_free + device_free >= requested */
};

struct dbl_truth {
	uint64_t allocated, reserved;         /* now */
	uint64_t peak_allocated, peak_reserved;
	/* at the reserved peak, after the block that needed it was placed */
	uint64_t allocated_at_peak, largest_gap_at_peak;
	double frag_at_peak, ext_frag_at_peak;
	/* when allocated first reached its peak: reserved then, 1 - allocated/reserved */
	uint64_t reserved_at_peak_allocated;
	double frag_at_peak_allocated;
	uint64_t live_blocks;
	unsigned nooms;
	struct dbl_oom oom[DBL_MAX_OOMS];
	long hook_calls;                      /* reportMemoryUsageToProfiler calls made */
	long oom_calls;                       /* reportOutOfMemoryToProfiler calls made */
};

typedef int (*dbl_init_fn)(int device);
typedef void *(*dbl_malloc_fn)(size_t size);   /* NULL: out of memory */
typedef void (*dbl_free_fn)(void *p);
typedef void (*dbl_cpu_report_fn)(void);       /* a CPU allocator's call of the same hook */
typedef void (*dbl_truth_fn)(struct dbl_truth *t);
/* libc10.so: calls that reached the real functions (forwarded by libtlm) */
typedef long (*c10dbl_calls_fn)(void);

#endif
