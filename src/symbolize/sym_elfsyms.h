/* SPDX-License-Identifier: MIT */
/*
 * sym_elfsyms.h - function symbols of a module, sorted, for names without DWARF.
 *
 * Contract: tlm__elfsyms_new() reads the module's best symbol table once
 * (libdwfl's choice: .symtab of the debug file or the file, else .dynsym)
 * and keeps its function symbols sorted by address. tlm__elfsyms_find()
 * names the function holding addr (a module address): the one whose
 * [value, value + size) holds it, else a size-less one starting at or
 * before addr with no other symbol in between; NULL when none. *inside says
 * whether addr lies within a symbol's size (not in padding after it).
 * Among aliases the global name wins over weak, weak over local, then the
 * one with fewer leading underscores. Names belong to the module's ELF and
 * stay valid while its Dwfl is open.
 *
 * Why: dwfl_module_addrinfo() scans the whole symbol table on each call,
 * tens of microseconds per address in a large object.
 */
#ifndef TLM_SYM_ELFSYMS_H
#define TLM_SYM_ELFSYMS_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

struct tlm__elfsyms;

struct tlm__elfsyms *tlm__elfsyms_new(Dwfl_Module *mod);
void tlm__elfsyms_free(struct tlm__elfsyms *x);
const char *tlm__elfsyms_find(const struct tlm__elfsyms *x, uint64_t addr, bool *inside);

#endif
