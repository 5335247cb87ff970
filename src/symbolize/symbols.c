/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - the module map of a trace and tlm_sym_resolve().
 *
 * Every MODULE record is kept, in trace order, with its loaded/unloaded
 * state. A module's file is opened (and its build-id checked) only when an
 * address first resolves into it: a process maps hundreds of objects, a
 * report's stacks touch a few. Files are opened once per path and shared by
 * all records of that path (see sym_object.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_cache.h"
#include "symbolize/sym_object.h"
#include "symbolize/sym_strtab.h"
#include "symbolize/symbols.h"
#include "common/grow.h"

/* Deeper inline chains than this are cut (innermost kept). */
#define MAX_INLINE 32

enum mod_state {
	MOD_UNCHECKED = 0, /* file not looked at yet */
	MOD_OK,            /* symbolize through obj */
	MOD_STALE,         /* file missing, unreadable or rebuilt since the run */
	MOD_NO_FILE,       /* not a file (vdso, unnamed): nothing to read, nothing wrong */
};

struct mod {
	uint32_t id;
	bool loaded;
	enum mod_state state;
	uint64_t base, lo, hi; /* [lo, hi): hull of the segments, a quick filter */
	uint32_t nseg;
	struct { uint64_t start, end; } seg[TLM_MAX_SEGMENTS];
	uint32_t build_id_len;
	uint8_t build_id[64];
	const char *path; /* interned */
	struct tlm__symobj *obj; /* borrowed from the symbolizer's file list */
};

struct file {
	const char *path; /* interned: compared by pointer */
	struct tlm__symobj *obj; /* NULL: could not be opened */
};

struct tlm_symbolizer {
	struct mod *mods;
	size_t nmods, capmods;
	struct file *files;
	size_t nfiles, capfiles;
	struct tlm__strtab *strs;
	struct tlm__symcache *cache;
};

struct tlm_symbolizer *tlm_sym_new(void)
{
	struct tlm_symbolizer *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->strs = tlm__strtab_new();
	s->cache = tlm__symcache_new();
	if (!s->strs || !s->cache) {
		tlm_sym_free(s);
		return NULL;
	}
	return s;
}

void tlm_sym_free(struct tlm_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++)
		tlm__symobj_close(s->files[i].obj);
	free(s->files);
	free(s->mods);
	tlm__strtab_free(s->strs);
	tlm__symcache_free(s->cache);
	free(s);
}

void tlm_sym_module(struct tlm_symbolizer *s, const struct tlm_rec_module *m)
{
	if (!s || !m)
		return;
	if (s->nmods == s->capmods && tlm__grow(&s->mods, &s->capmods, s->nmods + 1, sizeof *s->mods, 64))
		return; /* its addresses will resolve to no module */
	const char *path = tlm__strtab_intern(s->strs, m->path, strnlen(m->path, sizeof m->path));
	if (!path)
		return;
	struct mod *d = &s->mods[s->nmods];
	memset(d, 0, sizeof *d);
	d->id = m->id;
	d->loaded = true;
	d->base = m->base;
	d->path = path;
	d->lo = UINT64_MAX;
	uint32_t nseg = m->nseg < TLM_MAX_SEGMENTS ? m->nseg : TLM_MAX_SEGMENTS;
	for (uint32_t i = 0; i < nseg; i++) {
		if (m->seg[i].start >= m->seg[i].end)
			continue; /* empty or inverted: a damaged record */
		d->seg[d->nseg].start = m->seg[i].start;
		d->seg[d->nseg].end = m->seg[i].end;
		d->nseg++;
		if (m->seg[i].start < d->lo)
			d->lo = m->seg[i].start;
		if (m->seg[i].end > d->hi)
			d->hi = m->seg[i].end;
	}
	d->build_id_len = m->build_id_len < sizeof d->build_id ? m->build_id_len : sizeof d->build_id;
	memcpy(d->build_id, m->build_id, d->build_id_len);
	s->nmods++;
	/* A newer module may now cover addresses already resolved. */
	tlm__symcache_clear(s->cache);
}

void tlm_sym_module_unload(struct tlm_symbolizer *s, uint32_t id)
{
	if (!s)
		return;
	/* Ids are unique in a trace; if one repeats, the newest loaded wins. */
	for (size_t i = s->nmods; i-- > 0;) {
		if (s->mods[i].id == id && s->mods[i].loaded) {
			s->mods[i].loaded = false;
			tlm__symcache_clear(s->cache);
			return;
		}
	}
}

