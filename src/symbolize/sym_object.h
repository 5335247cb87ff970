/* SPDX-License-Identifier: MIT */
/*
 * sym_object.h - one ELF file on disk and its debugging information.
 *
 * Contract: tlm__symobj_open() opens the file through libdwfl as if loaded
 * at bias 0, so lookups take addresses in the file's own terms (p_vaddr
 * space: a runtime ip minus the module's load bias). One open file then
 * serves every module record of that path, whatever bias each was loaded at.
 * Debugging information is found the standard libdwfl way (the file itself,
 * .gnu_debuglink, /usr/lib/debug by build-id) on the first lookup, not at
 * open. Returns NULL when the file is missing, unreadable or not ELF.
 *
 * tlm__symobj_lookup() describes the instruction at one file address,
 * innermost frame first: inlined instances from DWARF scopes, then the real
 * function; without DWARF, one frame named from the ELF symbol table. It
 * fills function, file, line and inlined of out[0..n) (n >= 1 when max >= 1;
 * a frame with nothing known has function NULL) and leaves the rest alone.
 * Strings are interned in t. Not thread-safe (neither is libdwfl's Dwfl).
 */
#ifndef TLM_SYM_OBJECT_H
#define TLM_SYM_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/sym_strtab.h"
#include "symbolize/symbols.h"

struct tlm__symobj;

struct tlm__symobj *tlm__symobj_open(const char *path);
void tlm__symobj_close(struct tlm__symobj *o);
/* The file's GNU build-id: its length (0 when it has none) and *bits. */
size_t tlm__symobj_build_id(struct tlm__symobj *o, const uint8_t **bits);
size_t tlm__symobj_lookup(struct tlm__symobj *o, uint64_t addr, struct tlm__strtab *t,
			  struct tlm_frame *out, size_t max);

#endif
