/* SPDX-License-Identifier: MIT */
/*
 * diff.c - matching two sides (diff.h) and rendering the result as text (at
 * most 100 columns) or JSON (schema tlm-diff/1, docs/diff.md).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "diff.h"
#include "encoders/json_out.h"
#include "render/render.h"

#define TEXT_ROWS 20
#define TEXT_FRAMES 4
#define GATE_FRAMES 3 /* enough to get past a helper such as a checked malloc */

int64_t tlm_diff_sub(uint64_t after, uint64_t before)
{
	if (after >= before)
		return after - before > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(after - before);
	return before - after > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(before - after);
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
}

static int by_delta(const void *a, const void *b)
{
	const struct tlm_diff_row *x = a, *y = b;
	uint64_t mx = mag(x->delta_bytes), my = mag(y->delta_bytes);
	if (mx != my)
		return mx > my ? -1 : 1;
	if (x->after_bytes != y->after_bytes)
		return x->after_bytes > y->after_bytes ? -1 : 1;
	if (x->before_bytes != y->before_bytes)
		return x->before_bytes > y->before_bytes ? -1 : 1;
	const char *kx = x->after ? x->after->key : x->before->key, *ky = y->after ? y->after->key : y->before->key;
	return strcmp(kx, ky);
}

/* Both arrays are sorted by key: a merge. */
static int match(const struct tlm_diff_site *b, size_t nb, const struct tlm_diff_site *a, size_t na,
		 struct tlm_diff_row **out, size_t *n)
{
	struct tlm_diff_row *r = calloc(nb + na + 1, sizeof *r);
	if (!r)
		return -1;
	size_t i = 0, j = 0, k = 0;
	while (i < nb || j < na) {
		int c = i >= nb ? 1 : j >= na ? -1 : strcmp(b[i].key, a[j].key);
		struct tlm_diff_row *w = &r[k++];
		if (c <= 0) {
			w->before = &b[i++];
			w->device = w->before->device;
			w->before_bytes = w->before->bytes;
			w->before_count = w->before->count;
		}
		if (c >= 0) {
			w->after = &a[j++];
			w->device = w->after->device;
			w->after_bytes = w->after->bytes;
			w->after_count = w->after->count;
		}
		w->delta_bytes = tlm_diff_sub(w->after_bytes, w->before_bytes);
		w->delta_count = tlm_diff_sub(w->after_count, w->before_count);
		if (!w->before)
			w->status = TLM_DIFF_NEW;
		else if (!w->after)
			w->status = TLM_DIFF_GONE;
		else if (w->after_bytes > w->before_bytes)
			w->status = TLM_DIFF_GREW;
		else if (w->after_bytes < w->before_bytes)
			w->status = TLM_DIFF_SHRANK;
		else
			w->status = TLM_DIFF_SAME;
	}
	qsort(r, k, sizeof *r, by_delta);
	*out = r;
	*n = k;
	return 0;
}

static int dev_cmp(int da, const char *ka, int db, const char *kb)
{
	if (da != db)
		return da < db ? -1 : 1;
	return strcmp(ka, kb);
}

/* Base rows before new rows of one (device, kind), each side in its order. */
static int by_dev_side(const void *a, const void *b)
{
	const struct tlm_diff_devrow *x = a, *y = b;
	int c = dev_cmp(x->device, x->kind, y->device, y->kind);
	if (c || !x->before != !y->before)
		return c ? c : x->before ? -1 : 1;
	uintptr_t px = (uintptr_t)(x->before ? x->before : x->after), py = (uintptr_t)(y->before ? y->before : y->after);
	return (px > py) - (px < py);
}

/* Pairs the devices of both sides by (device, kind): the i-th of BASE with
 * the i-th of NEW (a report has each once; a crafted one may repeat), the
 * rest alone. Sorting keeps it O(n log n) for any input. */
