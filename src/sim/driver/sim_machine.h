/* SPDX-License-Identifier: MIT */
/*
 * sim_machine.h - the simulated devices' physical memory, per process and
 * across processes (docs/simulated-device.md, "Shared machine").
 *
 * Contract: every page of device memory a process holds, and the cost of each
 * of its live contexts, is charged here. Without TLM_SIM_MACHINE the machine
 * is private to the process (as before: one table slot, in process memory).
 * With TLM_SIM_MACHINE=<path>, every process naming the same file shares one
 * table in a MAP_SHARED mapping of it: a device's free memory is its total
 * minus what every live process holds. The machine's device count and sizes
 * are its creator's. A dead process (SIGKILL included) gives its memory back
 * the next time another process attaches, asks for the memory figures, or
 * finds the device short. Callers of take/give hold sim_lock (the machine
 * lock nests inside it); the queries need no lock of the caller's.
 */
#ifndef TLM_SIM_MACHINE_H
#define TLM_SIM_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Attach (once per process; no cuInit needed): parse TLM_SIM_DEVICES,
 * TLM_SIM_MEMORY, TLM_SIM_CONTEXT_MEMORY, TLM_SIM_MACHINE. */
void sim_machine_attach(void);
int sim_machine_ndev(void);
uint64_t sim_machine_total_pages(int dev);
uint64_t sim_machine_ctx_pages(void); /* one context's cost, in pages */

/* Charge `pages` of device memory to this process on dev; false when the
 * device (every process's holdings) has fewer free pages. */
bool sim_machine_take(int dev, uint64_t pages);
void sim_machine_give(int dev, uint64_t pages);
/* A context became live / was destroyed on dev: its cost (may be 0 pages).
 * take fails (false) when the device cannot hold it. */
bool sim_machine_ctx_take(int dev);
void sim_machine_ctx_give(int dev);
/* sim_state.c's fork handler in the child, inside sim_lock. */
void sim_machine_fork_child(void);
/* True when the machine is shared with other processes (TLM_SIM_MACHINE). */
bool sim_machine_shared(void);

/* Pages in use on dev by every process (contexts included), after giving
 * dead processes' memory back. */
uint64_t sim_machine_used_pages(int dev);
/* The processes using dev (holding memory or a live context), by pid:
 * at most max into pid[]/bytes[]; returns how many there are. */
int sim_machine_processes(int dev, uint32_t *pid, uint64_t *bytes, int max);

#pragma GCC visibility pop

#endif
