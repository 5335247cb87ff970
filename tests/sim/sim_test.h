/* SPDX-License-Identifier: MIT */
/*
 * sim_test.h - shared helpers for the simulated driver's cmocka tests.
 *
 * Contract: include after the cmocka prerequisites. MiB/PAGE are byte sizes;
 * sim_test_ctx() initialises the driver and makes device `dev`'s primary
 * context current on the calling thread; sim_test_no_leak() is a teardown that
 * fails when a test left physical pages in use on any device.
 */
#ifndef TLM_SIM_TEST_H
#define TLM_SIM_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_driver.h"

#define MiB (1ull << 20)
#define PAGE (2 * MiB)
/* A live context's cost: TLM_SIM_CONTEXT_MEMORY's default, which the tests
 * run with; it is part of cuMemGetInfo's used memory, not of tlm_sim_used_pages. */
#define CTX_COST (8 * MiB)
#define DEV_VA_BASE 0x200000000000ull
#define DEV_VA_STRIDE 0x020000000000ull

#define CU_OK(call) assert_int_equal((call), CUDA_SUCCESS)

static inline void sim_test_ctx(int dev)
{
	CUcontext ctx;
	CU_OK(cuInit(0));
	CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU_OK(cuCtxSetCurrent(ctx));
}

static inline int sim_test_no_leak(void **state)
{
	(void)state;
	int n = 0;
	assert_int_equal(cuDeviceGetCount(&n), CUDA_SUCCESS);
	for (int d = 0; d < n; d++)
		assert_int_equal(tlm_sim_used_pages(d), 0);
	return 0;
}

static inline int sim_test_setup_dev0(void **state)
{
	(void)state;
	sim_test_ctx(0);
	return 0;
}

#endif
