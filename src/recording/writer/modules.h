/* SPDX-License-Identifier: MIT */
/*
 * modules.h - the module map that lets stacks be symbolized after the process
 * is gone.
 *
 * Contract: tlm__modules_sync() compares the loaded ELF objects with what the
 * trace already holds and appends MODULE / MODULE_UNLOAD records for the
 * difference (path, load bias, PT_LOAD ranges, GNU build-id). It is cheap when
 * nothing was loaded or unloaded since the last call (glibc's adds/subs
 * counters). Writer thread only; it may allocate.
 */
#ifndef TLM_MODULES_H
#define TLM_MODULES_H

#include "recording/defs.h"
#include "tlm/trace.h"

int tlm__modules_sync(struct tlm_tw *tw) TLM_HIDDEN;
void tlm__modules_reset(void) TLM_HIDDEN;

#endif
