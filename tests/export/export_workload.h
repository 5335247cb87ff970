/* SPDX-License-Identifier: MIT */
/*
 * export_workload.h - what the diff/export workload does, shared with the
 * tests that check `tlm diff` and the exports on its traces.
 *
 * `export_workload ITERS base|new`: load_model() keeps EW_WEIGHTS buffers
 * (live at end, not a leak); each iteration allocates and frees an
 * activation, keeps EW_LOSS bytes in keep_loss() (a leak in both runs) and,
 * in a "base" run, EW_OLD bytes in old_cache() (a leak gone in the new run)
 * or, in a "new" run, EW_NEW bytes in new_cache() (a new leak).
 */
#ifndef TLM_TEST_EXPORT_WORKLOAD_H
#define TLM_TEST_EXPORT_WORKLOAD_H

#define EW_WEIGHTS 2
#define EW_WEIGHT_SIZE (1u << 20)
#define EW_ACT_SIZE (256u << 10)
#define EW_LOSS 1024u
#define EW_OLD 2048u
#define EW_NEW 4096u
#define EW_ITER_US 1000
#define EW_BASE_ITERS 20
#define EW_NEW_ITERS 40

#endif