static int pair_devices(const struct tlm_diff_side *base, const struct tlm_diff_side *new_, struct tlm_diff *d)
{
	size_t n = 0;
	struct tlm_diff_devrow *all = calloc(base->ndev + new_->ndev + 1, sizeof *all);
	d->dev = calloc(base->ndev + new_->ndev + 1, sizeof *d->dev);
	if (!all || !d->dev) {
		free(all);
		return -1;
	}
	for (size_t i = 0; i < base->ndev; i++)
		all[n++] = (struct tlm_diff_devrow){base->dev[i].device, base->dev[i].kind, &base->dev[i], NULL};
	for (size_t i = 0; i < new_->ndev; i++)
		all[n++] = (struct tlm_diff_devrow){new_->dev[i].device, new_->dev[i].kind, NULL, &new_->dev[i]};
	qsort(all, n, sizeof *all, by_dev_side);
	for (size_t g = 0, e; g < n; g = e) {
		size_t nb = 0;
		for (e = g; e < n && !dev_cmp(all[e].device, all[e].kind, all[g].device, all[g].kind); e++)
			nb += all[e].before != NULL;
		size_t nn = e - g - nb;
		for (size_t i = 0; i < nb || i < nn; i++)
			d->dev[d->ndev++] = (struct tlm_diff_devrow){all[g].device, all[g].kind,
								     i < nb ? all[g + i].before : NULL,
								     i < nn ? all[g + nb + i].after : NULL};
	}
	free(all);
	return 0;
}

int tlm_diff_compute(const struct tlm_diff_side *base, const struct tlm_diff_side *new_, bool gate,
		     uint64_t gate_bytes, struct tlm_diff *d)
{
	memset(d, 0, sizeof *d);
	d->base = base;
	d->new_ = new_;
	if (match(base->leaks, base->nleaks, new_->leaks, new_->nleaks, &d->leaks, &d->nleaks) ||
	    match(base->live, base->nlive, new_->live, new_->nlive, &d->live, &d->nlive) ||
	    (base->has_peak && new_->has_peak &&
	     match(base->peak, base->npeak, new_->peak, new_->npeak, &d->peak, &d->npeak)))
		goto nomem;
	if (pair_devices(base, new_, d))
		goto nomem;
	d->leak_growth = tlm_diff_sub(new_->leak_bytes, base->leak_bytes);
	d->gate = gate;
	d->gate_bytes = gate_bytes;
	d->failed = gate && d->leak_growth > 0 && (uint64_t)d->leak_growth > gate_bytes;
	tlm__diff_steps_compute(d);
	return 0;
nomem:
	tlm_diff_free(d);
	return -1;
}

void tlm_diff_free(struct tlm_diff *d)
{
	free(d->leaks);
	free(d->live);
	free(d->peak);
	free(d->dev);
	memset(d, 0, sizeof *d);
}

static int64_t peak_growth(const struct tlm_diff_devrow *r)
{
	return tlm_diff_sub(r->after ? r->after->peak_allocated : 0, r->before ? r->before->peak_allocated : 0);
}

/* The peak gate's rule for one device: it grew by more than the limit. */
static bool peak_over(const struct tlm_diff *d, const struct tlm_diff_devrow *r)
{
	int64_t grew = peak_growth(r);
	return d->peak_gate && grew > 0 && (uint64_t)grew > d->peak_gate_bytes;
}

void tlm_diff_peak_gate(struct tlm_diff *d, uint64_t bytes)
{
	d->peak_gate = true;
	d->peak_gate_bytes = bytes;
	d->peak_failed = false;
	for (size_t i = 0; i < d->ndev; i++)
		d->peak_failed |= peak_over(d, &d->dev[i]);
}

static const char *status_name(int s)
{
	static const char *const n[] = {"same", "grew", "shrank", "new", "gone"};
	return s >= 0 && s <= TLM_DIFF_GONE ? n[s] : "?";
}

/* ---- text ---------------------------------------------------------------- */

static char *signed_human(char *buf, size_t n, int64_t v)
{
	char h[24];
	tlm__human(h, sizeof h, mag(v));
	snprintf(buf, n, "%s%s", v > 0 ? "+" : v < 0 ? "-" : "", h);
	return buf;
}

