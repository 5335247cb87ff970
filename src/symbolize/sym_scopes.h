/* SPDX-License-Identifier: MIT */
/*
 * sym_scopes.h - which function, and which inlined calls, hold an address.
 *
 * Contract: tlm__scopes_find() writes the DWARF scopes of cu that contain
 * pc (a DWARF address: the module address minus the Dwarf's bias), outermost
 * first: chain[0] is the DW_TAG_subprogram, then each nested
 * DW_TAG_inlined_subroutine down to the innermost; it returns their number,
 * at most max (deeper inlining is cut at the inner end), and 0 when no
 * indexed function holds pc. tlm__scopes_find_slow() answers the same by
 * searching the whole CU, for what the index does not cover (functions
 * nested in other DIEs than namespaces and types; overlapping ranges).
 *
 * dwarf_getscopes() is not used: below an inlined instance it continues
 * with the scopes of the abstract definition, not of the caller, so it
 * loses the middle frames of nested inlining (f <- g <- h gives f, h).
 *
 * Why an index: a search visits every top-level DIE of the CU on each call, milliseconds per address in a CU of thousands of functions.
 * Here each CU is walked once, on first use, into a sorted array of its
 * functions' address ranges; a lookup is a binary search and a descent into
 * one function. DIEs stay valid while the Dwarf they came from is open, so
 * the owner frees this before ending its Dwfl. Not thread-safe.
 */
#ifndef TLM_SYM_SCOPES_H
#define TLM_SYM_SCOPES_H

#include <elfutils/libdw.h>

struct tlm__scopes;

struct tlm__scopes *tlm__scopes_new(void);
void tlm__scopes_free(struct tlm__scopes *x);
int tlm__scopes_find(struct tlm__scopes *x, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max);
int tlm__scopes_find_slow(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max);

#endif
