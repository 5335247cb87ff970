/* SPDX-License-Identifier: MIT */
/*
 * vmm_refs.h - which cuMemRelease gives a VMM handle's memory back.
 *
 * Contract: a handle has one reference from cuMemCreate and one more per
 * cuMemRetainAllocationHandle (the same handle value); a handle from
 * cuMemImportFromShareableHandle is another process's memory. The hooks and
 * the CUPTI callbacks tell this table of each successful create, retain and
 * import; before a cuMemRelease they ask whether it drops the creation's
 * reference (the memory's free, to record) or a retain's or an import's (no
 * event). Lock-free and allocation-free; when its fixed table is full,
 * retains and imports go unnoted and every release is a free, as before.
 */
#ifndef TLM_REC_VMM_REFS_H
#define TLM_REC_VMM_REFS_H

#include "recording/defs.h"

void tlm__vmm_created(uint64_t h) TLM_HIDDEN;
void tlm__vmm_retained(uint64_t h) TLM_HIDDEN;
void tlm__vmm_imported(uint64_t h) TLM_HIDDEN;
/* Before cuMemRelease(h): true when it drops the creation's reference. */
bool tlm__vmm_release_frees(uint64_t h) TLM_HIDDEN;
/* The release failed: the reference tlm__vmm_release_frees() counted off is held. */
void tlm__vmm_release_failed(uint64_t h, bool freed) TLM_HIDDEN;

#endif
