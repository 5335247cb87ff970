/* SPDX-License-Identifier: MIT */
/*
 * steps_workload.h - what the training-step workload does (steps_workload.c),
 * shared with the test that checks the report of its trace (test_steps.c).
 *
 * Each step: SW_LAYERS layer_forward() calls, each allocating a hidden
 * tensor (SW_H) then its output (SW_O), kept to the backward pass; a loss
 * (SW_LOSS); a leaked record (LEAK bytes, argv[3]: never freed); then the
 * backward pass, which per layer, last first, allocates a gradient (SW_O)
 * and frees it with the layer's two tensors; the loss is freed last. The
 * peak of step j (0-based) is reached at the first gradient:
 *   live before the step + SW_ACT + SW_LOSS + LEAK + SW_O.
 */
#ifndef TLM_TEST_STEPS_WORKLOAD_H
#define TLM_TEST_STEPS_WORKLOAD_H

#define SW_WEIGHTS 4
#define SW_WEIGHT (1u << 20)
#define SW_LAYERS 6
#define SW_H (256u << 10)
#define SW_O (64u << 10)
#define SW_ACT ((unsigned long long)SW_LAYERS * (SW_H + SW_O))
#define SW_LOSS (4u << 10)
#define SW_OPT (512u << 10)          /* warmup: 4 optimizer-state tensors made in step 0 */
#define SW_OPT_N 4
#define SW_CACHE (128u << 10)        /* warmup: a cache entry in steps 0 and 1 */
#define SW_STEP_US 3000
#define SW_EVAL_STEPS 40             /* eval: after the loop, longer than it */
#define SW_EVAL_US 4000
#define SW_EVAL_EVERY 4              /* between: 3 eval steps after every 4th training step */

#endif
