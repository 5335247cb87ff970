/* SPDX-License-Identifier: MIT */
/*
 * sym_strtab.h - interned strings for the symbolizer.
 *
 * Contract: tlm__strtab_intern() returns a pointer to a NUL-terminated copy
 * of s[0..len) that stays valid, unmoved, until tlm__strtab_free(); equal
 * strings give the same pointer, so a report can compare frames' names by
 * pointer and millions of frames share a few thousand names. Returns NULL only
 * when memory runs out. Not thread-safe.
 */
#ifndef TLM_SYM_STRTAB_H
#define TLM_SYM_STRTAB_H

#include <stddef.h>

struct tlm__strtab;

struct tlm__strtab *tlm__strtab_new(void);
void tlm__strtab_free(struct tlm__strtab *t);
const char *tlm__strtab_intern(struct tlm__strtab *t, const char *s, size_t len);
/* The same for a NUL-terminated string; NULL in, NULL out. */
const char *tlm__strtab_intern_str(struct tlm__strtab *t, const char *s);

#endif
