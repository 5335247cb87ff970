/* SPDX-License-Identifier: MIT */
/*
 * test_symbols.c - the symbolizer on real return addresses: a shared object,
 * the PIE program itself, C++, libc through /usr/lib/debug, split debug
 * files, stripped files, stale and missing files, overlapping modules.
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

#include "analysis/symbols.h"
#include "fixture.h"
#include "modmap.h"

static uint64_t captured;

/* The fixture calls this; its return address lies in the fixture. */
static __attribute__((noinline)) void capture(void)
{
	captured = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static uint64_t ip_of(void (*f)(fix_cb))
{
	captured = 0;
	f(capture);
	assert_true(captured != 0);
	return captured;
}

static struct tlm_rec_module *mods;
static size_t nmods;

/* A symbolizer fed this process's whole module map. */
static struct tlm_symbolizer *sym_all(void)
{
	struct tlm_symbolizer *s = tlm_sym_new();
	assert_non_null(s);
	for (size_t i = 0; i < nmods; i++)
		tlm_sym_module(s, &mods[i]);
	return s;
}

static const struct tlm_rec_module *mod_of(uint64_t ip)
{
	const struct tlm_rec_module *m = tlm_test_modmap_find(mods, nmods, ip - 1);
	assert_non_null(m);
	return m;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

static void expect_frame(const struct tlm_frame *f, const char *fn, const char *file, int line, bool inlined)
{
	assert_non_null(f->function);
	assert_string_equal(f->function, fn);
	assert_non_null(f->file);
	assert_string_equal(base_name(f->file), file);
	assert_int_equal(f->line, line);
	assert_int_equal(f->inlined, inlined);
	assert_false(f->stale);
	assert_int_equal(f->kind, TLM_FRAME_NATIVE);
}

static void expect_module(const struct tlm_frame *f, uint64_t ip, const struct tlm_rec_module *m)
{
	assert_int_equal(f->ip, ip);
	assert_non_null(f->module);
	assert_string_equal(f->module, m->path);
	assert_int_equal(f->module_offset, ip - m->base);
}

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
	skip();
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
		fprintf(stderr, "no %s (libc6-dbg): skipped\n", dbg);
		skip();
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
	if (!p || !*p) {
		fprintf(stderr, "%s not set (no objcopy at build time): skipped\n", var);
		return NULL;
	}
	return p;
}

/* Fully stripped (.dynsym only): exported function names, no lines. */
static void test_stripped(void **state)
{
	(void)state;
	const char *path = env_path("TLM_TEST_SYMFIX_STRIPPED");
	if (!path)
		skip();
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
	if (!path)
		skip();
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

static int setup(void **state)
{
	(void)state;
	/* Offline and deterministic: never ask a debuginfod server. */
	unsetenv("DEBUGINFOD_URLS");
	mods = tlm_test_modmap(&nmods);
	return mods && nmods ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(mods);
	return 0;
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
		cmocka_unit_test(test_unknown_address),
		cmocka_unit_test(test_stale_build_id),
		cmocka_unit_test(test_pseudo_modules),
		cmocka_unit_test(test_module_choice),
		cmocka_unit_test(test_hostile_records),
		cmocka_unit_test(test_fifo_module),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_split_debuglink),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