/* A JSON frame as the report's struct tlm_frame, for tlm__frame_text. */
static void frame_of(const struct tlm_jv *j, struct tlm_frame *f)
{
	memset(f, 0, sizeof *f);
	int64_t line = 0;
	const char *ip = tlm_jv_str(tlm_jv_get(j, "ip"));
	f->ip = ip ? strtoull(ip, NULL, 16) : 0;
	f->function = tlm_jv_str(tlm_jv_get(j, "function"));
	f->file = tlm_jv_str(tlm_jv_get(j, "file"));
	if (tlm_jv_i64(tlm_jv_get(j, "line"), &line) && line > 0 && line < INT32_MAX)
		f->line = (int)line;
	f->module = tlm_jv_str(tlm_jv_get(j, "module"));
	const struct tlm_jv *b = tlm_jv_get(j, "inlined");
	f->inlined = b && b->type == TLM_JV_BOOL && b->b;
	b = tlm_jv_get(j, "stale");
	f->stale = b && b->type == TLM_JV_BOOL && b->b;
}

static const struct tlm_jv *row_stack(const struct tlm_diff_row *r)
{
	return r->after ? r->after->stack : r->before->stack;
}

static bool row_cut(const struct tlm_diff_row *r)
{
	return r->after ? r->after->stack_cut : r->before->stack_cut;
}

/* The first max frames of a stack; tables also say how many more there are,
 * the gate's messages stay short. */
static void stack_lines(FILE *f, const struct tlm_jv *stack, size_t max, bool say_more, bool cut)
{
	size_t n = tlm_jv_len(stack);
	if (!n) {
		tlm__line(f, "        (no stack recorded)");
		return;
	}
	char buf[512];
	for (size_t i = 0; i < n && i < max; i++) {
		struct tlm_frame fr;
		frame_of(tlm_jv_at(stack, i), &fr);
		tlm__frame_text(buf, sizeof buf, &fr);
		tlm__line(f, "        %s %s", i ? "from" : "at  ", buf);
	}
	if (say_more && n > max)
		tlm__line(f, "        ... %zu more frame%s%s", n - max, n - max == 1 ? "" : "s",
			  cut ? " (the Python stack was cut at 64 frames)" : "");
	else if (say_more && cut)
		tlm__line(f, "        ... (the Python stack was cut at 64 frames)");
}

static void site_table(FILE *f, const char *title, const struct tlm_diff_row *r, size_t n, uint64_t before,
		       uint64_t after)
{
	size_t cnt[TLM_DIFF_GONE + 1] = {0};
	for (size_t i = 0; i < n; i++)
		cnt[r[i].status]++;
	char a[32], b[32], c[32];
	tlm__human_pair(a, sizeof a, b, sizeof b, before, after);
	tlm__line(f, "%s", "");
	tlm__line(f, "%s: %s -> %s (%s); sites: %zu grew, %zu shrank, %zu new, %zu gone, %zu same", title, a, b,
		  signed_human(c, sizeof c, tlm_diff_sub(after, before)), cnt[TLM_DIFF_GREW], cnt[TLM_DIFF_SHRANK],
		  cnt[TLM_DIFF_NEW], cnt[TLM_DIFF_GONE], cnt[TLM_DIFF_SAME]);
	if (n == cnt[TLM_DIFF_SAME])
		return; /* nothing changed: the head line said it, no empty table */
	tlm__line(f, "  %-7s %4s %14s %9s %14s %9s %14s %9s", "change", "dev", "bytes before", "count", "bytes after",
		  "count", "delta", "count");
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].status == TLM_DIFF_SAME)
			continue; /* counted in the head line */
		if (shown++ == TEXT_ROWS) {
			/* counted, not n - i - same: a same site can sort before a
			 * changed one of delta 0 (a new or gone site of 0 bytes) */
			size_t more = 0;
			for (size_t k = i; k < n; k++)
				more += r[k].status != TLM_DIFF_SAME;
			tlm__line(f, "  ... %zu more changed sites (--format json lists them all)", more);
			break;
		}
		char bb[32], ab[32], db[32], dc[32];
		snprintf(dc, sizeof dc, "%s%" PRId64, r[i].delta_count > 0 ? "+" : "", r[i].delta_count);
		tlm__human_pair(bb, sizeof bb, ab, sizeof ab, r[i].before_bytes, r[i].after_bytes);
		tlm__line(f, "  %-7s %4d %14s %9" PRIu64 " %14s %9" PRIu64 " %14s %9s", status_name(r[i].status),
			  r[i].device, r[i].before ? bb : "-", r[i].before_count, r[i].after ? ab : "-",
			  r[i].after_count, signed_human(db, sizeof db, r[i].delta_bytes), dc);
		stack_lines(f, row_stack(&r[i]), TEXT_FRAMES, true, row_cut(&r[i]));
	}
}

