/* SPDX-License-Identifier: MIT */
/*
 * nvml_dl.h - NVML, opened at run time with RTLD_LOCAL (never linked), for
 * the processes that use a device and their memory (DEVPROCS records).
 *
 * Contract: opened and initialised by the thread that starts the recording
 * (tlm__nvml_open), then asked from the writer thread only, which never
 * loads anything (nvml_dl.c); status as in tlm_rec_devprocs (-1 when no
 * NVML could be loaded, said once, or TLM_NVML=off).
 */
#ifndef TLM_REC_NVML_DL_H
#define TLM_REC_NVML_DL_H

#include "recording/defs.h"
#include "tlm/trace.h"

void tlm__nvml_procs(int device, struct tlm_rec_devprocs *out) TLM_HIDDEN;
void tlm__nvml_open(void) TLM_HIDDEN; /* load and init NVML: on the thread that starts the recording, never the writer */
/* On a recording thread, at a device memory sample: the device's PCI bus id,
 * read once while the driver surely answers (nvml_dl.c). Lock-free. */
void tlm__nvml_note_device(int device) TLM_HIDDEN;

#endif
