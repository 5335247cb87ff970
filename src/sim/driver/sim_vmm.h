/* SPDX-License-Identifier: MIT */
/*
 * sim_vmm.h - the VMM handle table, shared by sim_vmm.c (create, release,
 * reserve, map, access, retain, properties) and sim_vmm_share.c (handles
 * shared between processes: POSIX file descriptors and legacy IPC).
 *
 * Contract: a handle lives while it has a reference (cuMemCreate's or an
 * import's, plus one per cuMemRetainAllocationHandle) or a mapping; its
 * pages return to the device when both are gone. A handle imported from
 * another process (or from this one's own export) holds no pages: the
 * exporting process's handle does. Handles that were exported or imported
 * keep their contents in a memfd that every process holding the handle maps,
 * so they show the same bytes everywhere. Callers hold sim_lock.
 */
#ifndef TLM_SIM_VMM_H
#define TLM_SIM_VMM_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_internal.h"

#pragma GCC visibility push(hidden)

struct vmm_handle {
	CUmemGenericAllocationHandle id;
	int dev;
	uint64_t pages;
	uint64_t maps; /* live mappings that reference this handle */
	uint64_t refs; /* the creation's or import's reference and each retain's */
	bool imported; /* the memory of another handle (another process's): no pages here */
	int fd;        /* memfd of the contents once shared, else -1 */
	uint8_t *back; /* contents; NULL until first touched */
	CUmemAllocationProp prop;
};

/* A new handle (refs 1) in the table, or NULL when the host is out of memory.
 * Takes no pages: the caller has taken them unless `imported`. */
struct vmm_handle *sim_vmm_add(int dev, uint64_t pages, const CUmemAllocationProp *prop,
			       bool imported, int fd);
/* The live handle with that value (refs > 0), or NULL. */
struct vmm_handle *sim_vmm_find(CUmemGenericAllocationHandle id);
/* Drop a reference; the handle goes once it has none and no mapping. */
void sim_vmm_unref(struct vmm_handle *h);
/* The mapping holding p: its handle, start and length; NULL if none. */
struct vmm_handle *sim_vmm_mapping(uint64_t p, uint64_t *start, uint64_t *len);

#pragma GCC visibility pop

#endif
