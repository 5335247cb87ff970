/* SPDX-License-Identifier: MIT */
/*
 * test_symbols_odd.c - the symbolizer on addresses outside any module and on
 * odd modules (stale and missing files, pseudo-modules, overlapping and
 * hostile records, a FIFO), and on files as shipped: stripped, split debug.
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

/* ---- addresses outside any module, odd modules ------------------------- */

static void test_unknown_address(void **state)
{
	(void)state;
	struct tlm_symbolizer *s = sym_all();
	const uint64_t bad[] = {0, 1, 0x10, UINT64_MAX, UINT64_MAX - 1, 0xdead00000000ull};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tlm_frame f[4];
		memset(f, 0x55, sizeof f);
		assert_int_equal(tlm_sym_resolve(s, bad[i], f, 4), 1);
		assert_int_equal(f[0].ip, bad[i]);
		assert_null(f[0].module);
		assert_null(f[0].function);
		assert_null(f[0].file);
		assert_int_equal(f[0].line, 0);
		assert_false(f[0].stale);
		assert_false(f[0].inlined);
	}
	tlm_sym_free(s);
	/* No modules at all, and a NULL symbolizer. */
	s = tlm_sym_new();
	struct tlm_frame f[1];
	assert_int_equal(tlm_sym_resolve(s, 0x401000, f, 1), 1);
	assert_null(f[0].module);
	tlm_sym_free(s);
	assert_int_equal(tlm_sym_resolve(NULL, 0x401000, f, 1), 1);
	assert_null(f[0].module);
}

/* A record for the loaded libsymfix.so, with another path or build-id. */
static struct tlm_rec_module *fake_of(uint64_t ip, const char *path)
{
	struct tlm_rec_module *m = malloc(sizeof *m);
	assert_non_null(m);
	*m = *mod_of(ip);
	if (path)
		snprintf(m->path, sizeof m->path, "%s", path);
	return m;
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	assert_non_null(in);
	assert_non_null(out);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void expect_stale(const struct tlm_frame *f, uint64_t ip, const struct tlm_rec_module *m)
{
	assert_true(f->stale);
	assert_null(f->function);
	assert_null(f->file);
	assert_int_equal(f->line, 0);
	assert_false(f->inlined);
	expect_module(f, ip, m);
}

/* The file was rebuilt since the run: same path, other build-id. Nothing
 * of it may be used, not even its symbol table. */
static void test_stale_build_id(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_lib_outer);
	char dir[] = "/tmp/tlm-sym-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[512];
	snprintf(path, sizeof path, "%s/libsymfix.so", dir);
	copy_file(mod_of(ip)->path, path);

	/* The copy with the right build-id: symbolized (it is the same file). */
	struct tlm_rec_module *m = fake_of(ip, path);
	assert_true(m->build_id_len > 0);
	struct tlm_symbolizer *s = tlm_sym_new();
	tlm_sym_module(s, m);
	struct tlm_frame f[8];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 2);
	expect_frame(&f[1], "fix_lib_outer", "fix_lib.c", fix_lib_line_outer, false);
	tlm_sym_free(s);

	/* The same file recorded with another build-id: stale. */
	m->build_id[m->build_id_len / 2] ^= 0x40;
	s = tlm_sym_new();
	tlm_sym_module(s, m);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 1);
	expect_stale(&f[0], ip, m);
	tlm_sym_free(s);

	/* A shorter build-id is another build-id too. */
	m->build_id[m->build_id_len / 2] ^= 0x40;
	m->build_id_len--;
	s = tlm_sym_new();
	tlm_sym_module(s, m);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 1);
	expect_stale(&f[0], ip, m);
	tlm_sym_free(s);

	/* No recorded build-id: nothing to check, the file is used as is. */
	m->build_id_len = 0;
	s = tlm_sym_new();
	tlm_sym_module(s, m);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 2);
	assert_string_equal(f[0].function, "fix_lib_inner");
	tlm_sym_free(s);

	/* The file is gone: stale, build-id or not. */
	unlink(path);
	s = tlm_sym_new();
	tlm_sym_module(s, m);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 1);
	expect_stale(&f[0], ip, m);
	tlm_sym_free(s);

	/* Not an ELF file. */
	FILE *junk = fopen(path, "w");
	assert_non_null(junk);
	fputs("not an ELF file\n", junk);
	fclose(junk);
	s = tlm_sym_new();
	tlm_sym_module(s, m);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 8), 1);
	expect_stale(&f[0], ip, m);
	tlm_sym_free(s);

	unlink(path);
	rmdir(dir);
	free(m);
}

