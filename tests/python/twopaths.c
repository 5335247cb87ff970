/* SPDX-License-Identifier: MIT */
/*
 * twopaths.c - two native paths to one allocation function, for
 * nativepaths.py: called from one Python line, the two calls have the same
 * Python frames and differ in their native ones (via_b's call goes through
 * one more function). The empty asm after each call keeps it a call (no
 * tail call), so that each function's return address is on the stack.
 */
#include <stddef.h>

typedef int (*tlm_test_alloc_fn)(void **p, size_t n);

__attribute__((noinline, visibility("default"))) int tlm_test_via_a(tlm_test_alloc_fn f, void **p, size_t n)
{
	int r = f(p, n);
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) static int tlm_test_deeper(tlm_test_alloc_fn f, void **p, size_t n)
{
	int r = f(p, n);
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline, visibility("default"))) int tlm_test_via_b(tlm_test_alloc_fn f, void **p, size_t n)
{
	int r = tlm_test_deeper(f, p, n);
	__asm__ volatile("" ::: "memory");
	return r;
}
