// SPDX-License-Identifier: MIT
/* Stream-ordered pools: caching of freed blocks, reuse, trim accounting,
 * release at synchronisation, self-trim before OOM. TLM_SIM_MEMORY=64M. */
#include "sim_test.h"

static CUmemoryPool default_pool(int dev)
{
	CUmemoryPool p;
	CU_OK(cuDeviceGetDefaultMemPool(&p, dev));
	return p;
}

static void test_cache_and_reuse(void **state)
{
	(void)state;
	CUmemoryPool pool = default_pool(0);
	CUdeviceptr a, b;
	size_t f, t;
	CU_OK(cuMemAllocAsync(&a, 4 * MiB, NULL));
	assert_int_equal(tlm_sim_used_pages(0), 2);
	CU_OK(cuMemFreeAsync(a, NULL));
	/* cached: still used on the device, visible in cuMemGetInfo */
	assert_int_equal(tlm_sim_used_pages(0), 2);
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 4 * MiB);
	CU_OK(cuMemGetInfo_v2(&f, &t));
	assert_int_equal(f, 52 * MiB); /* 64 - 8 (context) - 4 cached */
	/* a smaller request fits the cached block: same address, no new pages */
	CU_OK(cuMemAllocAsync(&b, 1 * MiB, NULL));
	assert_int_equal(b, a);
	assert_int_equal(tlm_sim_used_pages(0), 2);
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 2 * MiB); /* the split-off rest */
	CU_OK(cuMemFreeAsync(b, NULL));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 4 * MiB);
	/* synchronisation returns everything (release threshold 0) */
	CU_OK(cuStreamSynchronize(NULL));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 0);
	assert_int_equal(tlm_sim_used_pages(0), 0);
	/* and via cuCtxSynchronize */
	CU_OK(cuMemAllocAsync_ptsz(&a, PAGE, NULL));
	CU_OK(cuMemFreeAsync_ptsz(a, NULL));
	assert_int_equal(tlm_sim_used_pages(0), 1);
	CU_OK(cuCtxSynchronize());
	assert_int_equal(tlm_sim_used_pages(0), 0);
}

static void test_trim_to(void **state)
{
	(void)state;
	CUmemoryPool pool = default_pool(0);
	CUdeviceptr a, b, c, d;
	CU_OK(cuMemAllocAsync(&a, 2 * MiB, NULL));
	CU_OK(cuMemAllocAsync(&b, 4 * MiB, NULL));
	CU_OK(cuMemAllocAsync(&c, 8 * MiB, NULL));
	CU_OK(cuMemAllocAsync(&d, 2 * MiB, NULL)); /* stays allocated */
	CU_OK(cuMemFreeAsync(a, NULL));
	CU_OK(cuMemFreeAsync(b, NULL));
	CU_OK(cuMemFreeAsync(c, NULL));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 14 * MiB);
	assert_int_equal(tlm_sim_used_pages(0), 8);
	/* reserved = 16 MiB; keep >= 10 MiB: dropping the 8 MiB block would leave
	 * 8, so only the 4 MiB block (-> 12) and then the 2 MiB one (-> 10) go */
	CU_OK(cuMemPoolTrimTo(pool, 10 * MiB));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 8 * MiB);
	assert_int_equal(tlm_sim_used_pages(0), 5);
	CU_OK(cuMemPoolTrimTo(pool, 100 * MiB)); /* more than reserved: no-op */
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 8 * MiB);
	CU_OK(cuMemPoolTrimTo(pool, 0));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 0);
	assert_int_equal(tlm_sim_used_pages(0), 1); /* d only */
	CU_OK(cuMemFreeAsync(d, NULL));
	CU_OK(cuMemPoolTrimTo(pool, 0));
}

static void test_pool_trims_itself_before_oom(void **state)
{
	(void)state;
	CUmemoryPool pool = default_pool(0);
	/* 26 of the 28 pages the context leaves, so 2 stay free */
	CUdeviceptr p[26], big, plain;
	for (int i = 0; i < 26; i++)
		CU_OK(cuMemAllocAsync(&p[i], PAGE, NULL));
	for (int i = 0; i < 26; i++)
		CU_OK(cuMemFreeAsync(p[i], NULL));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 52 * MiB);
	/* a plain allocation does not raid the pool: the cache is really held */
	assert_int_equal(cuMemAlloc_v2(&plain, 8 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	/* the pool itself gives its one-page blocks back and retries */
	CU_OK(cuMemAllocAsync(&big, 8 * MiB, NULL));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 0);
	assert_int_equal(tlm_sim_used_pages(0), 4);
	CU_OK(cuMemFree_v2(big)); /* cuMemFree on pool memory returns it to the pool */
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 8 * MiB);
	CU_OK(cuMemPoolTrimTo(pool, 0));
}

static CUmemPoolProps props_on(int dev, size_t max)
{
	CUmemPoolProps pp = {0};
	pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	pp.location.id = dev;
	pp.maxSize = max;
	return pp;
}

