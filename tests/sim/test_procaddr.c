// SPDX-License-Identifier: MIT
/* cuGetProcAddress resolution (versions, per-thread flavours, failure
 * statuses) and interposition safety: handed-out pointers and internal calls
 * are the simulator's own code even with an interposer linked first. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_test.h"

extern int interposer_calls;

static void *sim_handle;

static void *own(const char *abi_name)
{
	void *p = dlsym(sim_handle, abi_name);
	assert_non_null(p);
	return p;
}

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t,
			      CUdriverProcAddressQueryResult *);
static gpa_v2_fn gpa; /* the simulator's own cuGetProcAddress_v2 */

static void *lookup(const char *name, int version, cuuint64_t flags,
		    CUdriverProcAddressQueryResult expect_status, CUresult expect)
{
	void *fn = (void *)1;
	CUdriverProcAddressQueryResult st = 99;
	assert_int_equal(gpa(name, &fn, version, flags, &st), expect);
	assert_int_equal(st, expect_status);
	return fn;
}

static int setup(void **state)
{
	(void)state;
	unsetenv("CUDA_API_PER_THREAD_DEFAULT_STREAM");
	sim_handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(sim_handle);
	*(void **)&gpa = dlsym(sim_handle, "cuGetProcAddress_v2");
	assert_non_null(gpa);
	sim_test_ctx(0);
	return 0;
}

static void test_linkage_sanity(void **state)
{
	(void)state;
	/* the executable's references bind to the interposer... */
	assert_ptr_not_equal((void *)&cuMemAlloc_v2, own("cuMemAlloc_v2"));
	/* ...and dlsym on the library gives the library's own definition */
	assert_ptr_not_equal((void *)gpa, (void *)&cuGetProcAddress_v2);
}

