/* SPDX-License-Identifier: MIT */
/*
 * grow.h - the one way the reading half grows an array: capacity doubled
 * (from a first size) until it holds `need` elements, with the
 * multiplications checked, so no caller writes its own realloc-doubling.
 *
 * Contract: tlm__grow(&v, &cap, need, sizeof *v, first) leaves v and cap as
 * they are and returns 0 when cap >= need; else it reallocates v to the
 * first capacity first, first * 2, ... that holds need and returns 0, or
 * returns -1 (v and cap unchanged, v still valid) when memory runs out or the
 * size would overflow. New elements are not initialized. Not for the
 * recording's hot path (src/recording allocates nothing there).
 */
#ifndef TLM_COMMON_GROW_H
#define TLM_COMMON_GROW_H

#include <stddef.h>

/* arrayp: the address of the array's pointer (any object pointer type). */
int tlm__grow(void *arrayp, size_t *cap, size_t need, size_t elem, size_t first);

#endif
