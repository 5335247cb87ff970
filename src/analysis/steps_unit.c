/* SPDX-License-Identifier: MIT */
/*
 * steps_unit.c - the unit of activation checkpointing in a Python program:
 * the nn.Module whose forward holds the activations (docs/report.md,
 * "Activations and checkpointing").
 *
 * A Python frame is a module's forward when its caller is torch's
 * Module._call_impl. Of the modules on the stacks of the step's allocations
 * (on the step's thread), the unit is one that calls other modules (never a
 * leaf op: Linear, Conv2d), runs twice or more in the step, and holds the
 * most activation bytes; then the one with more instances, then the inner
 * one (ResNet's BasicBlock, not the Sequential of its layer). An instance
 * begins at each allocation made at the same place as the unit's first one
 * (the same frames from the innermost to the module's line) after one made
 * elsewhere in it: each block's first layer (its workspace and output).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"

#define MAX_MODULES 64

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_line(const struct tlm_frame *a, const struct tlm_frame *b)
{
	return a->kind == b->kind && str_eq(a->function, b->function) && str_eq(a->file, b->file) && a->line == b->line;
}

static bool ends_with(const char *s, const char *t)
{
	size_t n = s ? strlen(s) : 0, m = strlen(t);
	return n >= m && !strcmp(s + n - m, t);
}

static bool called_by_module(const struct tlm_frame *f, size_t n, size_t i)
{
	if (f[i].kind != TLM_FRAME_PYTHON || i + 1 >= n)
		return false;
	const struct tlm_frame *c = &f[i + 1];
	bool call = c->function && (!strcmp(c->function, "_call_impl") || ends_with(c->function, "._call_impl"));
	return call && c->kind == TLM_FRAME_PYTHON && c->file && strstr(c->file, "torch/nn/modules/module.py") &&
	       !(f[i].file && strstr(f[i].file, "torch/nn/modules/module.py"));
}

/* The module's own forward for the frame c that _call_impl called: c, or,
 * through decorators' wrappers (closures: transformers' forward_with_
 * checkpointing, deprecate_kwarg), the first frame inward named *.forward. */
static size_t own_forward(const struct tlm_frame *f, size_t c)
{
	for (size_t j = c, hops = 0; hops <= 4; j--, hops++) {
		if (f[j].kind != TLM_FRAME_PYTHON)
			break;
		if (ends_with(f[j].function, ".forward") || ends_with(f[j].function, "_forward_impl"))
			return j;
		if (!f[j].function || !strstr(f[j].function, "<locals>") || !j)
			break;
	}
	return c;
}

/* Frame i is a module's forward (see own_forward). */
static bool module_frame(const struct tlm_frame *f, size_t n, size_t i)
{
	for (size_t c = i; c < n && c <= i + 5; c++)
		if (called_by_module(f, n, c) && own_forward(f, c) == i)
			return true;
	return false;
}

struct mod {
	const char *function, *file;
	uint64_t bytes, instances;
	bool nonleaf;
	uint32_t first_site;     /* the site of its first allocation in the step */
	size_t first_at;         /* the module's frame index there */
};

struct site_fr {
	const struct tlm_frame *f;
	size_t n;
	bool seen;
};

/* Index of module m's frame in the site's stack, SIZE_MAX: not on it. */
static size_t at_of(const struct site_fr *s, const struct mod *m)
{
	for (size_t i = 0; i < s->n; i++)
		if (module_frame(s->f, s->n, i) && str_eq(s->f[i].function, m->function) && str_eq(s->f[i].file, m->file))
			return i;
	return SIZE_MAX;
}

/* Whether site a at frame ia begins an instance like site b at ib does. */
static bool same_start(const struct site_fr *a, size_t ia, const struct site_fr *b, size_t ib)
{
	if (ia != ib)
		return false;
	for (size_t i = 0; i <= ia; i++)
		if (!same_line(&a->f[i], &b->f[i]))
			return false;
	return true;
}