/* vdso and unnamed objects: no file to read, and nothing wrong either. */
static void test_pseudo_modules(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_lib_direct);
	const char *names[] = {"linux-vdso.so.1", "[vdso]", ""};
	for (size_t i = 0; i < 3; i++) {
		struct tlm_rec_module *m = fake_of(ip, names[i]);
		struct tlm_symbolizer *s = tlm_sym_new();
		tlm_sym_module(s, m);
		struct tlm_frame f[4];
		assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 1);
		assert_false(f[0].stale);
		assert_null(f[0].function);
		assert_null(f[0].file);
		expect_module(&f[0], ip, m);
		tlm_sym_free(s);
		free(m);
	}
}

/* Address reuse: the most recently loaded module over an address wins, a
 * loaded one over an unloaded one; results change as records arrive. */
static void test_module_choice(void **state)
{
	(void)state;
	uint64_t ip = ip_of(fix_lib_direct);
	struct tlm_rec_module *real = fake_of(ip, NULL);
	struct tlm_rec_module *gone = fake_of(ip, "/nonexistent/tlm/libgone.so");
	real->id = 1;
	gone->id = 2;
	struct tlm_symbolizer *s = tlm_sym_new();
	struct tlm_frame f[4];

	tlm_sym_module(s, real);
	assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 1);
	assert_string_equal(f[0].function, "fix_lib_direct");

	tlm_sym_module(s, gone); /* loaded later over the same range */
	assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 1);
	expect_stale(&f[0], ip, gone);

	tlm_sym_module_unload(s, 2); /* the older, still loaded one wins */
	assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 1);
	assert_string_equal(f[0].function, "fix_lib_direct");

	tlm_sym_module_unload(s, 1); /* both unloaded: the most recent */
	assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 1);
	assert_string_equal(f[0].module, gone->path);
	assert_true(f[0].stale);

	tlm_sym_module_unload(s, 99); /* unknown id: ignored */
	tlm_sym_module(s, real);      /* reloaded (same id reused): it again */
	assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 1);
	assert_string_equal(f[0].function, "fix_lib_direct");

	/* Just past the end of the module: the return address is the end, the
	 * call before it is inside. */
	uint64_t end = real->seg[real->nseg - 1].end;
	assert_int_equal(tlm_sym_resolve(s, end + 1, f, 4), 1);
	assert_null(f[0].module);
	assert_int_equal(tlm_sym_resolve(s, end, f, 4), 1);
	assert_non_null(f[0].module);
	tlm_sym_free(s);
	free(real);
	free(gone);
}

/* Damaged records: out-of-range counts, unterminated path, inverted
 * segments. Nothing may crash or read out of bounds. */
static void test_hostile_records(void **state)
{
	(void)state;
	struct tlm_rec_module *m = calloc(1, sizeof *m);
	assert_non_null(m);
	m->id = 7;
	m->base = 0x1000;
	m->nseg = 1000;
	for (int i = 0; i < TLM_MAX_SEGMENTS; i++) {
		m->seg[i].start = 0x100000u * (uint64_t)(i + 1);
		m->seg[i].end = i % 2 ? m->seg[i].start - 1 : m->seg[i].start + 0x1000;
	}
	m->build_id_len = 1000;
	memset(m->build_id, 0xab, sizeof m->build_id);
	memset(m->path, 'x', sizeof m->path); /* no NUL */
	struct tlm_symbolizer *s = tlm_sym_new();
	tlm_sym_module(s, m);
	tlm_sym_module(s, NULL);
	struct tlm_frame f[4];
	assert_int_equal(tlm_sym_resolve(s, 0x100010, f, 4), 1);
	assert_non_null(f[0].module);
	assert_int_equal(strlen(f[0].module), sizeof m->path);
	assert_false(f[0].stale); /* no slash: not a file path */
	assert_int_equal(tlm_sym_resolve(s, 0x200010, f, 4), 1); /* inverted: dropped */
	assert_null(f[0].module);
	/* The same garbage with a path that is a directory. */
	snprintf(m->path, sizeof m->path, "/tmp/");
	tlm_sym_module(s, m);
	assert_int_equal(tlm_sym_resolve(s, 0x100010, f, 4), 1);
	assert_true(f[0].stale);
	tlm_sym_free(s);
	free(m);
}

