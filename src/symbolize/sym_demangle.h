/* SPDX-License-Identifier: MIT */
/*
 * sym_demangle.h - C++ names as people write them.
 *
 * Contract: tlm__demangle() interns the demangled form of an Itanium-ABI
 * mangled name ("_ZN2ns6Widget4growEi" -> "ns::Widget::grow(int)") and
 * returns it; any other name (C, Rust v0, malformed) is interned as is.
 * NULL only for a NULL name or when memory runs out.
 */
#ifndef TLM_SYM_DEMANGLE_H
#define TLM_SYM_DEMANGLE_H

#include "symbolize/sym_strtab.h"

const char *tlm__demangle(struct tlm__strtab *t, const char *name);

#endif
