/* SPDX-License-Identifier: MIT */
/*
 * labels.c - the one rule that names a site in one line, shared by every
 * renderer (summary, text, HTML, JSON "label", Chrome export).
 *
 * A label shows what tells a site apart from the others on the same screen:
 *  1. from the site's most useful frame (tlm_report_useful_frame) on, frames
 *     that every stack of the screen, or of the report's headline sites
 *     (the first few of each section), shares from the inner end are code
 *     shared by all of them (a checked-malloc helper, a framework's Python
 *     wrapper): the label starts at the first frame outside it;
 *  2. sites that would still read alike get the first frame where they
 *     differ (up to two more frames, then their stack id);
 *  3. the device, when the screen holds more than one.
 * The site's frame is its first in the program's own files, with the
 * library function it allocated through beside it ("main (train.py:41) via
 * Linear.forward (linear.py:134)"); on PyTorch's backward thread the
 * autograd node that made it ("ConvolutionBackward0 (autograd's backward)");
 * never an address while a named frame is on the stack (frames.c).
 * Cost: O(n log n) string compares per screen, pairwise work only inside a
 * group of alike sites (at most LBL_GROUP_MAX of them).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "render/render.h"

#define LBL_CTX_TOP 10     /* headline sites per section that define "shared code" */
#define LBL_EXTRA 2        /* frames added to tell alike sites apart */
#define LBL_GROUP_MAX 64   /* larger groups of alike sites go straight to their stack ids */
#define LBL_MAX 480        /* bytes of one label */

struct seq {
	const struct tlm_frame *f;
	size_t n, u; /* frames, index of the useful frame */
};

static struct seq seq_of(struct tlm_report *r, uint32_t stack_id)
{
	struct seq s = {0};
	s.n = stack_id ? tlm_report_frames(r, stack_id, &s.f) : 0;
	const struct tlm_frame *u = s.n ? tlm_report_useful_frame(r, stack_id) : NULL;
	s.u = u && u >= s.f && u < s.f + s.n ? (size_t)(u - s.f) : 0;
	return s;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The same line of code: Python by function, file and line; native by
 * symbol and line when symbolized, else by module and offset. */
static bool same_frame(const struct tlm_frame *a, const struct tlm_frame *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->function || b->function)
		return str_eq(a->function, b->function) && str_eq(a->file, b->file) && a->line == b->line &&
		       (a->kind == TLM_FRAME_PYTHON || str_eq(a->module, b->module));
	if (a->module || b->module)
		return str_eq(a->module, b->module) && a->module_offset == b->module_offset;
	return a->ip == b->ip;
}

/* Frames shared from the inner end (after each useful frame) by all the
 * sequences; 0 unless at least two of them differ. */
static size_t shared_prefix(const struct seq *s, size_t n)
{
	size_t k = 0;
	bool differ = false;
	for (;; k++) {
		bool end = false;
		for (size_t i = 0; i < n; i++)
			if (s[i].u + k >= s[i].n)
				end = true;
		if (end) {
			for (size_t i = 0; i < n; i++)
				if (s[i].u + k < s[i].n)
					differ = true; /* one is longer */
			break;
		}
		bool all = true;
		for (size_t i = 1; i < n && all; i++)
			all = same_frame(&s[0].f[s[0].u + k], &s[i].f[s[i].u + k]);
		if (!all) {
			differ = true;
			break;
		}
	}
	return differ ? k : 0;
}

static void add_ctx(struct tlm_report *r, struct seq *c, size_t *n, uint32_t stack_id)
{
	if (!stack_id)
		return;
	struct seq s = seq_of(r, stack_id);
	if (s.n)
		c[(*n)++] = s;
}

/* Code shared by all the report's headline sites (the first few of each
 * section: what the text report prints, never every stack of a big run). */
static size_t report_shared(struct tlm_report *r)
{
	struct seq c[5 * LBL_CTX_TOP];
	size_t n = 0;
	for (size_t i = 0; i < LBL_CTX_TOP; i++) {
		if (i < r->nleaks)
			add_ctx(r, c, &n, r->leaks[i].stack_id);
		if (i < r->nlive)
			add_ctx(r, c, &n, r->live[i].stack_id);
		if (i < r->ngc_freed)
			add_ctx(r, c, &n, r->gc_freed[i].stack_id);
		if (i < r->nat_peak)
			add_ctx(r, c, &n, r->at_peak[i].stack_id);
		if (i < r->nooms)
			add_ctx(r, c, &n, r->ooms[i].stack_id);
	}
	return n >= 2 ? shared_prefix(c, n) : 0;
}

struct lbl {
	struct seq s;
	int device;
	uint32_t stack_id;
	size_t shown[1 + LBL_EXTRA]; /* frame indices into s.f, in order */
	size_t nshown;
	bool by_id;
	char *text;
};