static void dev_cell(char *buf, size_t n, const struct tlm_diff_dev *b, const struct tlm_diff_dev *a, int what)
{
	char x[24], y[24], z[32];
	if (what == 2) {
		if (a && b) {
			int d = 2; /* more decimals when two different values would print the same */
			snprintf(x, sizeof x, "%.2f", b->frag);
			snprintf(y, sizeof y, "%.2f", a->frag);
			if (a->frag != b->frag && !strcmp(x, y))
				d = 4;
			snprintf(buf, n, "%.*f -> %.*f (%+.*f)", d, b->frag, d, a->frag, d, a->frag - b->frag);
		}
		else
			snprintf(buf, n, "%s -> %s", b ? (snprintf(x, sizeof x, "%.2f", b->frag), x) : "-",
				 a ? (snprintf(y, sizeof y, "%.2f", a->frag), y) : "-");
		return;
	}
	uint64_t vb = b ? (what ? b->peak_allocated : b->peak_reserved) : 0;
	uint64_t va = a ? (what ? a->peak_allocated : a->peak_reserved) : 0;
	tlm__human_pair(x, sizeof x, y, sizeof y, vb, va);
	snprintf(buf, n, "%s -> %s (%s)", b ? x : "-", a ? y : "-", signed_human(z, sizeof z, tlm_diff_sub(va, vb)));
}

int tlm_diff_text(const struct tlm_diff *d, FILE *f)
{
	tlm__line(f, "tlm diff: %s -> %s", d->base->path, d->new_->path);
	site_table(f, "LEAKED", d->leaks, d->nleaks, d->base->leak_bytes, d->new_->leak_bytes);
	site_table(f, "LIVE AT END", d->live, d->nlive, d->base->live_bytes, d->new_->live_bytes);
	if (d->base->has_peak && d->new_->has_peak) {
		site_table(f, "AT PEAK", d->peak, d->npeak, d->base->peak_bytes, d->new_->peak_bytes);
	} else {
		tlm__line(f, "%s", "");
		tlm__line(f, "AT PEAK: not compared (%s is a report from a tlm without it)",
			  d->base->has_peak ? "NEW" : "BASE");
	}
	tlm__line(f, "%s", "");
	tlm__line(f, "DEVICES: before -> after (delta)");
	if (!d->ndev)
		tlm__line(f, "  no memory was allocated in either run");
	for (size_t i = 0; i < d->ndev; i++) {
		const struct tlm_diff_devrow *r = &d->dev[i];
		char cell[128], dev[24];
		if (r->device < 0)
			snprintf(dev, sizeof dev, "host");
		else
			snprintf(dev, sizeof dev, "device %d", r->device);
		tlm__line(f, "  %s, %s%s", dev, r->kind, !r->before ? " (new)" : !r->after ? " (gone)" : "");
		dev_cell(cell, sizeof cell, r->before, r->after, 0);
		tlm__line(f, "    peak reserved    %s", cell);
		dev_cell(cell, sizeof cell, r->before, r->after, 1);
		tlm__line(f, "    peak allocated   %s", cell);
		dev_cell(cell, sizeof cell, r->before, r->after, 2);
		tlm__line(f, "    frag at peak     %s", cell);
	}
	if (d->gate || d->peak_gate)
		tlm__line(f, "%s", "");
	if (d->gate) {
		char g[32];
		tlm__line(f, "gate: leaked bytes %s, limit +%" PRIu64 " B: %s",
			  signed_human(g, sizeof g, d->leak_growth), d->gate_bytes, d->failed_leaks ? "FAILED" : "passed");
		tlm__diff_steps_text(d, f);
	}
	if (d->peak_gate) {
		int64_t most = 0;
		for (size_t i = 0; i < d->ndev; i++)
			if (peak_growth(&d->dev[i]) > most)
				most = peak_growth(&d->dev[i]);
		char g[32];
		tlm__line(f, "gate: peak allocated %s on the device that grew most, limit +%" PRIu64 " B: %s",
			  signed_human(g, sizeof g, most), d->peak_gate_bytes, d->peak_failed ? "FAILED" : "passed");
	}
	return ferror(f) ? -1 : 0;
}

