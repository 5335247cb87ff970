/* SPDX-License-Identifier: MIT */
/*
 * writer_intern.c - global ids for stacks, strings and Python stacks.
 *
 * Each ring names its stacks by per-thread ids; the writer maps each
 * definition to one global id, writing a STACK, STRING or PYSTACK record the
 * first time it sees it. Open-addressing tables, grown with malloc except in
 * a fatal-signal drain (no_alloc: a definition that does not fit gets id 0).
 */
#include <stdlib.h>
#include <string.h>

#include "recording/stack/pystack.h"
#include "recording/stack/stack.h"
#include "recording/writer/writer_int.h"

struct gstack {            /* global stack intern table entry */
	uint64_t hash;
	uint32_t id, depth;
	size_t off;
};

static struct {
	struct gstack *gs;
	size_t gs_cap, gs_n;
	uint32_t next_gid;          /* ids of STACK and PYSTACK records share one space */
	struct gstr { uint64_t hash; uint32_t id, len; size_t off; } *str;
	size_t str_cap, str_n;
	char *spool;
	size_t spool_n, spool_cap;
	struct gstack *ps;          /* Python stacks: depth = frames, off into pkeys (native, then 3 per frame) */
	size_t ps_cap, ps_n;
	uint32_t *pkeys;
	size_t pkeys_n, pkeys_cap;
	uint64_t *gips;
	size_t gips_n, gips_cap;
} I;

static uint64_t ghash(const uint64_t *ip, uint32_t d)
{
	uint64_t h = 1469598103934665603ull ^ d;
	for (uint32_t i = 0; i < d; i++)
		h = (h ^ ip[i]) * 1099511628211ull;
	return h;
}

static bool gs_grow(void)
{
	size_t nc = I.gs_cap ? I.gs_cap * 2 : 4096;
	struct gstack *n = calloc(nc, sizeof *n);
	if (!n)
		return false;
	for (size_t i = 0; i < I.gs_cap; i++) {
		if (!I.gs[i].id)
			continue;
		size_t j = I.gs[i].hash & (nc - 1);
		while (n[j].id)
			j = (j + 1) & (nc - 1);
		n[j] = I.gs[i];
	}
	free(I.gs);
	I.gs = n;
	I.gs_cap = nc;
	return true;
}

/* Returns the global id (0 if it cannot be stored), writing a STACK record
 * when the stack is new to the trace. */
uint32_t tlm__wi_stack(const uint64_t *ip, uint32_t d, bool no_alloc)
{
	if ((I.gs_n + 1) * 2 > I.gs_cap && (no_alloc || !gs_grow()))
		return 0;
	uint64_t h = ghash(ip, d);
	size_t j = h & (I.gs_cap - 1);
	for (; I.gs[j].id; j = (j + 1) & (I.gs_cap - 1))
		if (I.gs[j].hash == h && I.gs[j].depth == d && !memcmp(&I.gips[I.gs[j].off], ip, d * 8))
			return I.gs[j].id;
	if (I.gips_n + d > I.gips_cap) {
		size_t nc = I.gips_cap ? I.gips_cap * 2 : 65536;
		while (nc < I.gips_n + d)
			nc *= 2;
		uint64_t *n = no_alloc ? NULL : realloc(I.gips, nc * 8);
		if (!n)
			return 0;
		I.gips = n;
		I.gips_cap = nc;
	}
	memcpy(&I.gips[I.gips_n], ip, d * 8);
	I.gs[j] = (struct gstack){.hash = h, .id = ++I.next_gid, .depth = d, .off = I.gips_n};
	I.gips_n += d;
	I.gs_n++;
	if (!tlm__wf.failed)
		tlm__wf_check(tlm_tw_stack(tlm__wf.tw, I.gs[j].id, ip, d));
	return I.gs[j].id;
}

/* ------------------------------------------------- strings, Python stacks */