static void test_version_selection(void **state)
{
	(void)state;
	const cuuint64_t L = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
	assert_ptr_equal(lookup("cuMemAlloc", 13000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuMemAlloc_v2"));
	assert_ptr_equal(lookup("cuMemAlloc", 3020, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuMemAlloc_v2"));
	assert_ptr_equal(lookup("cuMemFree", 12000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuMemFree_v2"));
	assert_ptr_equal(lookup("cuInit", 2000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0), own("cuInit"));
	assert_ptr_equal(lookup("cuCtxCreate", 11030, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuCtxCreate_v2"));
	assert_ptr_equal(lookup("cuCtxCreate", 12000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuCtxCreate_v3"));
	assert_ptr_equal(lookup("cuCtxCreate", 13000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuCtxCreate_v4"));
	assert_ptr_equal(lookup("cuCtxSynchronize", 12080, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuCtxSynchronize"));
	assert_ptr_equal(lookup("cuCtxSynchronize", 13000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuCtxSynchronize_v2"));
	assert_ptr_equal(lookup("cuDevicePrimaryCtxRelease", 11000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuDevicePrimaryCtxRelease_v2"));
	assert_ptr_equal(lookup("cuMemCreate", 10020, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuMemCreate"));
	assert_ptr_equal(lookup("cuGetProcAddress", 11030, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuGetProcAddress"));
	assert_ptr_equal(lookup("cuGetProcAddress", 12000, L, CU_GET_PROC_ADDRESS_SUCCESS, 0),
			 own("cuGetProcAddress_v2"));
}

static void test_failures(void **state)
{
	(void)state;
	const cuuint64_t L = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
	void *fn = (void *)1;
	assert_null(lookup("cuMemAlloc", 1000, L, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
			   CUDA_ERROR_NOT_FOUND));
	/* 3010 means the 32-bit cuMemAlloc of CUDA 2.0, which the simulator lacks */
	assert_null(lookup("cuMemAlloc", 3010, L, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
			   CUDA_ERROR_NOT_FOUND));
	assert_null(lookup("cuMemAllocAsync", 11010, L, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
			   CUDA_ERROR_NOT_FOUND));
	assert_null(lookup("cuGetProcAddress", 11020, L,
			   CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, CUDA_ERROR_NOT_FOUND));
	assert_null(lookup("cuBogus", 13000, L, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
			   CUDA_ERROR_NOT_FOUND));
	/* ABI names are not base names */
	assert_null(lookup("cuMemAlloc_v2", 13000, L, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
			   CUDA_ERROR_NOT_FOUND));
	assert_int_equal(gpa("cuMemAlloc", &fn, 13000, 7, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(gpa("cuMemAlloc", &fn, 13010, L, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(gpa(NULL, &fn, 13000, L, NULL), CUDA_ERROR_INVALID_VALUE);
}

static void test_per_thread_flavours(void **state)
{
	(void)state;
	const CUdriverProcAddressQueryResult OK = CU_GET_PROC_ADDRESS_SUCCESS;
	const cuuint64_t L = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
	const cuuint64_t T = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const cuuint64_t D = CU_GET_PROC_ADDRESS_DEFAULT;
	static const char *const names[][2] = {
		{"cuMemAllocAsync", "cuMemAllocAsync"},
		{"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync"},
		{"cuMemFreeAsync", "cuMemFreeAsync"},
		{"cuStreamSynchronize", "cuStreamSynchronize"},
	};
	char ptsz[64];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(ptsz, sizeof(ptsz), "%s_ptsz", names[i][1]);
		assert_ptr_equal(lookup(names[i][0], 13000, T, OK, 0), own(ptsz));
		assert_ptr_equal(lookup(names[i][0], 13000, L, OK, 0), own(names[i][1]));
		assert_ptr_equal(lookup(names[i][0], 13000, D, OK, 0), own(names[i][1]));
	}
	/* no per-thread flavour: the plain one */
	assert_ptr_equal(lookup("cuMemAlloc", 13000, T, OK, 0), own("cuMemAlloc_v2"));
	/* DEFAULT follows CUDA_API_PER_THREAD_DEFAULT_STREAM */
	setenv("CUDA_API_PER_THREAD_DEFAULT_STREAM", "1", 1);
	assert_ptr_equal(lookup("cuMemAllocAsync", 13000, D, OK, 0), own("cuMemAllocAsync_ptsz"));
	assert_ptr_equal(lookup("cuMemAllocAsync", 13000, L, OK, 0), own("cuMemAllocAsync"));
	unsetenv("CUDA_API_PER_THREAD_DEFAULT_STREAM");
	assert_ptr_equal(lookup("cuMemAllocAsync", 13000, D, OK, 0), own("cuMemAllocAsync"));
}

static void test_v1_signature(void **state)
{
	(void)state;
	CUresult (*v1)(const char *, void **, int, cuuint64_t);
	void *fn = NULL;
	*(void **)&v1 = own("cuGetProcAddress");
	assert_int_equal(v1("cuMemGetInfo", &fn, 12000, 0), CUDA_SUCCESS);
	assert_ptr_equal(fn, own("cuMemGetInfo_v2"));
	assert_int_equal(v1("cuNothing", &fn, 12000, 0), CUDA_ERROR_NOT_FOUND);
	assert_null(fn);
}

/* Entry points reached through the simulator's pointers, including ones that
 * call other entry points internally, never reach the interposer. */
static void test_internal_calls_not_interposed(void **state)
{
	(void)state;
	CUresult (*alloc_host)(void **, size_t);
	CUresult (*free_host)(void *);
	CUresult (*ctx_get_device)(CUdevice *);
	CUresult (*ctx_sync)(void);
	CUresult (*stream_sync_ptsz)(CUstream);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*mfree)(CUdeviceptr);
	CUresult (*v1)(const char *, void **, int, cuuint64_t);
	void *h, *fn;
	CUdevice d;
	CUdeviceptr p;

	*(void **)&alloc_host = lookup("cuMemAllocHost", 13000, 0, CU_GET_PROC_ADDRESS_SUCCESS, 0);
	*(void **)&free_host = lookup("cuMemFreeHost", 13000, 0, CU_GET_PROC_ADDRESS_SUCCESS, 0);
	*(void **)&ctx_get_device = lookup("cuCtxGetDevice", 12000, 0, CU_GET_PROC_ADDRESS_SUCCESS, 0);
	*(void **)&ctx_sync = lookup("cuCtxSynchronize", 12000, 0, CU_GET_PROC_ADDRESS_SUCCESS, 0);
	*(void **)&stream_sync_ptsz =
		lookup("cuStreamSynchronize", 13000, 2, CU_GET_PROC_ADDRESS_SUCCESS, 0);
	*(void **)&alloc = lookup("cuMemAlloc", 13000, 0, CU_GET_PROC_ADDRESS_SUCCESS, 0);
	*(void **)&mfree = lookup("cuMemFree", 13000, 0, CU_GET_PROC_ADDRESS_SUCCESS, 0);
	*(void **)&v1 = own("cuGetProcAddress");

	int before = interposer_calls;
	CU_OK(alloc_host(&h, 100));
	CU_OK(free_host(h));
	CU_OK(ctx_get_device(&d));
	CU_OK(ctx_sync());
	CU_OK(stream_sync_ptsz(NULL));
	CU_OK(alloc(&p, 1));
	CU_OK(mfree(p));
	CU_OK(v1("cuMemAlloc", &fn, 13000, 0));
	assert_int_equal(interposer_calls, before);

	/* whereas the executable's own call does go through the interposer */
	CU_OK(cuMemAlloc_v2(&p, 1));
	CU_OK(cuMemFree_v2(p));
	assert_int_equal(interposer_calls, before + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linkage_sanity),
		cmocka_unit_test(test_version_selection),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_per_thread_flavours),
		cmocka_unit_test(test_v1_signature),
		cmocka_unit_test_teardown(test_internal_calls_not_interposed, sim_test_no_leak),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
