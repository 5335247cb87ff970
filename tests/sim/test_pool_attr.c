// SPDX-License-Identifier: MIT
/* Pool attributes (sim_pool.c) as PyTorch uses them: the release threshold is kept and a
 * synchronise trims down to it; reserved/used figures and their high marks
 * are exact and resettable; bad attributes and handles are rejected; graph
 * memory (sim_graph_mem.c) is all zeros. TLM_SIM_MEMORY=64M. */
#include "sim_test.h"

/* Not in sim_driver.h: the attribute argument is CUmemPool_attribute. */
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuDeviceGetGraphMemAttribute(CUdevice device, int attr, void *value);

static uint64_t get(CUmemoryPool p, int attr)
{
	uint64_t v = 12345;
	CU_OK(cuMemPoolGetAttribute(p, attr, &v));
	return v;
}

static void test_threshold_and_figures(void **state)
{
	(void)state;
	CUmemoryPool pool;
	CU_OK(cuDeviceGetDefaultMemPool(&pool, 0));
	assert_int_equal(get(pool, 4), 0); /* release threshold, default 0 */
	uint64_t keep = 6 * MiB;
	CU_OK(cuMemPoolSetAttribute(pool, 4, &keep));
	assert_int_equal(get(pool, 4), 6 * MiB);
	CUdeviceptr a, b;
	CU_OK(cuMemAllocAsync(&a, 4 * MiB, NULL));
	CU_OK(cuMemAllocAsync(&b, 3 * MiB, NULL)); /* 2 pages */
	assert_int_equal(get(pool, 5), 8 * MiB);   /* reserved current */
	assert_int_equal(get(pool, 7), 8 * MiB);   /* used current */
	CU_OK(cuMemFreeAsync(a, NULL));
	CU_OK(cuMemFreeAsync(b, NULL));
	assert_int_equal(get(pool, 7), 0);
	assert_int_equal(get(pool, 8), 8 * MiB);   /* used high */
	/* a synchronise keeps at least the threshold: the 4 MiB block goes
	 * (8 - 4 >= 6 is false), so does nothing else: trim keeps >= 6 MiB */
	CU_OK(cuStreamSynchronize(NULL));
	assert_int_equal(get(pool, 5), 8 * MiB);
	keep = 4 * MiB;
	CU_OK(cuMemPoolSetAttribute(pool, 4, &keep));
	CU_OK(cuStreamSynchronize(NULL));
	assert_int_equal(get(pool, 5), 4 * MiB); /* the 4 MiB block went, largest first */
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 4 * MiB);
	/* high marks reset to the current figures with 0; nothing else is settable */
	uint64_t zero = 0, one = 1;
	CU_OK(cuMemPoolSetAttribute(pool, 6, &zero));
	CU_OK(cuMemPoolSetAttribute(pool, 8, &zero));
	assert_int_equal(get(pool, 6), 4 * MiB);
	assert_int_equal(get(pool, 8), 0);
	assert_int_equal(cuMemPoolSetAttribute(pool, 6, &one), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemPoolSetAttribute(pool, 5, &zero), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemPoolGetAttribute(pool, 9, &one), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemPoolGetAttribute(NULL, 5, &one), CUDA_ERROR_INVALID_VALUE);
	/* reuse policies: on by default, stored */
	int on = 7, off = 0;
	CU_OK(cuMemPoolGetAttribute(pool, 2, &on));
	assert_int_equal(on, 1);
	CU_OK(cuMemPoolSetAttribute(pool, 2, &off));
	CU_OK(cuMemPoolGetAttribute(pool, 2, &on));
	assert_int_equal(on, 0);
	/* back to the default, cache returned */
	CU_OK(cuMemPoolSetAttribute(pool, 4, &zero));
	CU_OK(cuStreamSynchronize(NULL));
	assert_int_equal(tlm_sim_used_pages(0), 0);
	uint64_t g = 99;
	CU_OK(cuDeviceGetGraphMemAttribute(0, 2, &g));
	assert_int_equal(g, 0);
	assert_int_equal(cuDeviceGetGraphMemAttribute(0, 4, &g), CUDA_ERROR_INVALID_VALUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_and_figures),
	};
	return cmocka_run_group_tests(tests, sim_test_setup_dev0, NULL);
}
