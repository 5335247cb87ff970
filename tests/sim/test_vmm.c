// SPDX-License-Identifier: MIT
/* VMM accounting: physical pages belong to handles and return to the device
 * only once a handle is released AND unmapped everywhere. TLM_SIM_MEMORY=64M. */
#include "sim_test.h"

#define VMM_VA_BASE 0x400000000000ull

static CUmemAllocationProp prop_on(int dev)
{
	CUmemAllocationProp p = {0};
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = dev;
	return p;
}

static void test_granularity(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(0);
	size_t g = 0;
	CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	assert_int_equal(g, PAGE);
	CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	assert_int_equal(g, PAGE);
	prop.location.id = 9;
	assert_int_equal(cuMemGetAllocationGranularity(&g, &prop, 0), CUDA_ERROR_INVALID_DEVICE);
}

static void test_create_release(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(1);
	CUmemGenericAllocationHandle h1, h2;
	assert_int_equal(cuMemCreate(&h1, PAGE + 1, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemCreate(&h1, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemCreate(&h1, 4 * PAGE, &prop, 0));
	CU_OK(cuMemCreate(&h2, PAGE, &prop, 0));
	assert_true(h1 != 0 && h2 != 0 && h1 != h2);
	assert_int_equal(tlm_sim_used_pages(1), 5);
	assert_int_equal(tlm_sim_used_pages(0), 0);
	CU_OK(cuMemRelease(h1));
	assert_int_equal(tlm_sim_used_pages(1), 1);
	assert_int_equal(cuMemRelease(h1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemRelease(h2));
	assert_int_equal(cuMemRelease(12345), CUDA_ERROR_INVALID_VALUE);
}

static void test_handles_count_toward_oom(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(0);
	CUmemGenericAllocationHandle h, h2;
	CUdeviceptr p;
	CU_OK(cuMemCreate(&h, 64 * MiB - CTX_COST, &prop, 0)); /* all the context leaves */
	assert_int_equal(cuMemAlloc_v2(&p, 1), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(cuMemCreate(&h2, PAGE, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	CU_OK(cuMemRelease(h));
	CU_OK(cuMemAlloc_v2(&p, 1));
	CU_OK(cuMemFree_v2(p));
}

static void test_reserve_map_unmap(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(0);
	CUmemAccessDesc acc = {.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0},
			       .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUmemGenericAllocationHandle h;
	CUdeviceptr va, va2;
	size_t f, t;
	CU_OK(cuMemAddressReserve(&va, 8 * PAGE, 0, 0, 0));
	assert_true(va >= VMM_VA_BASE); /* its own region, not device VA */
	assert_int_equal(tlm_sim_used_pages(0), 0); /* VA only */
	CU_OK(cuMemCreate(&h, 2 * PAGE, &prop, 0));
	CU_OK(cuMemGetInfo_v2(&f, &t));
	assert_int_equal(f, 52 * MiB); /* 64 - 8 (context) - 4 */

	assert_int_equal(cuMemSetAccess(va, 2 * PAGE, &acc, 1), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemMap(va, 2 * PAGE, 0, h, 0));
	assert_int_equal(cuMemMap(va, 2 * PAGE, 0, h, 0), CUDA_ERROR_ALREADY_MAPPED);
	assert_int_equal(cuMemMap(va + PAGE, PAGE, 0, h, 0), CUDA_ERROR_ALREADY_MAPPED);
	/* outside any reservation, past the handle's end, misaligned */
	assert_int_equal(cuMemMap(va + 8 * PAGE, PAGE, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemMap(va + 7 * PAGE, 2 * PAGE, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemMap(va + 4 * PAGE, PAGE, 2 * PAGE, h, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemMap(va + 4 * PAGE, PAGE, 1, h, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemSetAccess(va, 2 * PAGE, &acc, 1));
	CU_OK(cuMemSetAccess(va + PAGE, PAGE, &acc, 1));
	assert_int_equal(cuMemSetAccess(va, 3 * PAGE, &acc, 1), CUDA_ERROR_INVALID_VALUE);

	/* the same handle mapped a second time, part of it, elsewhere */
	CU_OK(cuMemMap(va + 4 * PAGE, PAGE, PAGE, h, 0));
	/* released while mapped: pages stay in use */
	CU_OK(cuMemRelease(h));
	assert_int_equal(tlm_sim_used_pages(0), 2);
	assert_int_equal(cuMemMap(va + 6 * PAGE, PAGE, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemUnmap(va, PAGE), CUDA_ERROR_INVALID_VALUE); /* half a mapping */
	assert_int_equal(cuMemAddressFree(va, 8 * PAGE), CUDA_ERROR_INVALID_VALUE); /* mapped */
	CU_OK(cuMemUnmap(va, 2 * PAGE));
	assert_int_equal(tlm_sim_used_pages(0), 2); /* one mapping left */
	assert_int_equal(cuMemUnmap(va, 2 * PAGE), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemUnmap(va + 4 * PAGE, PAGE));
	assert_int_equal(tlm_sim_used_pages(0), 0); /* released and unmapped */

	assert_int_equal(cuMemAddressFree(va, 4 * PAGE), CUDA_ERROR_INVALID_VALUE); /* wrong size */
	CU_OK(cuMemAddressFree(va, 8 * PAGE));
	assert_int_equal(cuMemAddressFree(va, 8 * PAGE), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemAddressReserve(&va2, 8 * PAGE, 0, 0, 0));
	assert_int_equal(va2, va); /* reservations reuse the lowest free range too */
	CU_OK(cuMemAddressFree(va2, 8 * PAGE));
}

static void test_unmap_then_release(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(0);
	CUmemGenericAllocationHandle h1, h2;
	CUdeviceptr va;
	CU_OK(cuMemAddressReserve(&va, 4 * PAGE, 0, 0, 0));
	CU_OK(cuMemCreate(&h1, PAGE, &prop, 0));
	CU_OK(cuMemCreate(&h2, PAGE, &prop, 0));
	CU_OK(cuMemMap(va, PAGE, 0, h1, 0));
	CU_OK(cuMemMap(va + PAGE, PAGE, 0, h2, 0));
	CU_OK(cuMemUnmap(va, 2 * PAGE)); /* two adjacent mappings at once */
	assert_int_equal(tlm_sim_used_pages(0), 2); /* unmapped, not released */
	CU_OK(cuMemRelease(h1));
	assert_int_equal(tlm_sim_used_pages(0), 1);
	CU_OK(cuMemRelease(h2));
	CU_OK(cuMemAddressFree(va, 4 * PAGE));
}

static void test_reserve_alignment_and_hint(void **state)
{
	(void)state;
	CUdeviceptr a, b, c;
	CU_OK(cuMemAddressReserve(&a, PAGE, 0, 0, 0));
	CU_OK(cuMemAddressReserve(&b, PAGE, 64 * MiB, 0, 0));
	assert_int_equal(b % (64 * MiB), 0);
	assert_true(b != a);
	CU_OK(cuMemAddressReserve(&c, PAGE, 0, a + 8 * PAGE, 0));
	assert_int_equal(c, a + 8 * PAGE); /* a free hint is honoured */
	CU_OK(cuMemAddressFree(c, PAGE));
	CU_OK(cuMemAddressReserve(&c, PAGE, 0, a, 0)); /* a taken hint is not */
	assert_true(c != a);
	assert_int_equal(cuMemAddressReserve(&c, PAGE + 1, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAddressReserve(&c, PAGE, 3 * PAGE, 0, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemAddressFree(a, PAGE));
	CU_OK(cuMemAddressFree(b, PAGE));
	CU_OK(cuMemAddressFree(c, PAGE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_granularity, sim_test_no_leak),
		cmocka_unit_test_teardown(test_create_release, sim_test_no_leak),
		cmocka_unit_test_teardown(test_handles_count_toward_oom, sim_test_no_leak),
		cmocka_unit_test_teardown(test_reserve_map_unmap, sim_test_no_leak),
		cmocka_unit_test_teardown(test_unmap_then_release, sim_test_no_leak),
		cmocka_unit_test_teardown(test_reserve_alignment_and_hint, sim_test_no_leak),
	};
	return cmocka_run_group_tests(tests, sim_test_setup_dev0, NULL);
}