/* The rows that grew, device filter (-2: all), with their first frames. */
static void grown_rows(FILE *f, const struct tlm_diff_row *rows, size_t n, int device)
{
	char g[32];
	for (size_t i = 0; i < n; i++) {
		const struct tlm_diff_row *r = &rows[i];
		if (r->delta_bytes <= 0 || (device != -2 && r->device != device))
			continue;
		tlm__line(f, "  %s on device %d (%s site, %" PRIu64 " -> %" PRIu64 " B):", signed_human(g, sizeof g, r->delta_bytes),
			  r->device, status_name(r->status), r->before_bytes, r->after_bytes);
		tlm__diff_label(f, r);
		stack_lines(f, row_stack(r), GATE_FRAMES, false, false);
	}
}

void tlm_diff_gate_message(const struct tlm_diff *d, FILE *f)
{
	char g[32];
	tlm__diff_steps_message(d, f);
	if (d->failed_leaks) {
		fprintf(f, "tlm diff: leaked bytes grew by %" PRId64 " B (%s), more than --fail-on-growth %" PRIu64 "\n",
			d->leak_growth, signed_human(g, sizeof g, d->leak_growth), d->gate_bytes);
		grown_rows(f, d->leaks, d->nleaks, -2);
	}
	if (!d->peak_failed)
		return;
	for (size_t i = 0; i < d->ndev; i++) {
		const struct tlm_diff_devrow *r = &d->dev[i];
		if (!peak_over(d, r))
			continue;
		int64_t grew = peak_growth(r);
		tlm_text_line(f, "tlm diff: peak allocated of device %d (%s) grew by %" PRId64 " B (%s), more than "
			   "--fail-on-peak-growth %" PRIu64 "\n",
			r->device, r->kind, grew, signed_human(g, sizeof g, grew), d->peak_gate_bytes);
		grown_rows(f, d->peak, d->npeak, r->device); /* what held more of it */
	}
}

/* ---- JSON ---------------------------------------------------------------- */

