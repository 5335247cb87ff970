/* SPDX-License-Identifier: MIT */
/*
 * nvml_dl.h - NVML, opened at run time with RTLD_LOCAL (never linked), for
 * the processes that use a device and their memory (DEVPROCS records).
 *
 * Contract: asked from the writer thread only; status as in
 * tlm_rec_devprocs (-1 when no NVML could be loaded, said once, or
 * TLM_NVML=off).
 */
#ifndef TLM_REC_NVML_DL_H
#define TLM_REC_NVML_DL_H

#include "recording/defs.h"
#include "tlm/trace.h"

void tlm__nvml_procs(int device, struct tlm_rec_devprocs *out) TLM_HIDDEN;
void tlm__nvml_forbid_load(void) TLM_HIDDEN; /* from now on, no dlopen of NVML (a vfork child's exit) */

#endif
