/* SPDX-License-Identifier: MIT */
/*
 * test_symbols.c - the symbolizer on real return addresses: a shared object,
 * the PIE program itself, C++, libc through /usr/lib/debug, the cache.
 * Odd modules and how files were shipped: test_symbols_odd.c.
 */
#include <fcntl.h>
#include <libgen.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/symbols.h"
#include "fixture.h"
#include "modmap.h"
#include "symt.h"
#include "tlm_test.h"

/* ---- real objects ------------------------------------------------------ */

static void test_shared_direct(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_lib_direct);
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 1);
	expect_frame(&f[0], "fix_lib_direct", "fix_lib.c", fix_lib_line_direct, false);
	expect_module(&f[0], ip, mod_of(ip));
	assert_string_equal(base_name(f[0].module), "libsymfix.so");
	tlm_sym_free(s);
}

static void test_shared_inline(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_lib_outer);
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 2);
	expect_frame(&f[0], "fix_lib_inner", "fix_lib.c", fix_lib_line_inner, true);
	expect_frame(&f[1], "fix_lib_outer", "fix_lib.c", fix_lib_line_outer, false);
	expect_module(&f[0], ip, mod_of(ip));
	expect_module(&f[1], ip, mod_of(ip));
	/* max 1: the innermost frame only */
	memset(f, 0, sizeof f);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 1), 1);
	assert_string_equal(f[0].function, "fix_lib_inner");
	assert_null(f[1].function);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 0), 0);
	tlm_sym_free(s);
}

/* Nested inlining: every level is a frame, each outer one at the call site
 * of the level inside it. */
static void test_shared_inline_nested(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_lib_deep);
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 3);
	expect_frame(&f[0], "fix_lib_leaf", "fix_lib.c", fix_lib_line_leaf, true);
	expect_frame(&f[1], "fix_lib_mid", "fix_lib.c", fix_lib_line_mid, true);
	expect_frame(&f[2], "fix_lib_deep", "fix_lib.c", fix_lib_line_deep, false);
	tlm_sym_free(s);
}

static void test_pie_direct(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_exe_direct);
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 1);
	expect_frame(&f[0], "fix_exe_direct", "fix_exe.c", fix_exe_line_direct, false);
	expect_module(&f[0], ip, mod_of(ip));
	assert_true(mod_of(ip)->base != 0); /* a PIE: loaded with a bias */
	tlm_sym_free(s);
}

static void test_pie_inline(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_exe_outer);
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 2);
	expect_frame(&f[0], "fix_exe_inner", "fix_exe.c", fix_exe_line_inner, true);
	expect_frame(&f[1], "fix_exe_outer", "fix_exe.c", fix_exe_line_outer, false);
	tlm_sym_free(s);
}

/* A non-PIE executable (ET_EXEC): load bias 0, file addresses as they are.
 * It runs as a child, which prints its return address and module record. */
static void test_non_pie(void **state)
{
	(void)state;
	const char *exe = getenv("TLM_TEST_SYMFIX_NOPIE");
	assert_non_null(exe);
	FILE *p = popen(exe, "r");
	assert_non_null(p);
	struct tlm_rec_module *m = calloc(1, sizeof *m);
	assert_non_null(m);
	unsigned long long ip, base, a, b;
	int inner, outer;
	unsigned nseg;
	assert_int_equal(fscanf(p, "%llu %d %d %llu %u", &ip, &inner, &outer, &base, &nseg), 5);
	assert_true(nseg >= 1 && nseg <= TLM_MAX_SEGMENTS);
	for (unsigned i = 0; i < nseg; i++) {
		assert_int_equal(fscanf(p, "%llu %llu", &a, &b), 2);
		m->seg[i].start = a;
		m->seg[i].end = b;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(base, 0);
	m->id = 1;
	m->nseg = nseg;
	snprintf(m->path, sizeof m->path, "%s", exe);
	struct tlm_symbolizer *s = tlm_sym_new();
	tlm_sym_module(s, m);
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 2);
	expect_frame(&f[0], "fix_exe_inner", "fix_exe.c", inner, true);
	expect_frame(&f[1], "fix_exe_outer", "fix_exe.c", outer, false);
	assert_int_equal(f[1].module_offset, ip);
	tlm_sym_free(s);
	free(m);
}

static void call_cxx(fix_cb cb)
{
	assert_int_equal(fix_cxx_call(cb), 3);
}

static void test_cxx_demangled(void **state)
{
	(void)state;
#ifdef TLM_TEST_HAVE_CXX
	uint64_t ip = ip_of(call_cxx);
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 1);
	expect_frame(&f[0], "ns::Widget::grow(int)", "fix_cxx.cpp", fix_cxx_line_grow, false);
	tlm_sym_free(s);
#else
	tlm_test_skip("g++", "no C++ compiler at configure time: C++ names not demangled");
#endif
}

static int cmp_int(const void *a, const void *b)
{
	captured = (uint64_t)(uintptr_t)__builtin_return_address(0);
	return *(const int *)a - *(const int *)b;
}

/* libc's DWARF lives in /usr/lib/debug/.build-id (libc6-dbg): found by
 * build-id, not by path. */
static void test_libc_debuginfo_by_build_id(void **state)
{
	(void)state;
	int v[] = {3, 1, 2};
	captured = 0;
	qsort(v, 3, sizeof v[0], cmp_int);
	const struct tlm_rec_module *m = mod_of(captured);
	char dbg[256];
	int len = snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%02x/", m->build_id[0]);
	for (uint32_t i = 1; i < m->build_id_len; i++)
		len += snprintf(dbg + len, sizeof dbg - (size_t)len, "%02x", m->build_id[i]);
	snprintf(dbg + len, sizeof dbg - (size_t)len, ".debug");
	if (!m->build_id_len || access(dbg, R_OK) != 0) {
		tlm_test_skip("libc6-dbg", "no %s (libc6-dbg): libc's separate debug info not tested", dbg);
	}
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame f[16];
	size_t n = tlm_sym_resolve(s, captured, f, 16);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(f[i].function);
		assert_non_null(f[i].file);
		assert_true(f[i].line > 0);
		assert_int_equal(f[i].inlined, i + 1 < n);
	}
	assert_string_equal(base_name(f[0].module), base_name(m->path));
	tlm_sym_free(s);
}

/* Symbolizing twice gives the same answer, from the cache, with the same
 * interned strings. */
static void test_cached(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_lib_outer);
	struct tlm_symbolizer *s = sym_all();
	struct tlm_frame a[8], b[8];
	assert_int_equal(tlm_sym_resolve(s, ip, a, 8), 2);
	assert_int_equal(tlm_sym_resolve(s, ip, b, 8), 2);
	assert_ptr_equal(a[0].function, b[0].function);
	assert_ptr_equal(a[1].file, b[1].file);
	assert_int_equal(a[1].line, b[1].line);
	tlm_sym_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_direct),
		cmocka_unit_test(test_shared_inline),
		cmocka_unit_test(test_shared_inline_nested),
		cmocka_unit_test(test_pie_direct),
		cmocka_unit_test(test_pie_inline),
		cmocka_unit_test(test_non_pie),
		cmocka_unit_test(test_cxx_demangled),
		cmocka_unit_test(test_libc_debuginfo_by_build_id),
		cmocka_unit_test(test_cached),
	};
	return cmocka_run_group_tests(tests, symt_setup, symt_teardown);
}
