/* SPDX-License-Identifier: MIT */
/*
 * fixture.h - code whose return addresses the symbolizer tests resolve.
 *
 * Contract: each fixture function calls cb (a function of the test, which
 * records its own return address: an address inside the fixture) and then
 * stores __LINE__ of the line holding the call into its fix_*_line_* global.
 * The store follows the call, so the call is never a tail call, and the
 * line the test expects is the line the compiler saw. Built with -g -O2.
 */
#ifndef TLM_TEST_FIXTURE_H
#define TLM_TEST_FIXTURE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*fix_cb)(void);

/* libsymfix.so (fix_lib.c) */
extern volatile int fix_lib_line_direct, fix_lib_line_inner, fix_lib_line_outer;
void fix_lib_direct(fix_cb cb);
void fix_lib_outer(fix_cb cb); /* calls cb from an always_inline callee */
extern volatile int fix_lib_line_leaf, fix_lib_line_mid, fix_lib_line_deep;
void fix_lib_deep(fix_cb cb);  /* two levels of always_inline */

/* the test executable (fix_exe.c), a PIE */
extern volatile int fix_exe_line_direct, fix_exe_line_inner, fix_exe_line_outer;
void fix_exe_direct(fix_cb cb);
void fix_exe_outer(fix_cb cb);

/* libsymfix_cxx.so (fix_cxx.cpp): ns::Widget::grow(int) calls cb */
extern volatile int fix_cxx_line_grow;
int fix_cxx_call(fix_cb cb);

#ifdef __cplusplus
}
#endif

#endif
