/* SPDX-License-Identifier: MIT */
/* fix_lib.c - libsymfix.so: a direct call and an inlined one (see fixture.h). */
#include "fixture.h"

volatile int fix_lib_line_direct, fix_lib_line_inner, fix_lib_line_outer;

__attribute__((noinline)) void fix_lib_direct(fix_cb cb)
{
	cb(); fix_lib_line_direct = __LINE__;
}

static inline __attribute__((always_inline)) void fix_lib_inner(fix_cb cb)
{
	cb(); fix_lib_line_inner = __LINE__;
}

__attribute__((noinline)) void fix_lib_outer(fix_cb cb)
{
	fix_lib_inner(cb); fix_lib_line_outer = __LINE__;
}

/* Two levels of inlining: fix_lib_deep <- fix_lib_mid <- fix_lib_leaf. */
volatile int fix_lib_line_leaf, fix_lib_line_mid, fix_lib_line_deep;

static inline __attribute__((always_inline)) void fix_lib_leaf(fix_cb cb)
{
	cb(); fix_lib_line_leaf = __LINE__;
}

static inline __attribute__((always_inline)) void fix_lib_mid(fix_cb cb)
{
	fix_lib_leaf(cb); fix_lib_line_mid = __LINE__;
}

__attribute__((noinline)) void fix_lib_deep(fix_cb cb)
{
	fix_lib_mid(cb); fix_lib_line_deep = __LINE__;
}