static void test_created_pool(void **state)
{
	(void)state;
	CUmemPoolProps pp = props_on(1, 0);
	CUmemoryPool pool, other;
	CUdeviceptr a, b, live;
	CU_OK(cuMemPoolCreate(&pool, &pp));
	CU_OK(cuMemAllocFromPoolAsync(&a, 3 * MiB, pool, NULL));
	assert_true(a >= DEV_VA_BASE + DEV_VA_STRIDE); /* device 1's VA */
	assert_int_equal(tlm_sim_used_pages(1), 2);
	CU_OK(cuMemFreeAsync(a, NULL));
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), 4 * MiB);
	/* another pool does not see this pool's cache */
	CU_OK(cuMemPoolCreate(&other, &pp));
	CU_OK(cuMemAllocFromPoolAsync_ptsz(&b, 4 * MiB, other, NULL));
	assert_true(b != a);
	assert_int_equal(tlm_sim_used_pages(1), 4);
	CU_OK(cuMemFreeAsync(b, NULL));
	CU_OK(cuMemPoolDestroy(other)); /* cached memory goes back */
	assert_int_equal(tlm_sim_used_pages(1), 2);
	/* destroy with a live allocation: it returns to the device when freed */
	CU_OK(cuMemAllocFromPoolAsync(&live, 4 * MiB, pool, NULL));
	assert_int_equal(live, a);
	CU_OK(cuMemPoolDestroy(pool));
	assert_int_equal(tlm_sim_used_pages(1), 2);
	assert_int_equal(cuMemAllocFromPoolAsync(&b, 1, pool, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemPoolTrimTo(pool, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(tlm_sim_pool_cached_bytes(pool), -1);
	CU_OK(cuMemFreeAsync(live, NULL));
	assert_int_equal(tlm_sim_used_pages(1), 0);
	assert_int_equal(cuMemPoolDestroy(default_pool(0)), CUDA_ERROR_INVALID_VALUE);
	pp.location.id = 7;
	assert_int_equal(cuMemPoolCreate(&pool, &pp), CUDA_ERROR_INVALID_DEVICE);
}

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count);
CUresult cuMemPoolGetAccess(int *flags, CUmemoryPool pool, const CUmemAccessDesc *loc);

/* Access from other devices: read back as set; the pool's own device stays
 * read-write; bad locations and flags are refused, nothing half-applied. */
static void test_access(void **state)
{
	(void)state;
	CUmemPoolProps pp = props_on(0, 0);
	CUmemoryPool pool;
	int fl = -1;
	CU_OK(cuMemPoolCreate(&pool, &pp));
	CUmemAccessDesc d[2] = {{.location = {.type = 1, .id = 1}, .flags = 3},
				{.location = {.type = 1, .id = 0}, .flags = 1}};
	CU_OK(cuMemPoolGetAccess(&fl, pool, &d[1]));
	assert_int_equal(fl, 3); /* its own device */
	CU_OK(cuMemPoolGetAccess(&fl, pool, &d[0]));
	assert_int_equal(fl, 0); /* another device: none until set */
	assert_int_equal(cuMemPoolSetAccess(pool, d, 2), CUDA_ERROR_INVALID_VALUE); /* own device RO */
	CU_OK(cuMemPoolGetAccess(&fl, pool, &d[0]));
	assert_int_equal(fl, 0); /* nothing applied */
	CU_OK(cuMemPoolSetAccess(pool, d, 1));
	CU_OK(cuMemPoolGetAccess(&fl, pool, &d[0]));
	assert_int_equal(fl, 3);
	d[0].location.id = 9;
	assert_int_equal(cuMemPoolSetAccess(pool, d, 1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemPoolDestroy(pool));
	assert_int_equal(cuMemPoolGetAccess(&fl, pool, &d[1]), CUDA_ERROR_INVALID_VALUE);
}

static void test_pool_max_size(void **state)
{
	(void)state;
	CUmemPoolProps pp = props_on(0, 4 * MiB);
	CUmemoryPool pool;
	CUdeviceptr a, b;
	CU_OK(cuMemPoolCreate(&pool, &pp));
	CU_OK(cuMemAllocFromPoolAsync(&a, 4 * MiB, pool, NULL));
	assert_int_equal(cuMemAllocFromPoolAsync(&b, 1, pool, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(cuMemFreeAsync(a, NULL));
	CU_OK(cuMemPoolDestroy(pool));
}

static void test_async_args(void **state)
{
	(void)state;
	CUdeviceptr a, m;
	CUstream s;
	assert_int_equal(cuMemAllocAsync(&a, 0, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAllocFromPoolAsync(&a, 1, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemFreeAsync(0x42, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAllocAsync(&a, 1, (CUstream)0x1000), CUDA_ERROR_INVALID_HANDLE);
	/* a plain allocation freed stream-ordered goes straight back to the device */
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuMemAlloc_v2(&a, 1));
	CU_OK(cuMemFreeAsync(a, s));
	assert_int_equal(tlm_sim_used_pages(0), 0);
	/* managed memory cannot be freed stream-ordered */
	CU_OK(cuMemAllocManaged(&m, 1, CU_MEM_ATTACH_GLOBAL));
	assert_int_equal(cuMemFreeAsync(m, s), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFree_v2(m));
	CU_OK(cuStreamDestroy_v2(s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cache_and_reuse, sim_test_no_leak),
		cmocka_unit_test_teardown(test_trim_to, sim_test_no_leak),
		cmocka_unit_test_teardown(test_pool_trims_itself_before_oom, sim_test_no_leak),
		cmocka_unit_test_teardown(test_created_pool, sim_test_no_leak),
		cmocka_unit_test_teardown(test_pool_max_size, sim_test_no_leak),
		cmocka_unit_test_teardown(test_access, sim_test_no_leak),
		cmocka_unit_test_teardown(test_async_args, sim_test_no_leak),
	};
	return cmocka_run_group_tests(tests, sim_test_setup_dev0, NULL);
}
