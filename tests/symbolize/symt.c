/* SPDX-License-Identifier: MIT */
/*
 * symt.c - what the symbolizer tests share (symt.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symt.h"

uint64_t captured;

/* The fixture calls this; its return address lies in the fixture. */
static __attribute__((noinline)) void capture(void)
{
	captured = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

uint64_t ip_of(void (*f)(fix_cb))
{
	captured = 0;
	f(capture);
	assert_true(captured != 0);
	return captured;
}

static struct tlm_rec_module *mods;
static size_t nmods;

/* A symbolizer fed this process's whole module map. */
struct tlm_symbolizer *sym_all(void)
{
	struct tlm_symbolizer *s = tlm_sym_new();
	assert_non_null(s);
	for (size_t i = 0; i < nmods; i++)
		tlm_sym_module(s, &mods[i]);
	return s;
}

const struct tlm_rec_module *mod_of(uint64_t ip)
{
	const struct tlm_rec_module *m = tlm_test_modmap_find(mods, nmods, ip - 1);
	assert_non_null(m);
	return m;
}

const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

void expect_frame(const struct tlm_frame *f, const char *fn, const char *file, int line, bool inlined)
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

void expect_module(const struct tlm_frame *f, uint64_t ip, const struct tlm_rec_module *m)
{
	assert_int_equal(f->ip, ip);
	assert_non_null(f->module);
	assert_string_equal(f->module, m->path);
	assert_int_equal(f->module_offset, ip - m->base);
}

int symt_setup(void **state)
{
	(void)state;
	/* Offline and deterministic: never ask a debuginfod server. */
	unsetenv("DEBUGINFOD_URLS");
	mods = tlm_test_modmap(&nmods);
	return mods && nmods ? 0 : -1;
}

int symt_teardown(void **state)
{
	(void)state;
	free(mods);
	return 0;
}