/* Re-emits a stack read from a report: the frame fields of report-json.md. */
static void stack_json(struct tlm__json *j, const struct tlm_jv *stack)
{
	static const char *const str_keys[] = {"kind", "function", "file", "module", "ip", "offset"};
	tlm__json_key(j, "stack");
	tlm__json_arr(j);
	for (size_t i = 0; i < tlm_jv_len(stack); i++) {
		const struct tlm_jv *fr = tlm_jv_at(stack, i);
		tlm__json_obj(j);
		for (size_t k = 0; k < sizeof str_keys / sizeof *str_keys; k++) {
			const struct tlm_jv *v = tlm_jv_get(fr, str_keys[k]);
			tlm__json_key(j, str_keys[k]);
			if (v && v->type == TLM_JV_STR)
				tlm__json_strn(j, v->s, v->len);
			else
				tlm__json_null(j);
		}
		int64_t line;
		tlm__json_key(j, "line");
		if (tlm_jv_i64(tlm_jv_get(fr, "line"), &line))
			tlm__json_i64(j, line);
		else
			tlm__json_null(j);
		static const char *const bool_keys[] = {"inlined", "stale"};
		for (size_t k = 0; k < 2; k++) {
			const struct tlm_jv *v = tlm_jv_get(fr, bool_keys[k]);
			tlm__json_key(j, bool_keys[k]);
			tlm__json_bool(j, v && v->type == TLM_JV_BOOL && v->b);
		}
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
}

static void section_json(struct tlm__json *j, const char *key, const struct tlm_diff_row *r, size_t n,
			 uint64_t before, uint64_t after, uint64_t bcount, uint64_t acount)
{
	tlm__json_key(j, key);
	tlm__json_obj(j);
	tlm__json_ku(j, "before_bytes", before);
	tlm__json_ku(j, "after_bytes", after);
	tlm__json_ki(j, "delta_bytes", tlm_diff_sub(after, before));
	tlm__json_ku(j, "before_count", bcount);
	tlm__json_ku(j, "after_count", acount);
	tlm__json_ki(j, "delta_count", tlm_diff_sub(acount, bcount));
	tlm__json_key(j, "sites");
	tlm__json_arr(j);
	for (size_t i = 0; i < n; i++) {
		tlm__json_obj(j);
		tlm__json_key(j, "status");
		tlm__json_str(j, status_name(r[i].status));
		tlm__json_ki(j, "device", r[i].device);
		tlm__json_ku(j, "before_bytes", r[i].before_bytes);
		tlm__json_ku(j, "before_count", r[i].before_count);
		tlm__json_ku(j, "after_bytes", r[i].after_bytes);
		tlm__json_ku(j, "after_count", r[i].after_count);
		tlm__json_ki(j, "delta_bytes", r[i].delta_bytes);
		tlm__json_ki(j, "delta_count", r[i].delta_count);
		stack_json(j, row_stack(&r[i]));
		if (row_cut(&r[i])) { /* as in the report: only when cut */
			tlm__json_key(j, "python_stack_cut");
			tlm__json_bool(j, true);
		}
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__json_obj_end(j);
}

static void change_json(struct tlm__json *j, const char *key, bool hb, uint64_t b, bool ha, uint64_t a)
{
	tlm__json_key(j, key);
	tlm__json_obj(j);
	tlm__json_key(j, "before");
	hb ? tlm__json_u64(j, b) : tlm__json_null(j);
	tlm__json_key(j, "after");
	ha ? tlm__json_u64(j, a) : tlm__json_null(j);
	tlm__json_ki(j, "delta", tlm_diff_sub(ha ? a : 0, hb ? b : 0));
	tlm__json_obj_end(j);
}

int tlm_diff_json(const struct tlm_diff *d, FILE *f)
{
	struct tlm__json j;
	tlm__json_init(&j, f);
	tlm__json_obj(&j);
	tlm__json_key(&j, "schema");
	tlm__json_str(&j, TLM_DIFF_SCHEMA);
	tlm__json_key(&j, "base");
	tlm__json_str(&j, d->base->path);
	tlm__json_key(&j, "new");
	tlm__json_str(&j, d->new_->path);
	section_json(&j, "leaks", d->leaks, d->nleaks, d->base->leak_bytes, d->new_->leak_bytes,
		     d->base->leak_count, d->new_->leak_count);
	section_json(&j, "live_at_end", d->live, d->nlive, d->base->live_bytes, d->new_->live_bytes,
		     d->base->live_count, d->new_->live_count);
	if (d->base->has_peak && d->new_->has_peak) {
		section_json(&j, "at_peak", d->peak, d->npeak, d->base->peak_bytes, d->new_->peak_bytes,
			     d->base->peak_count, d->new_->peak_count);
	} else {
		tlm__json_key(&j, "at_peak");
		tlm__json_null(&j);
	}
	tlm__json_key(&j, "devices");
	tlm__json_arr(&j);
	for (size_t i = 0; i < d->ndev; i++) {
		const struct tlm_diff_devrow *r = &d->dev[i];
		const struct tlm_diff_dev *b = r->before, *a = r->after;
		tlm__json_obj(&j);
		tlm__json_ki(&j, "device", r->device);
		tlm__json_key(&j, "kind");
		tlm__json_str(&j, r->kind);
		tlm__json_key(&j, "status");
		tlm__json_str(&j, a && b ? "both" : a ? "new" : "gone");
		change_json(&j, "peak_reserved_bytes", b, b ? b->peak_reserved : 0, a, a ? a->peak_reserved : 0);
		change_json(&j, "peak_allocated_bytes", b, b ? b->peak_allocated : 0, a, a ? a->peak_allocated : 0);
		tlm__json_key(&j, "fragmentation_at_peak");
		tlm__json_obj(&j);
		tlm__json_key(&j, "before");
		b ? tlm__json_dbl(&j, b->frag, 4) : tlm__json_null(&j);
		tlm__json_key(&j, "after");
		a ? tlm__json_dbl(&j, a->frag, 4) : tlm__json_null(&j);
		tlm__json_key(&j, "delta");
		tlm__json_dbl(&j, (a ? a->frag : 0) - (b ? b->frag : 0), 4);
		tlm__json_obj_end(&j);
		tlm__json_obj_end(&j);
	}
	tlm__json_arr_end(&j);
	tlm__json_key(&j, "gate");
	tlm__json_obj(&j);
	tlm__json_ki(&j, "leak_growth_bytes", d->leak_growth);
	tlm__json_key(&j, "fail_on_growth");
	d->gate ? tlm__json_u64(&j, d->gate_bytes) : tlm__json_null(&j);
	tlm__json_key(&j, "failed");
	tlm__json_bool(&j, d->failed);
	tlm__diff_steps_json(&j, d);
	tlm__json_key(&j, "grown_sites");
	tlm__json_arr(&j);
	for (size_t i = 0; i < d->nleaks; i++)
		if (d->leaks[i].delta_bytes > 0)
			tlm__json_u64(&j, i);
	tlm__json_arr_end(&j);
	tlm__json_key(&j, "fail_on_peak_growth");
	d->peak_gate ? tlm__json_u64(&j, d->peak_gate_bytes) : tlm__json_null(&j);
	tlm__json_key(&j, "peak_failed");
	tlm__json_bool(&j, d->peak_failed);
	tlm__json_key(&j, "grown_peak_devices"); /* indexes into "devices" */
	tlm__json_arr(&j);
	for (size_t i = 0; i < d->ndev; i++)
		if (peak_over(d, &d->dev[i]))
			tlm__json_u64(&j, i);
	tlm__json_arr_end(&j);
	tlm__json_obj_end(&j);
	tlm__json_key(&j, "integrity_errors");
	tlm__json_obj(&j);
	tlm__json_ku(&j, "base", d->base->integrity_errors);
	tlm__json_ku(&j, "new", d->new_->integrity_errors);
	tlm__json_obj_end(&j);
	tlm__json_obj_end(&j);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

void tlm__diff_label(FILE *f, const struct tlm_diff_row *r)
{
	const struct tlm_diff_site *s = r->after && r->after->label ? r->after : r->before;
	if (!s || !s->label)
		return;
	/* only when it says more than the stack's first line */
	const char *fn = tlm_jv_str(tlm_jv_get(tlm_jv_at(s->stack, 0), "function"));
	if (fn && !strncmp(s->label, fn, strlen(fn)) && !strstr(s->label, " via "))
		return;
	fprintf(f, "        site %s\n", s->label);
}

void tlm__diff_stack(FILE *f, const struct tlm_jv *stack, size_t max)
{
	stack_lines(f, stack, max, false, false);
}

char *tlm__diff_signed(char *buf, size_t n, int64_t v)
{
	return signed_human(buf, n, v);
}
