/* SPDX-License-Identifier: MIT */
/*
 * diff_load.c - one side of a diff: a tlm-report/1 document (read from a
 * file, or rendered in memory from a trace) reduced to its devices and its
 * leak and live-at-end sites, each with its match key (diff.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/input.h"
#include "common/sat.h"
#include "common/text.h"
#include "diff.h"
#include "render/render.h"

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Appends s (n bytes) to the growing key, with 0x1f between fields. */
struct buf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* The key of one site: device, then per frame (function, file base name,
 * line), or (module base name, offset) without symbols, or "?". Keys are
 * compared as byte strings; fields are separated by 0x1f and frames by
 * 0x1e, which escaped JSON strings may contain, so lengths go first. */
static void field(struct buf *b, const char *s)
{
	char len[24];
	snprintf(len, sizeof len, "%zu:", strlen(s));
	puts_(b, len);
	puts_(b, s);
	put(b, "\x1f", 1);
}

static char *site_key(int device, const struct tlm_jv *stack)
{
	struct buf b = {0};
	char num[32];
	snprintf(num, sizeof num, "d%d", device);
	field(&b, num);
	for (size_t i = 0; i < tlm_jv_len(stack); i++) {
		const struct tlm_jv *fr = tlm_jv_at(stack, i);
		const char *fn = tlm_jv_str(tlm_jv_get(fr, "function"));
		const char *file = tlm_jv_str(tlm_jv_get(fr, "file"));
		const char *mod = tlm_jv_str(tlm_jv_get(fr, "module"));
		const char *off = tlm_jv_str(tlm_jv_get(fr, "offset"));
		int64_t line = 0;
		tlm_jv_i64(tlm_jv_get(fr, "line"), &line);
		if (fn) {
			field(&b, "F");
			field(&b, fn);
			field(&b, file ? base_of(file) : "");
			snprintf(num, sizeof num, "%lld", (long long)line);
			field(&b, num);
		} else if (mod && off) {
			field(&b, "M");
			field(&b, base_of(mod));
			field(&b, off);
		} else {
			field(&b, "?");
		}
		put(&b, "\x1e", 1);
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p ? b.p : strdup("");
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct tlm_diff_site *)a)->key, ((const struct tlm_diff_site *)b)->key);
}

/* Reads a site array; sites sharing a key are merged (sorted by key). */
static int sites(const struct tlm_jv *arr, const char *name, struct tlm_diff_site **out, size_t *n,
		 uint64_t *bytes, uint64_t *count, char *err, size_t errlen)
{
	if (!arr || arr->type != TLM_JV_ARR) {
		snprintf(err, errlen, "'%s' is missing or not an array", name);
		return -1;
	}
	struct tlm_diff_site *s = calloc(arr->n + 1, sizeof *s);
	if (!s)
		goto nomem;
	*out = s;
	*n = 0;
	for (size_t i = 0; i < arr->n; i++) {
		const struct tlm_jv *e = &arr->items[i];
		struct tlm_diff_site *d = &s[*n];
		int64_t dev;
		if (!tlm_jv_i64(tlm_jv_get(e, "device"), &dev) || dev < -1 || dev > 65535 ||
		    !tlm_jv_u64(tlm_jv_get(e, "bytes"), &d->bytes) || !tlm_jv_u64(tlm_jv_get(e, "count"), &d->count)) {
			snprintf(err, errlen, "%s[%zu]: device, bytes or count missing or invalid", name, i);
			return -1;
		}
		d->device = (int)dev;
		const struct tlm_jv *ps = tlm_jv_get(e, "bytes_per_step"); /* leaks of reports with steps */
		if (ps && ps->type != TLM_JV_NULL && !tlm_jv_u64(ps, &d->per_step)) {
			snprintf(err, errlen, "%s[%zu]: bytes_per_step is invalid", name, i);
			return -1;
		}
		d->stack = tlm_jv_get(e, "stack");
		d->label = tlm_jv_str(tlm_jv_get(e, "label"));
		const struct tlm_jv *cut = tlm_jv_get(e, "python_stack_cut");
		d->stack_cut = cut && cut->type == TLM_JV_BOOL && cut->b;
		if (d->stack && d->stack->type != TLM_JV_ARR) {
			snprintf(err, errlen, "%s[%zu]: 'stack' is not an array", name, i);
			return -1;
		}
		if (!(d->key = site_key(d->device, d->stack)))
			goto nomem;
		*bytes = tlm__sat_add(*bytes, d->bytes);
		*count = tlm__sat_add(*count, d->count);
		(*n)++;
	}
	/* merged by key; the stack shown is that of the largest of them */
	qsort(s, *n, sizeof *s, by_key);
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		if (k && !strcmp(s[k - 1].key, s[i].key)) {
			if (s[i].bytes > s[k - 1].bytes) {
				s[k - 1].stack = s[i].stack;
				s[k - 1].stack_cut = s[i].stack_cut;
				s[k - 1].label = s[i].label;
			}
			s[k - 1].bytes = tlm__sat_add(s[k - 1].bytes, s[i].bytes);
			s[k - 1].count = tlm__sat_add(s[k - 1].count, s[i].count);
			s[k - 1].per_step = tlm__sat_add(s[k - 1].per_step, s[i].per_step);
			free(s[i].key);
			continue;
		}
		s[k++] = s[i];
	}
	*n = k;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int devices(const struct tlm_jv *arr, struct tlm_diff_side *out, char *err, size_t errlen)
{
	if (!arr || arr->type != TLM_JV_ARR) {
		snprintf(err, errlen, "'devices' is missing or not an array");
		return -1;
	}
	out->dev = calloc(arr->n + 1, sizeof *out->dev);
	if (!out->dev) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < arr->n; i++) {
		const struct tlm_jv *e = &arr->items[i];
		struct tlm_diff_dev *d = &out->dev[i];
		int64_t dev;
		d->kind = tlm_jv_str(tlm_jv_get(e, "kind"));
		if (!tlm_jv_i64(tlm_jv_get(e, "device"), &dev) || dev < -1 || dev > 65535 || !d->kind ||
		    !tlm_jv_u64(tlm_jv_get(e, "peak_reserved_bytes"), &d->peak_reserved) ||
		    !tlm_jv_u64(tlm_jv_get(e, "peak_allocated_bytes"), &d->peak_allocated) ||
		    !tlm_jv_num(tlm_jv_get(e, "fragmentation_at_peak"), &d->frag)) {
			snprintf(err, errlen, "devices[%zu]: a field is missing or invalid", i);
			return -1;
		}
		d->device = (int)dev;
		out->ndev = i + 1;
	}
	return 0;
}

