/* SPDX-License-Identifier: MIT */
/*
 * hooks.h - the table of hooked driver and runtime entry points.
 *
 * Contract: every hooked driver symbol has TLM__NSLOT wrappers. Slot 0 is the
 * exported symbol of the same name (direct calls; its real function is the
 * next definition after libtlm). Slots 1.. are handed out by dlsym,
 * cuGetProcAddress and cudaGetDriverEntryPoint for other real pointers (a
 * per-thread-stream flavour, a second driver copy): tlm__drv_wrap() maps a
 * real pointer to the wrapper that calls exactly it. Runtime hooks have one
 * wrapper each (the exported symbol).
 */
#ifndef TLM_HOOKS_H
#define TLM_HOOKS_H

#include <stdatomic.h>
#include <stdbool.h>

#include "recording/shim.h"

#define TLM__NSLOT 4

struct tlm__drv_fn {
	const char *name;  /* exact symbol, e.g. "cuMemAllocAsync_ptsz" */
	const char *base;  /* cuGetProcAddress name, e.g. "cuMemAllocAsync" */
	int minver;        /* the CUDA version that introduced this ABI */
	bool ptsz;
	void *wrapper[TLM__NSLOT];
	_Atomic(void *) real[TLM__NSLOT];
};

extern struct tlm__drv_fn tlm__drv[] TLM_HIDDEN;
extern const unsigned tlm__ndrv TLM_HIDDEN;

struct tlm__rt_fn {
	const char *name;
	void *hook;
	_Atomic(void *) real;
};
extern struct tlm__rt_fn tlm__rt[] TLM_HIDDEN;
extern const unsigned tlm__nrt TLM_HIDDEN;

void *tlm__drv_real(unsigned idx, unsigned slot) TLM_HIDDEN;
void *tlm__rt_real(unsigned idx) TLM_HIDDEN;
/* Wrapper for a real pointer of driver function idx (or p itself if it is
 * ours already, or when every slot is taken). */
void *tlm__drv_wrap(unsigned idx, void *p) TLM_HIDDEN;
int tlm__drv_find(const char *name) TLM_HIDDEN; /* exact name -> idx, -1 */
int tlm__rt_find(const char *name) TLM_HIDDEN;
/* Maps what cuGetProcAddress returned for (base name, version, flags) to a wrapper. */
void *tlm__translate_proc(const char *sym, int version, uint64_t flags, void *p) TLM_HIDDEN;

/* Wrapper slot functions: slot 0 exported, others static. */
#define TLM__SLOTS(idx, name, ret, params, ...)                                             \
	TLM_EXPORT ret name params { return do_##name(tlm__drv_real(idx, 0), __VA_ARGS__); }     \
	static ret name##__s1 params { return do_##name(tlm__drv_real(idx, 1), __VA_ARGS__); }   \
	static ret name##__s2 params { return do_##name(tlm__drv_real(idx, 2), __VA_ARGS__); }   \
	static ret name##__s3 params { return do_##name(tlm__drv_real(idx, 3), __VA_ARGS__); }
#define TLM__SLOT_PTRS(name) {(void *)name, (void *)name##__s1, (void *)name##__s2, (void *)name##__s3}

#endif
