/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - symbolization after the fact, from the trace's module map.
 *
 * Contract: feed every MODULE / MODULE_UNLOAD record in trace order; then
 * tlm_sym_resolve() turns one stack address into source frames through
 * elfutils libdw: function (C++ names demangled), file, line, module, with
 * inlined frames expanded (innermost first, the outermost being the real
 * function). Addresses in a stack are return addresses, so the lookup uses
 * ip - 1 (the call instruction). A module whose file on disk has a build-id
 * other than the one recorded is never symbolized: its frames come back with
 * stale = true and no function, so nothing is silently wrong. Results are
 * cached per address; memory grows with distinct addresses, not events.
 * Unloaded modules are kept: a report resolves stacks at its end, and an
 * address is looked up in the module most recently loaded over it.
 */
#ifndef TLM_SYMBOLS_H
#define TLM_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlm/trace.h"

enum tlm_frame_kind { TLM_FRAME_NATIVE = 0, TLM_FRAME_PYTHON = 1 };

struct tlm_frame {
	uint64_t ip;          /* the address as recorded */
	int kind;             /* enum tlm_frame_kind */
	const char *function; /* NULL when unknown; owned by the symbolizer */
	const char *file;     /* source file, NULL when unknown */
	int line;             /* 0 when unknown */
	const char *module;   /* path of the ELF object, NULL when no module holds ip */
	uint64_t module_offset; /* ip - module load bias */
	bool inlined;         /* this frame was inlined into the next one */
	bool stale;           /* the module's file changed since the run (build-id mismatch or missing) */
};

struct tlm_symbolizer;

struct tlm_symbolizer *tlm_sym_new(void);
void tlm_sym_free(struct tlm_symbolizer *s);
void tlm_sym_module(struct tlm_symbolizer *s, const struct tlm_rec_module *m);
void tlm_sym_module_unload(struct tlm_symbolizer *s, uint32_t id);
/* Up to max frames for one stack address (more than one when inlined).
 * Returns how many were written; always at least 1 when max >= 1. */
size_t tlm_sym_resolve(struct tlm_symbolizer *s, uint64_t ip, struct tlm_frame *out, size_t max);

#endif
