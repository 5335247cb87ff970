/* SPDX-License-Identifier: MIT */
/*
 * report_workload.h - what the end-to-end report workload does, shared with
 * the test that checks the report of its trace.
 */
#ifndef TLM_TEST_REPORT_WORKLOAD_H
#define TLM_TEST_REPORT_WORKLOAD_H

#define RW_WEIGHTS 4                 /* load_model(): allocations kept to the end */
#define RW_WEIGHT_SIZE (8u << 20)
#define RW_ITERS 100                 /* training iterations */
#define RW_ACT_SIZE (4u << 20)       /* activation: allocated and freed every iteration */
#define RW_LOSS_SIZE 512u            /* record_loss(): allocated every iteration, never freed */
#define RW_OOM_SIZE (512u << 20)     /* larger than the device (TLM_SIM_MEMORY=256M) */
#define RW_ITER_US 2000              /* sleep per iteration: the loop dominates the run */
/* The line of the cudaMalloc call in record_loss() (checked at compile time). */
#define RW_LOSS_LINE 34

#endif