static void render_one(struct lbl *l, bool show_dev, const char *sep)
{
	char *p = l->text, *end = l->text + LBL_MAX;
	p[0] = 0;
	if (show_dev) {
		if (l->device < 0)
			p += snprintf(p, (size_t)(end - p), "host: ");
		else
			p += snprintf(p, (size_t)(end - p), "dev %d: ", l->device);
	}
	if (!l->s.n) {
		snprintf(p, (size_t)(end - p), "(no stack recorded)");
		return;
	}
	for (size_t i = 0; i < l->nshown && p < end - 1; i++) {
		char fr[512], node[128];
		const struct tlm_frame *x = &l->s.f[l->shown[i]];
		if (tlm__autograd_node(x, node, sizeof node))
			snprintf(fr, sizeof fr, "%s (autograd's backward)", node);
		else
			tlm__frame_text(fr, sizeof fr, x);
		p += snprintf(p, (size_t)(end - p), "%s%s", i ? sep : "", fr);
		/* the library function the program's line allocated through: the
		 * innermost named frame (Linear.forward, not torch's call plumbing) */
		size_t at = l->shown[i], v = 0;
		while (v < at && !l->s.f[v].function)
			v++;
		if (!i && at == l->s.u && v < at && tlm__frame_user(x) && !tlm__frame_user(&l->s.f[v]) && p < end - 1) {
			tlm__frame_text(fr, sizeof fr, &l->s.f[v]);
			p += snprintf(p, (size_t)(end - p), " via %s", fr);
		}
	}
	if (l->by_id && p < end - 1)
		snprintf(p, (size_t)(end - p), " (stack %u)", l->stack_id);
}

static int by_text(const void *a, const void *b, void *ctx)
{
	const struct lbl *L = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(L[x].text, L[y].text);
	return c ? c : (x > y) - (x < y);
}

/* The first frame (at or after position from, counted from the useful frame;
 * else before the useful frame, from index pre) where a differs from b;
 * SIZE_MAX: nowhere. */
static size_t first_diff(const struct lbl *a, const struct lbl *b, size_t from, size_t pre)
{
	for (size_t k = from;; k++) {
		bool ha = a->s.u + k < a->s.n, hb = b->s.u + k < b->s.n;
		if (!ha && !hb)
			break;
		if (!ha)
			return SIZE_MAX; /* b goes on: b shows the difference */
		if (!hb || !same_frame(&a->s.f[a->s.u + k], &b->s.f[b->s.u + k]))
			return a->s.u + k;
	}
	for (size_t k = pre; k < a->s.u && k < b->s.n; k++)
		if (!same_frame(&a->s.f[k], &b->s.f[k]))
			return k;
	return SIZE_MAX;
}

/* Whether a group of alike sites holds more than one stack (the same stack
 * twice, as churn's sizes of one site, needs no id to tell it apart). */
static bool ids_differ(const struct lbl *L, const size_t *ord, size_t g, size_t e)
{
	for (size_t a = g + 1; a < e; a++)
		if (L[ord[a]].stack_id != L[ord[g]].stack_id)
			return true;
	return false;
}

/* One round: each site alike another (same text) gets the first frame where
 * it differs from the nearest of them. Returns whether any label changed. */
static bool round_apart(struct lbl *L, size_t n, size_t *ord, bool show_dev, const char *sep, bool last)
{
	qsort_r(ord, n, sizeof *ord, by_text, L);
	bool changed = false;
	for (size_t g = 0, e; g < n; g = e) {
		for (e = g + 1; e < n && !strcmp(L[ord[e]].text, L[ord[g]].text); e++)
			;
		if (e - g < 2)
			continue;
		size_t add[LBL_GROUP_MAX];
		for (size_t a = g; a < e && e - g <= LBL_GROUP_MAX; a++) {
			struct lbl *x = &L[ord[a]];
			size_t last = x->nshown ? x->shown[x->nshown - 1] : 0, from = 0, pre = 0, best = SIZE_MAX;
			if (x->nshown && last >= x->s.u)
				from = last + 1 - x->s.u;
			else if (x->nshown) { /* already showed a frame before the useful one */
				from = x->s.n;
				pre = last + 1;
			}
			for (size_t b = g; b < e; b++) {
				size_t d = b == a ? SIZE_MAX : first_diff(x, &L[ord[b]], from, pre);
				if (d < best)
					best = d;
			}
			add[a - g] = best;
		}
		for (size_t a = g; a < e; a++) {
			struct lbl *x = &L[ord[a]];
			if (e - g <= LBL_GROUP_MAX && !last && add[a - g] != SIZE_MAX && x->nshown < 1 + LBL_EXTRA) {
				x->shown[x->nshown++] = add[a - g];
				changed = true;
			} else if ((last || e - g > LBL_GROUP_MAX) && ids_differ(L, ord, g, e)) {
				x->by_id = true;
				changed = true;
			}
			render_one(x, show_dev, sep);
		}
	}
	return changed;
}

