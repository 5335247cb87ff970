/* SPDX-License-Identifier: MIT */
/*
 * cmd_run_simulate.h - `tlm run --simulate`, called from cmd_run.c.
 *
 * Contract: tlm_simulate_option() returns 1 when argv[*i] (and its value,
 * *i advanced) was --simulate or --devices, 0 when it is another option,
 * -1 when the value is missing, -2 when it is bad (message printed).
 * tlm_simulate_prepare() runs in the parent when tlm_simulate_active(); -1
 * means a message was printed and the run must not start.
 * tlm_simulate_child() runs in the child after libtlm.so is in LD_PRELOAD.
 */
#ifndef TLM_TOOLS_CMD_RUN_SIMULATE_H
#define TLM_TOOLS_CMD_RUN_SIMULATE_H

int tlm_simulate_option(int argc, char **argv, int *i);
int tlm_simulate_active(void);
int tlm_simulate_prepare(void);
void tlm_simulate_child(void);

#endif
