/* SPDX-License-Identifier: MIT */
/*
 * pystack_int.h - what pystack.c, pywalk.c (the walk) and pysetup.c (set-up,
 * the offsets, the free flags) share: the interpreter's offsets and symbols,
 * set once by tlm__py_on(), and the reads of interpreter memory.
 *
 * Contract: the globals are written only by tlm__py_on()'s one set-up (then
 * tlm__py_state becomes 2, released), read after an acquire of it.
 */
#ifndef TLM_PYSTACK_INT_H
#define TLM_PYSTACK_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "recording/defs.h"

struct tlm__pyoff {
	int minor;
	uint32_t ts_frame;     /* tstate -> frame (3.8-3.10, 3.13) or cframe (3.11-3.12) */
	int cframe_cur;        /* -1: none; else cframe -> current frame */
	uint32_t f_back, f_code, f_instr, f_owner;
	int instr_kind;        /* 0: int lasti in bytes, 1: int lasti in code units, 2: instr pointer */
	bool skip_cstack;      /* owner == 3: C-stack shim frame (3.12-3.13) */
	uint32_t co_file, co_name, co_lines, co_first, co_code;
	uint32_t co_flags, shim_flags; /* code flags marking interpreter shims (3.13+); 0: none */
	int table_kind;        /* 0: co_lnotab, 1: 3.10 co_linetable, 2: 3.11+ location table */
	uint32_t uni_ascii, uni_compact; /* data offsets of compact ascii / non-ascii strings */
	uint32_t gc_collecting;/* from interp (tstate+16), or from _PyRuntime when gc_in_runtime */
	bool gc_in_runtime;
	uint32_t rt_finalizing;/* _PyRuntime + this: _finalizing (a pointer) */
};

extern struct tlm__pyoff tlm__pyo TLM_HIDDEN;
extern void *(*tlm__py_gil_get)(void) TLM_HIDDEN;    /* PyGILState_GetThisThreadState */
extern void *(*tlm__py_holder_get)(void) TLM_HIDDEN; /* thread state holding the GIL (see free flags) */
extern const void *tlm__py_code_type TLM_HIDDEN, *tlm__py_unicode_type TLM_HIDDEN, *tlm__py_bytes_type TLM_HIDDEN;
extern const char *tlm__py_runtime TLM_HIDDEN;       /* _PyRuntime */
/* Code objects freed since set-up, counted in PyCode_Type's tp_dealloc
 * (pysetup.c) when tlm__py_deaths_on: while it stays put, a code object
 * seen alive at an address is the one there now. */
extern _Atomic uint64_t tlm__py_code_deaths TLM_HIDDEN;
extern bool tlm__py_deaths_on TLM_HIDDEN;
/* 0 = not set up, 1 = setting up, 2 = on, 3 = off for good */
extern _Atomic int tlm__py_state TLM_HIDDEN;

/* Whether Python stacks are on (setting them up on the first call after
 * the interpreter is initialised). */
bool tlm__py_on_slow(void) TLM_HIDDEN;
static inline bool tlm__py_on(void)
{
	if (TLM_LIKELY(atomic_load_explicit(&tlm__py_state, memory_order_acquire) == 2))
		return true;
	return tlm__py_on_slow();
}

/* safe-ish reads */
static inline bool tlm__py_ptr_ok(uint64_t p)
{
	return p >= 4096 && !(p & 7) && p < (1ull << 47);
}
static inline uint64_t tlm__py_rd64(uint64_t p, uint32_t off)
{
	return *(const volatile uint64_t *)(uintptr_t)(p + off);
}
/* 8 bytes at any byte address (string and table contents) */
typedef uint64_t __attribute__((aligned(1), may_alias)) tlm__py_u64u;
static inline uint64_t tlm__py_rd64u(uint64_t p, uint32_t off)
{
	return *(const volatile tlm__py_u64u *)(uintptr_t)(p + off);
}
static inline uint32_t tlm__py_rd32(uint64_t p, uint32_t off)
{
	return *(const volatile uint32_t *)(uintptr_t)(p + off);
}
static inline uint8_t tlm__py_rd8(uint64_t p, uint32_t off)
{
	return *(const volatile uint8_t *)(uintptr_t)(p + off);
}
static inline bool tlm__py_is_type(uint64_t obj, const void *type)
{
	return tlm__py_ptr_ok(obj) && tlm__py_rd64(obj, 8) == (uint64_t)(uintptr_t)type;
}

#endif
