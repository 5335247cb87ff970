/* SPDX-License-Identifier: MIT */
/*
 * workload.h - the end-to-end workload's view of the runtime double and its
 * "truth" output: every call it makes that tlm must record is written as one
 * line, so the test can compare the trace with it field by field.
 */
#ifndef TLM_TEST_WORKLOAD_H
#define TLM_TEST_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/cuda_abi.h"
#include "tlm/event.h"

/* an address as the truth lines and the trace write it */
#define WL_U(p) ((uint64_t)(uintptr_t)(p))

/* runtime double (libcudart.so.13) */
cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaMallocPitch(void **, size_t *, size_t, size_t);
cudaError_t cudaMalloc3D(struct cudaPitchedPtr *, struct cudaExtent);
cudaError_t cudaMallocManaged(void **, size_t, unsigned);
cudaError_t cudaMallocHost(void **, size_t);
cudaError_t cudaHostAlloc(void **, size_t, unsigned);
cudaError_t cudaMallocAsync(void **, size_t, cudaStream_t);
cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
cudaError_t cudaMallocFromPoolAsync(void **, size_t, cudaMemPool_t, cudaStream_t);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **, size_t, cudaMemPool_t, cudaStream_t);
cudaError_t cudaFree(void *);
cudaError_t cudaFreeHost(void *);
cudaError_t cudaFreeAsync(void *, cudaStream_t);
cudaError_t cudaFreeAsync_ptsz(void *, cudaStream_t);
cudaError_t cudaMemPoolCreate(cudaMemPool_t *, const CUmemPoolProps *);
cudaError_t cudaMemPoolDestroy(cudaMemPool_t);
cudaError_t cudaStreamCreate(cudaStream_t *);
cudaError_t cudaSetDevice(int);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetDriverEntryPoint(const char *, void **, unsigned long long, enum cudaDriverEntryPointQueryResult *);
cudaError_t cudaGetDriverEntryPointByVersion(const char *, void **, unsigned, unsigned long long,
					     enum cudaDriverEntryPointQueryResult *);

/* truth */
extern FILE *wl_truth;
void wl_expect(unsigned op, unsigned kind, unsigned api, uint64_t addr, uint64_t size, int result, int device,
	       uint64_t stream, uint64_t aux, unsigned flags);
void wl_note(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* "N key value" lines */
void wl_check(int cond, const char *what);                                  /* exits 3 on failure */
void wl_msleep(unsigned ms);
/* waitpid for a child, seconds at most; past them it is killed and noted
 * "child_hung 1". Returns its wait status. */
int wl_wait_child(pid_t c, unsigned seconds);

int wl_runtime(void);
int wl_driver(void);
int wl_dlsym(void);
int wl_procaddr(void);
int wl_entrypoint(void);
int wl_cupti(void);
int wl_cupti_runtime(void);

#endif