static uint64_t bhash(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem, size_t first, bool no_alloc)
{
	if (need <= *cap)
		return true;
	if (no_alloc)
		return false;
	size_t nc = *cap ? *cap : first;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, nc * elem);
	if (!q)
		return false;
	*p = q;
	*cap = nc;
	return true;
}

/* Rehash an open-addressing table of n_cap entries (id 0 = empty) to twice the size. */
static bool table_grow(void **tab, size_t *cap, size_t elem, size_t first)
{
	size_t nc = *cap ? *cap * 2 : first;
	char *n = calloc(nc, elem), *o = *tab;
	if (!n)
		return false;
	for (size_t i = 0; i < *cap; i++) {
		const char *e = o + i * elem;
		uint64_t h;
		uint32_t id;
		memcpy(&h, e, 8);
		memcpy(&id, e + 8, 4);
		if (!id)
			continue;
		size_t j = h & (nc - 1);
		for (;;) {
			uint32_t jid;
			memcpy(&jid, n + j * elem + 8, 4);
			if (!jid)
				break;
			j = (j + 1) & (nc - 1);
		}
		memcpy(n + j * elem, e, elem);
	}
	free(o);
	*tab = n;
	*cap = nc;
	return true;
}

static uint32_t str_intern(const char *s, uint32_t len, bool no_alloc)
{
	if ((I.str_n + 1) * 2 > I.str_cap && (no_alloc || !table_grow((void **)&I.str, &I.str_cap, sizeof *I.str, 1024)))
		return 0;
	uint64_t h = bhash(s, len, 1469598103934665603ull);
	size_t j = h & (I.str_cap - 1);
	for (; I.str[j].id; j = (j + 1) & (I.str_cap - 1))
		if (I.str[j].hash == h && I.str[j].len == len && !memcmp(I.spool + I.str[j].off, s, len))
			return I.str[j].id;
	if (!grow((void **)&I.spool, &I.spool_cap, I.spool_n + len + 1, 1, 65536, no_alloc))
		return 0;
	memcpy(I.spool + I.spool_n, s, len);
	I.str[j] = (struct gstr){.hash = h, .id = (uint32_t)I.str_n + 1, .len = len, .off = I.spool_n};
	I.spool_n += len;
	I.str_n++;
	if (!tlm__wf.failed)
		tlm__wf_check(tlm_tw_string(tlm__wf.tw, I.str[j].id, s, len));
	return I.str[j].id;
}

/* A PYSTACK definition from a ring (header slot at tail): global id, or 0. */
uint32_t tlm__wi_pystack(const struct tlm__ring *r, uint64_t tail, uint32_t native_gid, bool no_alloc)
{
	const struct tlm__slot *s = &r->slots[tail & r->mask];
	static struct tlm_rec_pystack ps; /* under the writer lock */
	static uint8_t buf[TLM__PY_MAX_FRAMES * (8u + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX) + 64];
	uint32_t bytes = (uint32_t)s->addr, n = (uint32_t)s->size;
	if (bytes > sizeof buf || n > TLM__PY_MAX_FRAMES)
		return 0;
	for (uint32_t o = 0; o < bytes; o += 64)
		memcpy(buf + o, &r->slots[(tail + 1 + o / 64) & r->mask], 64);
	ps.id = 0;
	ps.native = native_gid;
	ps.depth = 0;
	uint32_t o = 0;
	for (uint32_t i = 0; i < n; i++) {
		int32_t line;
		uint16_t fl, nl;
		if (o + 8 > bytes)
			return 0;
		memcpy(&line, buf + o, 4);
		memcpy(&fl, buf + o + 4, 2);
		memcpy(&nl, buf + o + 6, 2);
		if (o + 8u + fl + nl > bytes)
			return 0;
		uint32_t fs = str_intern((const char *)buf + o + 8, fl, no_alloc);
		uint32_t ns = str_intern((const char *)buf + o + 8 + fl, nl, no_alloc);
		if (!fs || !ns)
			return 0;
		ps.f[ps.depth++] = (struct tlm_py_frame){fs, ns, line};
		o += 8u + fl + nl;
	}
	if ((I.ps_n + 1) * 2 > I.ps_cap && (no_alloc || !table_grow((void **)&I.ps, &I.ps_cap, sizeof *I.ps, 1024)))
		return 0;
	uint32_t nk = 1 + 3 * ps.depth;
	if (!grow((void **)&I.pkeys, &I.pkeys_cap, I.pkeys_n + nk, sizeof *I.pkeys, 65536, no_alloc))
		return 0;
	uint32_t *k = I.pkeys + I.pkeys_n;
	k[0] = ps.native;
	for (uint32_t i = 0; i < ps.depth; i++) {
		k[1 + 3 * i] = ps.f[i].file;
		k[2 + 3 * i] = ps.f[i].name;
		k[3 + 3 * i] = (uint32_t)ps.f[i].line;
	}
	uint64_t h = bhash(k, nk * 4, 1469598103934665603ull);
	size_t j = h & (I.ps_cap - 1);
	for (; I.ps[j].id; j = (j + 1) & (I.ps_cap - 1))
		if (I.ps[j].hash == h && I.ps[j].depth == nk && !memcmp(I.pkeys + I.ps[j].off, k, nk * 4))
			return I.ps[j].id;
	I.ps[j] = (struct gstack){.hash = h, .id = ++I.next_gid, .depth = nk, .off = I.pkeys_n};
	I.pkeys_n += nk;
	I.ps_n++;
	ps.id = I.ps[j].id;
	if (!tlm__wf.failed)
		tlm__wf_check(tlm_tw_pystack(tlm__wf.tw, &ps));
	return ps.id;
}