int tlm__labels_make(struct tlm__labels *out, struct tlm_report *r, const int *dev, const uint32_t *stack,
		     size_t n, const char *sep)
{
	memset(out, 0, sizeof *out);
	if (!n)
		return 0;
	struct lbl *L = calloc(n, sizeof *L);
	size_t *ord = malloc(n * sizeof *ord);
	char *text = malloc(n * LBL_MAX);
	char **s = malloc(n * sizeof *s);
	if (!L || !ord || !text || !s) {
		free(L);
		free(ord);
		free(text);
		free(s);
		return -1;
	}
	bool show_dev = false;
	for (size_t i = 0; i < n; i++) {
		L[i].s = seq_of(r, stack[i]);
		L[i].device = dev[i];
		L[i].stack_id = stack[i];
		L[i].text = text + i * LBL_MAX;
		show_dev |= dev[i] != dev[0];
		ord[i] = i;
	}
	/* 1: code shared by the screen's sites or by the report's headline sites */
	struct seq *sq = malloc(n * sizeof *sq);
	size_t ns = 0;
	if (sq) {
		for (size_t i = 0; i < n; i++)
			if (L[i].s.n)
				sq[ns++] = L[i].s;
	}
	size_t k_screen = ns >= 2 ? shared_prefix(sq, ns) : 0, k_report = report_shared(r);
	free(sq);
	size_t k = k_screen > k_report ? k_screen : k_report;
	for (size_t i = 0; i < n; i++) {
		struct lbl *x = &L[i];
		if (x->s.n) {
			size_t at = x->s.u + k;
			x->shown[x->nshown++] = at < x->s.n ? at : x->s.n - 1;
		}
		render_one(x, show_dev, sep);
	}
	/* 2: alike sites get the frames that tell them apart, then their ids */
	for (int round = 0; round <= LBL_EXTRA; round++)
		if (!round_apart(L, n, ord, show_dev, sep, round == LBL_EXTRA))
			break;
	for (size_t i = 0; i < n; i++)
		s[i] = L[i].text;
	out->n = n;
	out->text = s;
	out->buf = text;
	out->shown = NULL;
	/* the frame indices each label shows, for renderers that print stacks */
	out->shown = malloc(n * sizeof *out->shown);
	if (out->shown)
		for (size_t i = 0; i < n; i++) {
			out->shown[i].n = L[i].nshown;
			for (size_t j = 0; j < L[i].nshown; j++)
				out->shown[i].idx[j] = L[i].shown[j];
		}
	free(L);
	free(ord);
	return 0;
}

void tlm__labels_free(struct tlm__labels *l)
{
	free(l->text);
	free(l->buf);
	free(l->shown);
	memset(l, 0, sizeof *l);
}

const char *tlm__label(const struct tlm__labels *l, size_t i)
{
	return l && i < l->n ? l->text[i] : "(no label)";
}

int tlm__labels_ooms(struct tlm__labels *out, struct tlm_report *r)
{
	size_t n = r->nooms;
	int *dev = malloc((n ? n : 1) * sizeof *dev);
	uint32_t *st = malloc((n ? n : 1) * sizeof *st);
	int rc = -1;
	if (dev && st) {
		for (size_t i = 0; i < n; i++) {
			dev[i] = r->ooms[i].device;
			st[i] = r->ooms[i].stack_id;
		}
		rc = tlm__labels_make(out, r, dev, st, n, TLM__LABEL_SEP);
	}
	free(dev);
	free(st);
	return rc;
}

/* The labels of n records of any site type: each holds an int device and
 * a uint32_t stack id at those offsets, stride bytes apart. */
static int labels_of(struct tlm__labels *out, struct tlm_report *r, const void *base, size_t stride, size_t dev_at,
		     size_t stack_at, size_t n, const char *sep)
{
	int *dev = malloc((n ? n : 1) * sizeof *dev);
	uint32_t *st = malloc((n ? n : 1) * sizeof *st);
	int rc = -1;
	if (dev && st) {
		const char *p = base;
		for (size_t i = 0; i < n; i++) {
			memcpy(&dev[i], p + i * stride + dev_at, sizeof dev[i]);
			memcpy(&st[i], p + i * stride + stack_at, sizeof st[i]);
		}
		rc = tlm__labels_make(out, r, dev, st, n, sep);
	}
	free(dev);
	free(st);
	return rc;
}

int tlm__labels_peak(struct tlm__labels *out, struct tlm_report *r, const struct tlm_report_peak_site *s,
		     size_t n, const char *sep)
{
	return labels_of(out, r, s, sizeof *s, offsetof(struct tlm_report_peak_site, device),
			 offsetof(struct tlm_report_peak_site, stack_id), n, sep);
}

int tlm__labels_sites(struct tlm__labels *out, struct tlm_report *r, const struct tlm_report_site *s, size_t n,
		      const char *sep)
{
	return labels_of(out, r, s, sizeof *s, offsetof(struct tlm_report_site, device),
			 offsetof(struct tlm_report_site, stack_id), n, sep);
}
