// SPDX-License-Identifier: MIT
/* The libcudart.so.13 double: loads the simulated driver only through
 * dlopen + cuGetProcAddress_v2, and implements the runtime calls on it.
 * Linked against the runtime double alone. TLM_SIM_MEMORY=64M. */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_runtime.h"

#define MiB (1ull << 20)
/* free with nothing allocated: the primary context holds 8 MiB (the default
 * TLM_SIM_CONTEXT_MEMORY) of the 64 */
#define FREE0 (56 * MiB)
#define DEV_VA_BASE 0x200000000000ull
#define DEV_VA_STRIDE 0x020000000000ull
#define RT_OK(call) assert_int_equal((call), cudaSuccess)

static void *driver(void)
{
	return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
}

static void *own(const char *abi_name)
{
	void *h = driver(), *p;
	assert_non_null(h);
	p = dlsym(h, abi_name);
	dlclose(h);
	assert_non_null(p);
	return p;
}

static size_t free_bytes(void)
{
	size_t f, t;
	RT_OK(cudaMemGetInfo(&f, &t));
	assert_int_equal(t, 64 * MiB);
	return f;
}

static void test_lazy_dlopen(void **state)
{
	(void)state;
	int n = 0, v = 0;
	assert_null(driver()); /* not a link-time dependency */
	RT_OK(cudaRuntimeGetVersion(&v));
	assert_int_equal(v, 13000);
	assert_null(driver()); /* and cudaRuntimeGetVersion needs no driver */
	RT_OK(cudaGetDeviceCount(&n));
	assert_int_equal(n, 2);
	void *h = driver();
	assert_non_null(h);
	dlclose(h);
	RT_OK(cudaDriverGetVersion(&v));
	assert_int_equal(v, 13000);
}

static void test_malloc_free(void **state)
{
	(void)state;
	void *p, *q;
	RT_OK(cudaMalloc(&p, 3 * MiB));
	assert_int_equal((uintptr_t)p, DEV_VA_BASE);
	assert_int_equal(free_bytes(), FREE0 - 4 * MiB);
	RT_OK(cudaFree(p));
	RT_OK(cudaMalloc(&q, 3 * MiB));
	assert_ptr_equal(q, p);
	RT_OK(cudaFree(q));
	RT_OK(cudaFree(NULL));
	RT_OK(cudaMalloc(&p, 0));
	assert_null(p);
	assert_int_equal(free_bytes(), FREE0);
	assert_int_equal(cudaFree((void *)0x1000), cudaErrorInvalidValue);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
}