/* Whether a definition can be stored without allocating (a producer's
 * drain, tlm__wm_drain_help). Conservative for a Python stack: as if each
 * of its strings were new. */
bool tlm__wi_stack_fits(uint32_t d)
{
	return (I.gs_n + 1) * 2 <= I.gs_cap && I.gips_n + d <= I.gips_cap;
}

bool tlm__wi_pystack_fits(uint32_t frames, uint32_t bytes)
{
	return (I.str_n + 2 * (size_t)frames + 1) * 2 <= I.str_cap && I.spool_n + bytes + 1 <= I.spool_cap &&
	       (I.ps_n + 1) * 2 <= I.ps_cap && I.pkeys_n + 1 + 3 * (size_t)frames <= I.pkeys_cap;
}

/* At the trace's start (an ordinary context, where malloc is safe): the
 * tables at their first sizes, so that a drain that may not allocate (a
 * fatal signal, _exit, a termination signal) before any other drain ran
 * still writes its events' stacks. Untouched pages cost no memory. */
void tlm__wi_prepare(void)
{
	if (!I.gs_cap)
		gs_grow();
	if (!I.gips_cap && (I.gips = malloc(65536 * sizeof *I.gips)) != NULL)
		I.gips_cap = 65536;
	if (!I.str_cap)
		table_grow((void **)&I.str, &I.str_cap, sizeof *I.str, 1024);
	grow((void **)&I.spool, &I.spool_cap, 1, 1, 65536, false);
	if (!I.ps_cap)
		table_grow((void **)&I.ps, &I.ps_cap, sizeof *I.ps, 1024);
	grow((void **)&I.pkeys, &I.pkeys_cap, 1, sizeof *I.pkeys, 65536, false);
}

/* A fork child's new trace knows none of the parent's definitions. The
 * buffers are kept, emptied: the child may end by _exit or a signal before
 * it could allocate new ones. */
void tlm__wi_reset(void)
{
	if (I.gs)
		memset(I.gs, 0, I.gs_cap * sizeof *I.gs);
	if (I.str)
		memset(I.str, 0, I.str_cap * sizeof *I.str);
	if (I.ps)
		memset(I.ps, 0, I.ps_cap * sizeof *I.ps);
	I.gs_n = I.gips_n = I.str_n = I.spool_n = I.ps_n = I.pkeys_n = 0;
	I.next_gid = 0;
}