int tlm__steps_unit(struct tlm_report *r, const struct tlm__srec *recs, size_t lo, size_t hi, int device,
		    uint32_t thread, uint64_t peak_ev, uint64_t t1, uint32_t nsites, size_t *unit_at, uint8_t *starts,
		    uint32_t *key_of)
{
	struct site_fr *sf = calloc(nsites + 1, sizeof *sf);
	struct mod m[MAX_MODULES];
	size_t nm = 0;
	if (!sf)
		return -1;
	for (uint32_t v = 0; v < nsites; v++) {
		unit_at[v] = SIZE_MAX;
		starts[v] = 0;
	}
	for (size_t i = lo; i < hi; i++) {
		const struct tlm__srec *x = &recs[i];
		if (x->device != device || x->mkind != TLM_MEM_DEVICE || x->thread != thread || x->site >= nsites)
			continue;
		struct site_fr *s = &sf[x->site];
		if (!s->seen) {
			s->seen = true;
			s->n = tlm_report_frames(r, x->stack, &s->f);
		}
		bool held = x->ev <= peak_ev && x->fev > peak_ev && x->ft < t1;
		size_t inner = SIZE_MAX; /* the innermost module frame */
		for (size_t k = 0; k < s->n; k++) {
			if (!module_frame(s->f, s->n, k))
				continue;
			size_t q = 0;
			while (q < nm && !(str_eq(m[q].function, s->f[k].function) && str_eq(m[q].file, s->f[k].file)))
				q++;
			if (q == nm) {
				if (nm == MAX_MODULES)
					continue;
				m[nm++] = (struct mod){s->f[k].function, s->f[k].file, 0, 0, false, x->site, k};
			}
			if (held)
				m[q].bytes += x->size;
			if (inner == SIZE_MAX)
				inner = k;
			else
				m[q].nonleaf = true;
		}
	}
	/* instances: runs of allocations made where each module's first one
	 * was (a layer's workspace and its output come from one line) */
	bool prev[MAX_MODULES] = {false};
	for (size_t i = lo; i < hi; i++) {
		const struct tlm__srec *x = &recs[i];
		if (x->device != device || x->mkind != TLM_MEM_DEVICE || x->thread != thread || x->site >= nsites)
			continue;
		for (size_t q = 0; q < nm; q++) {
			size_t a = at_of(&sf[x->site], &m[q]);
			if (a == SIZE_MAX)
				continue;
			bool st = same_start(&sf[x->site], a, &sf[m[q].first_site], m[q].first_at);
			m[q].instances += st && !prev[q];
			prev[q] = st;
		}
	}
	size_t best = SIZE_MAX;
	for (size_t q = 0; q < nm; q++) {
		if (!m[q].nonleaf || m[q].instances < 2 || !m[q].bytes)
			continue;
		if (best == SIZE_MAX || m[q].bytes > m[best].bytes ||
		    (m[q].bytes == m[best].bytes && m[q].instances > m[best].instances))
			best = q;
	}
	/* a module inside it holding nearly as much (9/10), as many times or
	 * more, is the finer unit (ResNet's BasicBlock in its layer's Sequential) */
	for (bool moved = best != SIZE_MAX; moved;) {
		moved = false;
		for (size_t q = 0; q < nm; q++) {
			if (q == best || !m[q].nonleaf || m[q].instances < m[best].instances ||
			    10 * m[q].bytes < 9 * m[best].bytes)
				continue;
			size_t a = at_of(&sf[m[q].first_site], &m[best]);
			if (a != SIZE_MAX && a > m[q].first_at) {
				best = q;
				moved = true;
			}
		}
	}
	if (best != SIZE_MAX)
		for (uint32_t v = 0; v < nsites; v++) {
			if (!sf[v].seen)
				continue;
			unit_at[v] = at_of(&sf[v], &m[best]);
			starts[v] = unit_at[v] != SIZE_MAX &&
				    same_start(&sf[v], unit_at[v], &sf[m[best].first_site], m[best].first_at);
			/* the place inside the unit: the first site with the same inner frames */
			key_of[v] = v;
			for (uint32_t w = 0; w < v && unit_at[v] != SIZE_MAX; w++)
				if (sf[w].seen && unit_at[w] != SIZE_MAX && same_start(&sf[v], unit_at[v], &sf[w], unit_at[w])) {
					key_of[v] = key_of[w];
					break;
				}
		}
	free(sf);
	return best != SIZE_MAX;
}