static void test_oom_and_last_error(void **state)
{
	(void)state;
	void *p;
	assert_int_equal(cudaGetLastError(), cudaSuccess);
	assert_int_equal(cudaMalloc(&p, 65 * MiB), cudaErrorMemoryAllocation);
	assert_int_equal(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
	assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
	assert_int_equal(cudaGetLastError(), cudaSuccess);
	assert_string_equal(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
	assert_string_equal(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
}

static void test_pitch_and_3d(void **state)
{
	(void)state;
	void *p;
	size_t pitch;
	struct cudaPitchedPtr pp;
	struct cudaExtent ext = {100, 10, 4};
	RT_OK(cudaMallocPitch(&p, &pitch, 100, 10));
	assert_int_equal(pitch, 512);
	RT_OK(cudaFree(p));
	RT_OK(cudaMalloc3D(&pp, ext));
	assert_int_equal(pp.pitch, 512);
	assert_int_equal(pp.xsize, 100);
	assert_int_equal(pp.ysize, 10);
	assert_int_equal(free_bytes(), FREE0 - 2 * MiB);
	RT_OK(cudaFree(pp.ptr));
	ext = (struct cudaExtent){1000, 1024, 3}; /* 1024 * 3072 = 3 MiB: 2 pages */
	RT_OK(cudaMalloc3D(&pp, ext));
	assert_int_equal(pp.pitch, 1024);
	assert_int_equal(free_bytes(), FREE0 - 4 * MiB);
	RT_OK(cudaFree(pp.ptr));
}

static void test_host_and_managed(void **state)
{
	(void)state;
	void *h, *m;
	RT_OK(cudaMallocHost(&h, 4096));
	memset(h, 1, 4096);
	RT_OK(cudaFreeHost(h));
	RT_OK(cudaHostAlloc(&h, 10, cudaHostAllocDefault));
	RT_OK(cudaFreeHost(h));
	RT_OK(cudaMallocManaged(&m, 1000, cudaMemAttachGlobal));
	memset(m, 2, 1000);
	assert_int_equal(free_bytes(), FREE0);
	RT_OK(cudaFree(m));
}

static void test_async_and_pools(void **state)
{
	(void)state;
	void *a, *b;
	cudaStream_t s;
	cudaMemPool_t def, pool;
	CUmemPoolProps props = {0};
	RT_OK(cudaStreamCreate(&s));
	RT_OK(cudaMallocAsync(&a, MiB, s));
	RT_OK(cudaFreeAsync(a, s));
	assert_int_equal(free_bytes(), FREE0 - 2 * MiB); /* cached by the default pool */
	RT_OK(cudaMallocAsync_ptsz(&b, MiB, NULL));
	assert_ptr_equal(b, a);
	RT_OK(cudaFreeAsync_ptsz(b, NULL));
	RT_OK(cudaStreamSynchronize(s));
	assert_int_equal(free_bytes(), FREE0);
	RT_OK(cudaDeviceGetDefaultMemPool(&def, 0));
	RT_OK(cudaMallocFromPoolAsync(&a, MiB, def, s));
	RT_OK(cudaFreeAsync(a, s));
	RT_OK(cudaMemPoolTrimTo(def, 0));
	assert_int_equal(free_bytes(), FREE0);

	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	RT_OK(cudaMemPoolCreate(&pool, &props));
	RT_OK(cudaMallocFromPoolAsync_ptsz(&a, 5 * MiB, pool, s));
	RT_OK(cudaFreeAsync(a, s));
	assert_int_equal(free_bytes(), FREE0 - 6 * MiB);
	RT_OK(cudaDeviceSynchronize());
	assert_int_equal(free_bytes(), FREE0);
	RT_OK(cudaMemPoolDestroy(pool));
	assert_int_equal(cudaMemPoolDestroy(def), cudaErrorInvalidValue);
	RT_OK(cudaStreamDestroy(s));
	(void)cudaGetLastError();
}

static void *thread_device(void *arg)
{
	int d = -1;
	(void)arg;
	cudaGetDevice(&d);
	return (void *)(intptr_t)d;
}

static void test_set_device(void **state)
{
	(void)state;
	void *p, *res;
	int d;
	pthread_t t;
	RT_OK(cudaSetDevice(1));
	RT_OK(cudaGetDevice(&d));
	assert_int_equal(d, 1);
	RT_OK(cudaMalloc(&p, 1));
	assert_int_equal((uintptr_t)p, DEV_VA_BASE + DEV_VA_STRIDE);
	/* the device is per thread */
	assert_int_equal(pthread_create(&t, NULL, thread_device, NULL), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_int_equal((intptr_t)res, 0);
	RT_OK(cudaFree(p));
	assert_int_equal(cudaSetDevice(2), cudaErrorInvalidDevice);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
	RT_OK(cudaSetDevice(0));
}

static void test_driver_entry_points(void **state)
{
	(void)state;
	void *fn;
	enum cudaDriverEntryPointQueryResult st;
	RT_OK(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &st));
	assert_int_equal(st, cudaDriverEntryPointSuccess);
	assert_ptr_equal(fn, own("cuMemAlloc_v2"));
	RT_OK(cudaGetDriverEntryPoint("cuMemAllocAsync", &fn, cudaEnableDefault, &st));
	assert_ptr_equal(fn, own("cuMemAllocAsync"));
	RT_OK(cudaGetDriverEntryPoint_ptsz("cuMemAllocAsync", &fn, cudaEnableDefault, &st));
	assert_ptr_equal(fn, own("cuMemAllocAsync_ptsz"));
	RT_OK(cudaGetDriverEntryPoint_ptsz("cuMemAllocAsync", &fn, cudaEnableLegacyStream, &st));
	assert_ptr_equal(fn, own("cuMemAllocAsync"));
	RT_OK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 1000, cudaEnableDefault, &st));
	assert_int_equal(st, cudaDriverEntryPointVersionNotSufficent);
	assert_null(fn);
	RT_OK(cudaGetDriverEntryPointByVersion("cuNope", &fn, 12000, cudaEnableDefault, &st));
	assert_int_equal(st, cudaDriverEntryPointSymbolNotFound);
	assert_null(fn);
	RT_OK(cudaGetDriverEntryPointByVersion_ptsz("cuMemFreeAsync", &fn, 12000,
						    cudaEnableDefault, &st));
	assert_ptr_equal(fn, own("cuMemFreeAsync_ptsz"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_dlopen),
		cmocka_unit_test(test_malloc_free),
		cmocka_unit_test(test_oom_and_last_error),
		cmocka_unit_test(test_pitch_and_3d),
		cmocka_unit_test(test_host_and_managed),
		cmocka_unit_test(test_async_and_pools),
		cmocka_unit_test(test_set_device),
		cmocka_unit_test(test_driver_entry_points),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