/* A module path naming a FIFO (or a device): never opened for reading, so
 * the report cannot wait forever for a writer; the frame keeps its module. */
static void test_fifo_module(void **state)
{
	(void)state;
	char dir[] = "/tmp/tlm-fifo-XXXXXX", fifo[64];
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof fifo, "%s/libfifo.so", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	struct tlm_rec_module *m = calloc(1, sizeof *m);
	assert_non_null(m);
	m->id = 9;
	m->base = 0x100000;
	m->nseg = 1;
	m->seg[0].start = 0x100000;
	m->seg[0].end = 0x200000;
	struct tlm_symbolizer *s = tlm_sym_new();
	const char *paths[] = {fifo, "/dev/zero", "/dev/tty"};
	alarm(20); /* a hang is a failure (SIGALRM ends the test), not a stuck suite */
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		snprintf(m->path, sizeof m->path, "%s", paths[i]);
		m->id = 9 + (uint32_t)i;
		tlm_sym_module(s, m);
		struct tlm_frame f[4];
		assert_int_equal(tlm_sym_resolve(s, 0x100010 + i, f, 4), 1);
		assert_non_null(f[0].module);
		assert_string_equal(f[0].module, paths[i]);
		assert_null(f[0].function);
		assert_true(f[0].stale);
	}
	alarm(0);
	tlm_sym_free(s);
	free(m);
	unlink(fifo);
	rmdir(dir);
}

/* ---- how the file was shipped ---------------------------------------- */

static const char *env_path(const char *var)
{
	const char *p = getenv(var);
	if (!p || !*p)
		tlm_test_skip("objcopy", "%s not set (no objcopy at configure time): not tested", var);
	return p;
}

/* Fully stripped (.dynsym only): exported function names, no lines. */
static void test_stripped(void **state)
{
	(void)state;
	const char *path = env_path("TLM_TEST_SYMFIX_STRIPPED");
	uint64_t ip = ip_of(fix_lib_outer);
	struct tlm_rec_module *m = fake_of(ip, path);
	struct tlm_symbolizer *s = tlm_sym_new();
	tlm_sym_module(s, m);
	struct tlm_frame f[4];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 1);
	assert_string_equal(f[0].function, "fix_lib_outer");
	assert_null(f[0].file);
	assert_int_equal(f[0].line, 0);
	assert_false(f[0].stale);
	expect_module(&f[0], ip, m);
	tlm_sym_free(s);
	free(m);
}

/* DWARF in a separate file named by .gnu_debuglink, next to the object. */
static void test_split_debuglink(void **state)
{
	(void)state;
	const char *path = env_path("TLM_TEST_SYMFIX_SPLIT");
	uint64_t ip = ip_of(fix_lib_outer);
	struct tlm_rec_module *m = fake_of(ip, path);
	struct tlm_symbolizer *s = tlm_sym_new();
	tlm_sym_module(s, m);
	struct tlm_frame f[4];
	assert_int_equal(tlm_sym_resolve(s, ip, f, 4), 2);
	expect_frame(&f[0], "fix_lib_inner", "fix_lib.c", fix_lib_line_inner, true);
	expect_frame(&f[1], "fix_lib_outer", "fix_lib.c", fix_lib_line_outer, false);
	tlm_sym_free(s);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_address),
		cmocka_unit_test(test_stale_build_id),
		cmocka_unit_test(test_pseudo_modules),
		cmocka_unit_test(test_module_choice),
		cmocka_unit_test(test_hostile_records),
		cmocka_unit_test(test_fifo_module),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_split_debuglink),
	};
	return cmocka_run_group_tests(tests, symt_setup, symt_teardown);
}
