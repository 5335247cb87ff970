/* SPDX-License-Identifier: MIT */
/* fix_exe.c - the same shapes as fix_lib.c, linked into the PIE test program. */
#include "fixture.h"

volatile int fix_exe_line_direct, fix_exe_line_inner, fix_exe_line_outer;

__attribute__((noinline)) void fix_exe_direct(fix_cb cb)
{
	cb(); fix_exe_line_direct = __LINE__;
}

static inline __attribute__((always_inline)) void fix_exe_inner(fix_cb cb)
{
	cb(); fix_exe_line_inner = __LINE__;
}

__attribute__((noinline)) void fix_exe_outer(fix_cb cb)
{
	fix_exe_inner(cb); fix_exe_line_outer = __LINE__;
}