static bool mod_holds(const struct mod *m, uint64_t a)
{
	if (a < m->lo || a >= m->hi)
		return false;
	for (uint32_t i = 0; i < m->nseg; i++)
		if (a >= m->seg[i].start && a < m->seg[i].end)
			return true;
	return false;
}

/* The module most recently loaded over a, preferring one still loaded: an
 * unloaded module's range may since have been reused by another object. */
static struct mod *find_mod(struct tlm_symbolizer *s, uint64_t a)
{
	struct mod *unloaded = NULL;
	for (size_t i = s->nmods; i-- > 0;) {
		struct mod *m = &s->mods[i];
		if (!mod_holds(m, a))
			continue;
		if (m->loaded)
			return m;
		if (!unloaded)
			unloaded = m;
	}
	return unloaded;
}

/* Pseudo-objects: "" (an unnamed main program), "linux-vdso.so.1",
 * "[vdso]". Real objects are named by a path, which has a slash. */
static bool is_file_path(const char *p)
{
	return p[0] && p[0] != '[' && strchr(p, '/');
}

static struct tlm__symobj *open_file(struct tlm_symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].path == path)
			return s->files[i].obj;
	if (s->nfiles == s->capfiles && tlm__grow(&s->files, &s->capfiles, s->nfiles + 1, sizeof *s->files, 16))
		return NULL;

	struct tlm__symobj *o = tlm__symobj_open(path);
	s->files[s->nfiles++] = (struct file){.path = path, .obj = o};
	return o;
}

static void check_mod(struct tlm_symbolizer *s, struct mod *m)
{
	if (!is_file_path(m->path)) {
		m->state = MOD_NO_FILE;
		return;
	}
	m->obj = open_file(s, m->path);
	if (!m->obj) {
		m->state = MOD_STALE;
		return;
	}
	/* Without a recorded build-id there is nothing to check against: the
	 * file is trusted as is. */
	const uint8_t *bits = NULL;
	size_t n = tlm__symobj_build_id(m->obj, &bits);
	if (m->build_id_len && (n != m->build_id_len || memcmp(bits, m->build_id, n) != 0))
		m->state = MOD_STALE;
	else
		m->state = MOD_OK;
}

static size_t resolve(struct tlm_symbolizer *s, uint64_t ip, struct tlm_frame *f, size_t max)
{
	memset(f, 0, sizeof *f);
	f->ip = ip;
	f->kind = TLM_FRAME_NATIVE;
	/* A return address: the call is the instruction before it. ip 0 has no
	 * call before it (ip - 1 wraps to the top, which no module holds). */
	uint64_t pc = ip - 1;
	struct mod *m = find_mod(s, pc);
	if (!m)
		return 1;
	f->module = m->path;
	f->module_offset = ip - m->base;
	if (m->state == MOD_UNCHECKED)
		check_mod(s, m);
	if (m->state == MOD_STALE)
		f->stale = true;
	if (m->state != MOD_OK)
		return 1;
	size_t n = tlm__symobj_lookup(m->obj, pc - m->base, s->strs, f, max);
	for (size_t i = 1; i < n; i++) {
		f[i].ip = f[0].ip;
		f[i].kind = f[0].kind;
		f[i].module = f[0].module;
		f[i].module_offset = f[0].module_offset;
		f[i].stale = false;
	}
	return n ? n : 1;
}

size_t tlm_sym_resolve(struct tlm_symbolizer *s, uint64_t ip, struct tlm_frame *out, size_t max)
{
	if (!max || !out)
		return 0;
	if (!s) {
		memset(out, 0, sizeof *out);
		out->ip = ip;
		return 1;
	}
	size_t n;
	const struct tlm_frame *f = tlm__symcache_get(s->cache, ip, &n);
	struct tlm_frame tmp[MAX_INLINE];
	if (!f) {
		n = resolve(s, ip, tmp, MAX_INLINE);
		tlm__symcache_put(s->cache, ip, tmp, n); /* on failure: uncached, still right */
		f = tmp;
	}
	if (n > max)
		n = max;
	memcpy(out, f, n * sizeof *out);
	return n;
}