void tlm_diff_side_free(struct tlm_diff_side *s)
{
	for (size_t i = 0; s->leaks && i < s->nleaks; i++)
		free(s->leaks[i].key);
	for (size_t i = 0; s->live && i < s->nlive; i++)
		free(s->live[i].key);
	for (size_t i = 0; s->peak && i < s->npeak; i++)
		free(s->peak[i].key);
	free(s->peak);
	free(s->leaks);
	free(s->live);
	free(s->dev);
	tlm_json_free(s->doc);
	free(s->path);
	memset(s, 0, sizeof *s);
}

int tlm_diff_load_json(const char *path, const char *buf, size_t len, struct tlm_diff_side *out, char *err,
		       size_t errlen)
{
	memset(out, 0, sizeof *out);
	char jerr[200];
	if (!(out->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	out->doc = tlm_json_parse(buf, len, jerr, sizeof jerr);
	if (!out->doc) {
		snprintf(err, errlen, "not valid JSON (%s)", jerr);
		goto bad;
	}
	const char *schema = tlm_jv_str(tlm_jv_get(out->doc, "schema"));
	if (!schema || strcmp(schema, TLM_REPORT_SCHEMA)) {
		/* the schema found is the input's text: shown as one printable line */
		char shown[48];
		tlm_text_copy(shown, sizeof shown, schema);
		snprintf(err, errlen, "not a report: schema is %s%s%s%s, expected \"%s\"", schema ? "\"" : "",
			 schema ? shown : "missing", schema && strlen(schema) > strlen(shown) ? "..." : "", schema ? "\"" : "",
			 TLM_REPORT_SCHEMA);
		goto bad;
	}
	out->integrity_errors = tlm_jv_len(tlm_jv_get(out->doc, "integrity_errors"));
	if (devices(tlm_jv_get(out->doc, "devices"), out, err, errlen) ||
	    sites(tlm_jv_get(out->doc, "leaks"), "leaks", &out->leaks, &out->nleaks, &out->leak_bytes,
		  &out->leak_count, err, errlen) ||
	    sites(tlm_jv_get(out->doc, "live_at_end"), "live_at_end", &out->live, &out->nlive, &out->live_bytes,
		  &out->live_count, err, errlen))
		goto bad;
	/* the step leaks' growth, those freed before the end too (steps.leak_bytes_per_step);
	 * reports written before it: the leaks' own bytes_per_step */
	const struct tlm_jv *ps = tlm_jv_get(tlm_jv_get(out->doc, "steps"), "leak_bytes_per_step");
	if (ps && !tlm_jv_u64(ps, &out->per_step_bytes)) {
		snprintf(err, errlen, "steps.leak_bytes_per_step is invalid");
		goto bad;
	}
	for (size_t i = 0; !ps && i < out->nleaks; i++)
		out->per_step_bytes = tlm__sat_add(out->per_step_bytes, out->leaks[i].per_step);
	out->has_peak = tlm_jv_get(out->doc, "at_peak") != NULL;
	if (out->has_peak && sites(tlm_jv_get(out->doc, "at_peak"), "at_peak", &out->peak, &out->npeak,
				   &out->peak_bytes, &out->peak_count, err, errlen))
		goto bad;
	return 0;
bad:
	tlm_diff_side_free(out);
	return -1;
}

int tlm_diff_load_report(struct tlm_report *r, struct tlm_diff_side *out, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = tlm_report_json(r, f);
	if (fclose(f) || rc) {
		free(buf);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = tlm_diff_load_json(r->path, buf, len, out, err, errlen);
	free(buf);
	if (!rc)
		out->integrity_errors = r->nerrors;
	return rc;
}

/* A JSON report starts with '{'; a trace with its magic. Only a regular
 * file: one read through a pipe could not be read again as the other. */
static int is_json(const char *path, char *why, size_t n)
{
	FILE *f = tlm_input_fopen(path, 0, why, n);
	if (!f)
		return -1;
	int c;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

int tlm_diff_load(const char *path, struct tlm_diff_side *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	int j = is_json(path, err, errlen);
	if (j < 0)
		return -1;
	if (j) {
		size_t len;
		char *buf = tlm_json_read_file(path, TLM_DIFF_MAX_INPUT, &len, err, errlen);
		if (!buf)
			return -1;
		int rc = tlm_diff_load_json(path, buf, len, out, err, errlen);
		free(buf);
		return rc;
	}
	struct tlm_report *r = tlm_report_build_for(path, 0, err, errlen);
	if (!r)
		return -1;
	int rc = tlm_diff_load_report(r, out, err, errlen);
	tlm_report_free(r);
	return rc;
}
