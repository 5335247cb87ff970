// SPDX-License-Identifier: MIT
/* Exact-truth tests of the device memory model: pages, VA reuse, OOM rule,
 * cuMemGetInfo, pitch, host and managed memory, contexts and streams.
 * Runs with TLM_SIM_MEMORY=64M (32 pages) and TLM_SIM_DEVICES=2; device 0's
 * primary context is live and holds 4 of them (CTX_COST). */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "sim_test.h"

#define NPAGES (32 - (int)(CTX_COST / PAGE)) /* free for allocations: 28 */

/* Runs first, in a fresh process: nothing works before cuInit. */
static void test_before_init(void **state)
{
	(void)state;
	CUdeviceptr p;
	int v = 0, n;
	const char *s;
	assert_int_equal(cuMemAlloc_v2(&p, 1), CUDA_ERROR_NOT_INITIALIZED);
	assert_int_equal(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	assert_int_equal(tlm_sim_used_pages(0), -1);
	CU_OK(cuDriverGetVersion(&v));
	assert_int_equal(v, 13000);
	CU_OK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
	assert_string_equal(s, "CUDA_ERROR_OUT_OF_MEMORY");
	CU_OK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
	assert_string_equal(s, "out of memory");
	assert_int_equal(cuGetErrorName(12345, &s), CUDA_ERROR_INVALID_VALUE);
	assert_null(s);
	assert_int_equal(cuInit(1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuInit(0));
	/* initialised, but this thread has no context yet */
	assert_int_equal(cuMemAlloc_v2(&p, 1), CUDA_ERROR_INVALID_CONTEXT);
	size_t f, t;
	assert_int_equal(cuMemGetInfo_v2(&f, &t), CUDA_ERROR_INVALID_CONTEXT);
	sim_test_ctx(0);
}

static void test_devices(void **state)
{
	(void)state;
	int n;
	CUdevice d;
	char name[64];
	size_t bytes;
	CU_OK(cuDeviceGetCount(&n));
	assert_int_equal(n, 2);
	CU_OK(cuDeviceGet(&d, 1));
	assert_int_equal(d, 1);
	assert_int_equal(cuDeviceGet(&d, 2), CUDA_ERROR_INVALID_DEVICE);
	CU_OK(cuDeviceGetName(name, sizeof(name), 1));
	assert_string_equal(name, "tlm simulated device 1");
	CU_OK(cuDeviceTotalMem_v2(&bytes, 0));
	assert_int_equal(bytes, 64 * MiB);
}

static void test_zero_and_bad_args(void **state)
{
	(void)state;
	CUdeviceptr p;
	assert_int_equal(cuMemAlloc_v2(&p, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAlloc_v2(NULL, 1), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemFree_v2(0), CUDA_SUCCESS); /* as the real driver */
	assert_int_equal(cuMemFree_v2(0x1234), CUDA_ERROR_INVALID_VALUE);
}

static void test_meminfo(void **state)
{
	(void)state;
	size_t f, t;
	CUdeviceptr a, b;
	CU_OK(cuMemGetInfo_v2(&f, &t));
	assert_int_equal(t, 64 * MiB);
	assert_int_equal(f, 56 * MiB); /* the context holds 8 MiB */
	CU_OK(cuMemAlloc_v2(&a, 3 * MiB)); /* 2 pages */
	CU_OK(cuMemAlloc_v2(&b, 1));       /* 1 page */
	CU_OK(cuMemGetInfo_v2(&f, &t));
	assert_int_equal(f, 50 * MiB);
	assert_int_equal(tlm_sim_used_pages(0), 3);
	assert_int_equal(b, a + 2 * PAGE); /* lowest free address, page granular */
	CU_OK(cuMemFree_v2(a));
	CU_OK(cuMemFree_v2(b));
	CU_OK(cuMemGetInfo_v2(&f, &t));
	assert_int_equal(f, 56 * MiB);
}

static void test_oom_only_when_pages_short(void **state)
{
	(void)state;
	CUdeviceptr p[NPAGES + 1], extra;
	for (int i = 0; i < NPAGES; i++)
		CU_OK(cuMemAlloc_v2(&p[i], PAGE));
	assert_int_equal(cuMemAlloc_v2(&extra, PAGE), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(cuMemAlloc_v2(&extra, 1), CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(cuMemFree_v2(p[7]));
	CU_OK(cuMemAlloc_v2(&extra, PAGE));
	assert_int_equal(extra, p[7]); /* the freed range comes back */
	for (int i = 0; i < NPAGES; i++)
		CU_OK(cuMemFree_v2(p[i]));
	/* tiny allocations still cost a page each */
	for (int i = 0; i < NPAGES; i++)
		CU_OK(cuMemAlloc_v2(&p[i], 1));
	assert_int_equal(cuMemAlloc_v2(&extra, 1), CUDA_ERROR_OUT_OF_MEMORY);
	for (int i = 0; i < NPAGES; i++)
		CU_OK(cuMemFree_v2(p[i]));
	/* bigger than the device's free memory (the context holds the rest) */
	assert_int_equal(cuMemAlloc_v2(&extra, 56 * MiB + 1), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(cuMemAlloc_v2(&extra, SIZE_MAX), CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(cuMemAlloc_v2(&extra, 56 * MiB));
	assert_int_equal(extra, DEV_VA_BASE);
	CU_OK(cuMemFree_v2(extra));
}

static void test_freed_range_reused(void **state)
{
	(void)state;
	CUdeviceptr a, b, c, x;
	CU_OK(cuMemAlloc_v2(&a, 5 * MiB));
	CU_OK(cuMemFree_v2(a));
	CU_OK(cuMemAlloc_v2(&x, 5 * MiB));
	assert_int_equal(x, a);
	CU_OK(cuMemFree_v2(x));

	CU_OK(cuMemAlloc_v2(&a, PAGE));
	CU_OK(cuMemAlloc_v2(&b, 2 * PAGE));
	CU_OK(cuMemAlloc_v2(&c, PAGE));
	CU_OK(cuMemFree_v2(b));
	CU_OK(cuMemAlloc_v2(&x, PAGE)); /* first fit: the hole left by b */
	assert_int_equal(x, b);
	CU_OK(cuMemFree_v2(x));
	CU_OK(cuMemAlloc_v2(&x, 3 * PAGE)); /* does not fit the hole: after c */
	assert_int_equal(x, c + PAGE);
	CU_OK(cuMemFree_v2(x));
	CU_OK(cuMemFree_v2(a));
	CU_OK(cuMemFree_v2(c));
	CU_OK(cuMemAlloc_v2(&x, 4 * PAGE)); /* everything coalesced again */
	assert_int_equal(x, a);
	CU_OK(cuMemFree_v2(x));
}

static void test_double_free(void **state)
{
	(void)state;
	CUdeviceptr a;
	CU_OK(cuMemAlloc_v2(&a, 100));
	assert_int_equal(cuMemFree_v2(a + 1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFree_v2(a));
	assert_int_equal(cuMemFree_v2(a), CUDA_ERROR_INVALID_VALUE);
}

static void test_fragmented_va_big_alloc(void **state)
{
	(void)state;
	CUdeviceptr p[NPAGES], big;
	for (int i = 0; i < NPAGES; i++)
		CU_OK(cuMemAlloc_v2(&p[i], PAGE));
	for (int i = 0; i < NPAGES; i += 2) /* 14 free pages, no two adjacent */
		CU_OK(cuMemFree_v2(p[i]));
	CU_OK(cuMemAlloc_v2(&big, NPAGES / 2 * PAGE));
	assert_true(big > p[NPAGES - 1]);
	assert_int_equal(cuMemAlloc_v2(&p[0], 1), CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(cuMemFree_v2(big));
	for (int i = 1; i < NPAGES; i += 2)
		CU_OK(cuMemFree_v2(p[i]));
}

static void test_pitch(void **state)
{
	(void)state;
	CUdeviceptr p;
	size_t pitch = 0, f, t;
	CU_OK(cuMemAllocPitch_v2(&p, &pitch, 100, 10, 4));
	assert_int_equal(pitch, 512);
	CU_OK(cuMemFree_v2(p));
	CU_OK(cuMemAllocPitch_v2(&p, &pitch, 512, 1, 8));
	assert_int_equal(pitch, 512);
	CU_OK(cuMemFree_v2(p));
	CU_OK(cuMemAllocPitch_v2(&p, &pitch, 513, 4096, 16)); /* 1024 * 4096 = 4 MiB */
	assert_int_equal(pitch, 1024);
	CU_OK(cuMemGetInfo_v2(&f, &t));
	assert_int_equal(f, 52 * MiB); /* 64 - 8 (context) - 4 */
	CU_OK(cuMemFree_v2(p));
	CU_OK(cuMemAllocPitch_v2(&p, &pitch, 1024, 4097, 16)); /* just over 4 MiB: 3 pages */
	assert_int_equal(tlm_sim_used_pages(0), 3);
	CU_OK(cuMemFree_v2(p));
	assert_int_equal(cuMemAllocPitch_v2(&p, &pitch, 100, 10, 3), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAllocPitch_v2(&p, &pitch, 0, 10, 4), CUDA_ERROR_INVALID_VALUE);
}

static void test_managed_is_host_memory(void **state)
{
	(void)state;
	CUdeviceptr m;
	CU_OK(cuMemAllocManaged(&m, 3 * MiB, CU_MEM_ATTACH_GLOBAL));
	memset((void *)(uintptr_t)m, 0xab, 3 * MiB); /* the host can touch it */
	assert_int_equal(((unsigned char *)(uintptr_t)m)[3 * MiB - 1], 0xab);
	assert_int_equal(tlm_sim_used_pages(0), 0); /* not device memory */
	assert_int_equal(cuMemAllocManaged(&m, 1, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFree_v2(m));
	assert_int_equal(cuMemFree_v2(m), CUDA_ERROR_INVALID_VALUE);
}

static void test_host_memory(void **state)
{
	(void)state;
	void *h, *h2;
	long pg = sysconf(_SC_PAGESIZE);
	CU_OK(cuMemAllocHost_v2(&h, 10000));
	assert_int_equal((uintptr_t)h % (uintptr_t)pg, 0);
	memset(h, 1, 10000);
	CU_OK(cuMemHostAlloc(&h2, 1, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	assert_int_equal(cuMemHostAlloc(&h2, 1, 0x80), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFreeHost(h));
	assert_int_equal(cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(tlm_sim_used_pages(0), 0);
	CU_OK(cuMemFreeHost(h2));
}

static void test_second_device(void **state)
{
	(void)state;
	CUcontext c1, cur, popped;
	CUdeviceptr a, b;
	CUdevice d;
	CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
	CU_OK(cuCtxPushCurrent_v2(c1));
	CU_OK(cuCtxGetDevice(&d));
	assert_int_equal(d, 1);
	CU_OK(cuMemAlloc_v2(&a, PAGE));
	assert_int_equal(a, DEV_VA_BASE + DEV_VA_STRIDE);
	assert_int_equal(tlm_sim_used_pages(1), 1);
	assert_int_equal(tlm_sim_used_pages(0), 0);
	CU_OK(cuCtxPopCurrent_v2(&popped));
	assert_ptr_equal(popped, c1);
	CU_OK(cuMemAlloc_v2(&b, PAGE)); /* back on device 0 */
	assert_int_equal(b, DEV_VA_BASE);
	CU_OK(cuMemFree_v2(a)); /* any context may free any device's pointer */
	CU_OK(cuMemFree_v2(b));
	CU_OK(cuCtxGetCurrent(&cur));
	assert_non_null(cur);
	CU_OK(cuDevicePrimaryCtxRelease_v2(1));
	assert_int_equal(cuDevicePrimaryCtxRelease_v2(1), CUDA_ERROR_INVALID_CONTEXT);
}

static void test_created_context(void **state)
{
	(void)state;
	CUcontext c, prev, cur;
	CUdeviceptr p;
	CU_OK(cuCtxGetCurrent(&prev));
	CU_OK(cuCtxCreate_v2(&c, 0, 1));
	CU_OK(cuCtxGetCurrent(&cur));
	assert_ptr_equal(cur, c); /* created contexts become current */
	CU_OK(cuCtxDestroy_v2(c));
	CU_OK(cuCtxGetCurrent(&cur));
	assert_ptr_equal(cur, prev); /* and destroying pops them */
	assert_int_equal(cuCtxDestroy_v2(c), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxPushCurrent_v2(c), CUDA_ERROR_INVALID_CONTEXT);
	assert_int_equal(cuCtxDestroy_v2(prev), CUDA_ERROR_INVALID_CONTEXT); /* primary */
	CU_OK(cuCtxCreate_v4(&c, NULL, 0, 0));
	CU_OK(cuCtxSetCurrent(c)); /* replaces the top of the stack */
	CU_OK(cuMemAlloc_v2(&p, 1));
	CU_OK(cuMemFree_v2(p));
	CU_OK(cuCtxDestroy_v2(c));
	CU_OK(cuCtxGetCurrent(&cur));
	assert_ptr_equal(cur, prev);
}

static void *other_thread(void *arg)
{
	CUdeviceptr p;
	CUcontext cur = (CUcontext)1;
	(void)arg;
	if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != NULL)
		return (void *)1;
	return (void *)(uintptr_t)(cuMemAlloc_v2(&p, 1) != CUDA_ERROR_INVALID_CONTEXT);
}

static void test_context_is_thread_local(void **state)
{
	(void)state;
	pthread_t t;
	void *res;
	assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
}

static void test_streams(void **state)
{
	(void)state;
	CUstream s;
	CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU_OK(cuStreamSynchronize(s));
	CU_OK(cuStreamSynchronize_ptsz(NULL));
	CU_OK(cuStreamSynchronize(CU_STREAM_LEGACY));
	CU_OK(cuCtxSynchronize());
	CU_OK(cuStreamDestroy_v2(s));
	assert_int_equal(cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuStreamCreate(&s, 0x10), CUDA_ERROR_INVALID_VALUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_before_init),
		cmocka_unit_test_teardown(test_devices, sim_test_no_leak),
		cmocka_unit_test_teardown(test_zero_and_bad_args, sim_test_no_leak),
		cmocka_unit_test_teardown(test_meminfo, sim_test_no_leak),
		cmocka_unit_test_teardown(test_oom_only_when_pages_short, sim_test_no_leak),
		cmocka_unit_test_teardown(test_freed_range_reused, sim_test_no_leak),
		cmocka_unit_test_teardown(test_double_free, sim_test_no_leak),
		cmocka_unit_test_teardown(test_fragmented_va_big_alloc, sim_test_no_leak),
		cmocka_unit_test_teardown(test_pitch, sim_test_no_leak),
		cmocka_unit_test_teardown(test_managed_is_host_memory, sim_test_no_leak),
		cmocka_unit_test_teardown(test_host_memory, sim_test_no_leak),
		cmocka_unit_test_teardown(test_second_device, sim_test_no_leak),
		cmocka_unit_test_teardown(test_created_context, sim_test_no_leak),
		cmocka_unit_test_teardown(test_context_is_thread_local, sim_test_no_leak),
		cmocka_unit_test_teardown(test_streams, sim_test_no_leak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
