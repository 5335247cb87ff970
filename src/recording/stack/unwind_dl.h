/* SPDX-License-Identifier: MIT */
/*
 * unwind_dl.h - libunwind, opened with RTLD_LOCAL rather than linked.
 *
 * Contract: tlm__unw_load() (once, from tlm__stack_init) opens libunwind.so.8
 * privately, the copy in libtlm.so's own directory if there is one, else the
 * system's, and fills tlm__unw; false (after one log line) when it cannot,
 * and then every pointer is NULL and native stacks come out empty. Why not a
 * link: a DT_NEEDED of a preloaded library joins the global scope ahead of
 * libgcc_s, so libunwind's _Unwind_* would take over every C++ exception and
 * cleanup in the host (a change of its behaviour, and slower: libunwind's
 * unw_step masks signals twice a frame).
 */
#ifndef TLM_SHIM_UNWIND_DL_H
#define TLM_SHIM_UNWIND_DL_H

#include <stdbool.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "recording/defs.h"

struct tlm__unw {
	int (*getcontext)(unw_context_t *);
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*get_save_loc)(unw_cursor_t *, int, unw_save_loc_t *);
	int (*backtrace)(void **, int);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	unw_addr_space_t local_as;
};

extern struct tlm__unw tlm__unw TLM_HIDDEN;
bool tlm__unw_load(void) TLM_HIDDEN;
/* Why tlm__unw_load failed ("off: cannot open libunwind.so.8 (...)"), for the
 * trace's stacks.native property; empty before or after a success. */
extern char tlm__unw_why[256] TLM_HIDDEN;

/* Around any libunwind call: an unwind that misses libunwind's caches walks
 * the loaded objects under glibc's loader lock, so fork waits for unwinds in
 * flight (tlm__stack_atfork_prepare, stack.h) and holds new ones back. */
void tlm__stack_unwind_enter(void) TLM_HIDDEN;
void tlm__stack_unwind_leave(void) TLM_HIDDEN;

#endif
