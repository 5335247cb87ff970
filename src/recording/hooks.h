/* SPDX-License-Identifier: MIT */
/*
 * hooks.h - the hooked driver and runtime entry points, and the tables that
 * bind each wrapper to its real function.
 *
 * Contract: hooks_driver.c and hooks_runtime.c define the memory calls'
 * wrappers and their tables (tlm__drv, tlm__rt); procaddr.c defines the
 * hooks of every way to an entry point (dlsym, cuGetProcAddress*,
 * cudaGetDriverEntryPoint*), with their own tables (tlm__gpa, tlm__ep), and
 * maps a real pointer to the wrapper that calls exactly it. A wrapper finds
 * its real function through its own table entry (tlm__drv_real and
 * tlm__rt_real, inline here), so the wrapper files never call procaddr.c.
 *
 * Every hooked driver function has TLM__NSLOT wrappers. Slot 0 is the
 * exported symbol of the same name (direct calls; its real function is the
 * next definition after libtlm). Slots 1.. are handed out by dlsym,
 * cuGetProcAddress and cudaGetDriverEntryPoint for other real pointers (a
 * per-thread-stream flavour, a second driver copy). Runtime hooks have one
 * wrapper each (the exported symbol). Wrappers record through the guard
 * (guard.h) and the recorder (recorder.h): allocations after the real call,
 * frees before it.
 */
#ifndef TLM_REC_HOOKS_H
#define TLM_REC_HOOKS_H

#include <dlfcn.h>

#include "common/cuda_abi.h"
#include "recording/defs.h"
#include "recording/realsym.h"

#define TLM__NSLOT 4

struct tlm__drv_fn {
	const char *name;  /* exact symbol, e.g. "cuMemAllocAsync_ptsz" */
	const char *base;  /* cuGetProcAddress name, e.g. "cuMemAllocAsync" */
	int minver;        /* the CUDA version that introduced this ABI */
	bool ptsz;
	void *wrapper[TLM__NSLOT];
	_Atomic(void *) real[TLM__NSLOT];
};

struct tlm__rt_fn {
	const char *name;
	void *hook;
	_Atomic(void *) real;
};

/* hooks_driver.c: the memory calls and cuInit; procaddr.c: cuGetProcAddress*
 * ([0] the 11.3 one, [1] _v2, [2] _v2_ptsz) */
extern struct tlm__drv_fn tlm__drv[] TLM_HIDDEN;
extern const unsigned tlm__ndrv TLM_HIDDEN;
extern struct tlm__drv_fn tlm__gpa[3] TLM_HIDDEN;
/* hooks_runtime.c: the memory calls; procaddr.c: cudaGetDriverEntryPoint* */
extern struct tlm__rt_fn tlm__rt[] TLM_HIDDEN;
extern const unsigned tlm__nrt TLM_HIDDEN;
extern struct tlm__rt_fn tlm__ep[4] TLM_HIDDEN;

/* The real function behind wrapper slot `slot` of f; slot 0 is found on
 * first use (the next definition after libtlm), the others when handed out. */
static inline void *tlm__drv_real(struct tlm__drv_fn *f, unsigned slot)
{
	void *p = atomic_load_explicit(&f->real[slot], memory_order_acquire);
	if (TLM_LIKELY(p != NULL) || slot != 0)
		return p;
	tlm__resolve_dlsym();
	p = tlm__real_dlsym(RTLD_NEXT, f->name);
	if (p)
		atomic_store_explicit(&f->real[0], p, memory_order_release);
	return p;
}

static inline void *tlm__rt_real(struct tlm__rt_fn *f)
{
	void *p = atomic_load_explicit(&f->real, memory_order_acquire);
	if (TLM_LIKELY(p != NULL))
		return p;
	tlm__resolve_dlsym();
	p = tlm__real_dlsym(RTLD_NEXT, f->name);
	if (!p) /* a libcudart loaded RTLD_LOCAL (by a library Python dlopened) */
		p = tlm__loaded_sym("libcudart.so", f->name);
	if (p)
		atomic_store_explicit(&f->real, p, memory_order_release);
	return p;
}

/* Wrapper slot functions of entry idx of table tab: slot 0 exported, others static. */
#define TLM__SLOTS(tab, idx, name, ret, params, ...)                                                \
	TLM_EXPORT ret name params { return do_##name(tlm__drv_real(&tab[idx], 0), __VA_ARGS__); }     \
	static ret name##__s1 params { return do_##name(tlm__drv_real(&tab[idx], 1), __VA_ARGS__); }   \
	static ret name##__s2 params { return do_##name(tlm__drv_real(&tab[idx], 2), __VA_ARGS__); }   \
	static ret name##__s3 params { return do_##name(tlm__drv_real(&tab[idx], 3), __VA_ARGS__); }
#define TLM__SLOT_PTRS(name) {(void *)name, (void *)name##__s1, (void *)name##__s2, (void *)name##__s3}

#endif
