/* SPDX-License-Identifier: MIT */
/*
 * columns.c - tlm_py_load(): a trace's events into columns, and the rest of
 * what it says as one JSON object (tlmpy.h). One pass of the one reader; the
 * columns grow by doubling, so the load costs the decode and a store per
 * field.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoders/json_out.h"
#include "tlm/trace.h"
#include "tlm_config.h"
#include "tlmpy.h"

static const size_t col_size[TLM_PY_NCOLS] = {
	[TLM_PY_TIME] = 8, [TLM_PY_OP] = 1, [TLM_PY_KIND] = 1, [TLM_PY_DEVICE] = 2,
	[TLM_PY_ADDRESS] = 8, [TLM_PY_SIZE] = 8, [TLM_PY_STREAM] = 8, [TLM_PY_AUX] = 8,
	[TLM_PY_THREAD] = 4, [TLM_PY_STACK] = 4, [TLM_PY_RESULT] = 4, [TLM_PY_FLAGS] = 2,
	[TLM_PY_API_COL] = 2,
};

struct tlm_py_trace {
	uint64_t n, cap;
	void *col[TLM_PY_NCOLS];
	char *meta;
	size_t metalen;
};

/* The definitions and facts kept while the events stream by, for the meta. */
struct meta {
	/* each list is written into its own buffer as it comes and spliced into
	 * the final object at the end */
	FILE *threads, *stacks, *pystacks, *modules, *devmem, *props;
	char *tb, *sb, *pb, *mb, *db, *rb;
	size_t tn, sn, pn, mn, dn, rn;
	struct tlm__json tj, sj, pj, mj, dj, rj;
	bool have_end, have_signal;
	struct tlm_rec_end end;
	int32_t signo;
};

static int grow(struct tlm_py_trace *t)
{
	uint64_t cap = t->cap ? t->cap * 2 : 65536;
	for (int c = 0; c < TLM_PY_NCOLS; c++) {
		void *p = realloc(t->col[c], cap * col_size[c]);
		if (!p)
			return -1;
		t->col[c] = p;
	}
	t->cap = cap;
	return 0;
}

static inline void put(struct tlm_py_trace *t, const struct tlm_event *e, uint64_t start)
{
	uint64_t i = t->n++;
	((int64_t *)t->col[TLM_PY_TIME])[i] = (int64_t)(e->time_ns - start);
	((uint8_t *)t->col[TLM_PY_OP])[i] = e->op;
	((uint8_t *)t->col[TLM_PY_KIND])[i] = e->kind;
	((int16_t *)t->col[TLM_PY_DEVICE])[i] = e->device;
	((uint64_t *)t->col[TLM_PY_ADDRESS])[i] = e->addr;
	((uint64_t *)t->col[TLM_PY_SIZE])[i] = e->size;
	((uint64_t *)t->col[TLM_PY_STREAM])[i] = e->stream;
	((uint64_t *)t->col[TLM_PY_AUX])[i] = e->aux;
	((uint32_t *)t->col[TLM_PY_THREAD])[i] = e->thread;
	((uint32_t *)t->col[TLM_PY_STACK])[i] = e->stack_id;
	((int32_t *)t->col[TLM_PY_RESULT])[i] = e->result;
	((uint16_t *)t->col[TLM_PY_FLAGS])[i] = e->flags;
	((uint16_t *)t->col[TLM_PY_API_COL])[i] = e->api;
}

static int meta_open(struct meta *m)
{
	struct { FILE **f; char **b; size_t *n; struct tlm__json *j; } s[] = {
		{&m->threads, &m->tb, &m->tn, &m->tj}, {&m->stacks, &m->sb, &m->sn, &m->sj},
		{&m->pystacks, &m->pb, &m->pn, &m->pj}, {&m->modules, &m->mb, &m->mn, &m->mj},
		{&m->devmem, &m->db, &m->dn, &m->dj}, {&m->props, &m->rb, &m->rn, &m->rj},
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		*s[i].f = open_memstream(s[i].b, s[i].n);
		if (!*s[i].f)
			return -1;
		tlm__json_init(s[i].j, *s[i].f);
		/* each is the body of an array or object the final JSON opens */
		s[i].j->depth = 1;
	}
	return 0;
}

static void meta_record(struct meta *m, const struct tlm_record *rec)
{
	switch (rec->type) {
	case TLM_REC_THREAD:
		tlm__json_obj(&m->tj);
		tlm__json_ku(&m->tj, "index", rec->u.thread.index);
		tlm__json_ki(&m->tj, "tid", rec->u.thread.tid);
		tlm__json_key(&m->tj, "name");
		tlm__json_str(&m->tj, rec->u.thread.name);
		tlm__json_obj_end(&m->tj);
		break;
	case TLM_REC_STACK:
		tlm__json_u64(&m->sj, rec->u.stack.id);
		break;
	case TLM_REC_PYSTACK:
		tlm__json_u64(&m->pj, rec->u.pystack.id);
		break;
	case TLM_REC_MODULE:
		tlm__json_obj(&m->mj);
		tlm__json_ku(&m->mj, "id", rec->u.module.id);
		tlm__json_key(&m->mj, "path");
		tlm__json_str(&m->mj, rec->u.module.path);
		tlm__json_ku(&m->mj, "base", rec->u.module.base);
		tlm__json_key(&m->mj, "build_id");
		{
			char id[129];
			for (uint32_t i = 0; i < rec->u.module.build_id_len && i < 64; i++)
				snprintf(id + 2 * i, 3, "%02x", rec->u.module.build_id[i]);
			id[2 * (rec->u.module.build_id_len < 64 ? rec->u.module.build_id_len : 64)] = 0;
			tlm__json_str(&m->mj, id);
		}
		tlm__json_obj_end(&m->mj);
		break;
	case TLM_REC_DEVMEM:
		tlm__json_obj(&m->dj);
		tlm__json_ku(&m->dj, "seq", rec->seq);
		tlm__json_ku(&m->dj, "sample", rec->u.devmem.sample);
		tlm__json_ki(&m->dj, "device", rec->u.devmem.device);
		tlm__json_ku(&m->dj, "why", rec->u.devmem.why);
		tlm__json_ku(&m->dj, "flags", rec->u.devmem.flags);
		tlm__json_ku(&m->dj, "time_ns", rec->u.devmem.time_ns);
		tlm__json_ku(&m->dj, "total", rec->u.devmem.total);
		tlm__json_ku(&m->dj, "free", rec->u.devmem.free);
		tlm__json_obj_end(&m->dj);
		break;
	case TLM_REC_PROP:
		/* a later value replaces an earlier one: the reader of the JSON keeps the last */
		tlm__json_arr(&m->rj);
		tlm__json_str(&m->rj, rec->u.prop.key);
		tlm__json_strn(&m->rj, rec->u.prop.value, rec->u.prop.len);
		tlm__json_arr_end(&m->rj);
		break;
	case TLM_REC_END:
		m->have_end = true;
		m->end = rec->u.end;
		break;
	case TLM_REC_SIGNAL:
		m->have_signal = true;
		m->signo = rec->u.signal;
		break;
	default:
		break;
	}
}

static void close_all(struct meta *m)
{
	FILE **f[] = {&m->threads, &m->stacks, &m->pystacks, &m->modules, &m->devmem, &m->props};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (*f[i]) {
			fclose(*f[i]);
			*f[i] = NULL;
		}
}

static void meta_free(struct meta *m)
{
	close_all(m);
	free(m->tb), free(m->sb), free(m->pb), free(m->mb), free(m->db), free(m->rb);
}

static void raw(struct tlm__json *j, const char *key, const char *open, const char *body, size_t n,
		const char *close)
{
	tlm__json_key(j, key);
	fputs(open, j->f);
	fwrite(body, 1, n, j->f);
	fputs(close, j->f);
	j->after_key = false; /* the value after the key is written */
}

static const char *state_name(enum tlm_trace_state s)
{
	return s == TLM_TRACE_CLEAN ? "clean" : s == TLM_TRACE_SIGNAL ? "signal" : "truncated";
}

/* The final JSON: the header, the kept records, the reader's outcome. */
static int meta_write(struct tlm_py_trace *t, struct meta *m, struct tlm_reader *rd, const char *path)
{
	close_all(m);
	FILE *f = open_memstream(&t->meta, &t->metalen);
	if (!f)
		return -1;
	const struct tlm_trace_header *h = tlm_reader_header(rd);
	struct tlm__json j;
	tlm__json_init(&j, f);
	tlm__json_obj(&j);
	tlm__json_key(&j, "path");
	tlm__json_str(&j, path);
	tlm__json_ku(&j, "version", h->version);
	tlm__json_ku(&j, "pid", h->pid);
	tlm__json_ku(&j, "ppid", h->ppid);
	tlm__json_key(&j, "host");
	tlm__json_str(&j, h->host);
	tlm__json_key(&j, "exe");
	tlm__json_str(&j, h->exe);
	tlm__json_key(&j, "tlm_version");
	tlm__json_str(&j, h->tlm_version);
	tlm__json_key(&j, "argv");
	tlm__json_arr(&j);
	for (uint32_t i = 0; i < h->argc; i++)
		tlm__json_str(&j, h->argv[i]);
	tlm__json_arr_end(&j);
	tlm__json_ku(&j, "start_realtime_ns", h->start_realtime_ns);
	tlm__json_ku(&j, "start_monotonic_ns", h->start_monotonic_ns);
	tlm__json_ku(&j, "clock_id", h->clock_id);
	tlm__json_ku(&j, "stack_depth", h->stack_depth);
	tlm__json_key(&j, "drop_mode");
	tlm__json_bool(&j, h->flags & TLM_TRACE_F_DROP_MODE);
	tlm__json_ku(&j, "events", t->n);
	tlm__json_key(&j, "state");
	tlm__json_str(&j, state_name(tlm_reader_state(rd)));
	tlm__json_key(&j, "end_how");
	tlm__json_str(&j, tlm_reader_end_how(rd));
	tlm__json_key(&j, "signal");
	if (m->have_signal)
		tlm__json_i64(&j, m->signo);
	else
		tlm__json_null(&j);
	tlm__json_key(&j, "truncation");
	tlm__json_str(&j, tlm_reader_truncation(rd, NULL));
	tlm__json_ku(&j, "lost", tlm_reader_lost(rd));
	tlm__json_key(&j, "end");
	if (m->have_end) {
		tlm__json_obj(&j);
		tlm__json_ku(&j, "events", m->end.events);
		tlm__json_ku(&j, "lost", m->end.lost);
		tlm__json_ki(&j, "end_ns", (int64_t)(m->end.end_monotonic_ns - h->start_monotonic_ns));
		tlm__json_obj_end(&j);
	} else {
		tlm__json_null(&j);
	}
	const struct tlm_integrity_error *errs;
	size_t ne = tlm_reader_errors(rd, &errs);
	tlm__json_key(&j, "integrity_errors");
	tlm__json_arr(&j);
	for (size_t i = 0; i < ne; i++) {
		tlm__json_obj(&j);
		tlm__json_ku(&j, "offset", errs[i].offset);
		tlm__json_key(&j, "what");
		tlm__json_str(&j, errs[i].what);
		tlm__json_obj_end(&j);
	}
	tlm__json_arr_end(&j);
	raw(&j, "threads", "[", m->tb, m->tn, "]");
	raw(&j, "stacks", "[", m->sb, m->sn, "]");
	raw(&j, "python_stacks", "[", m->pb, m->pn, "]");
	raw(&j, "modules", "[", m->mb, m->mn, "]");
	raw(&j, "device_samples", "[", m->db, m->dn, "]");
	raw(&j, "properties", "[", m->rb, m->rn, "]");
	tlm__json_obj_end(&j);
	fputc('\n', f);
	return fclose(f) ? -1 : 0;
}

TLM_PY_API void tlm_py_close(struct tlm_py_trace *t)
{
	if (!t)
		return;
	for (int c = 0; c < TLM_PY_NCOLS; c++)
		free(t->col[c]);
	free(t->meta);
	free(t);
}

TLM_PY_API struct tlm_py_trace *tlm_py_load(const char *path, char *err, size_t errlen)
{
	struct tlm_reader *rd = tlm_reader_open(path, err, errlen);
	if (!rd)
		return NULL;
	struct tlm_py_trace *t = calloc(1, sizeof *t);
	struct tlm_record *rec = malloc(sizeof *rec);
	struct meta m;
	memset(&m, 0, sizeof m);
	if (!t || !rec || meta_open(&m) != 0)
		goto nomem;
	uint64_t start = tlm_reader_header(rd)->start_monotonic_ns;
	while (tlm_reader_next(rd, rec)) {
		if (rec->type == TLM_REC_EVENT) {
			if (t->n == t->cap && grow(t) != 0)
				goto nomem;
			put(t, &rec->u.ev, start);
		} else {
			meta_record(&m, rec);
		}
	}
	if (meta_write(t, &m, rd, path) != 0)
		goto nomem;
	meta_free(&m);
	free(rec);
	tlm_reader_close(rd);
	return t;
nomem:
	snprintf(err, errlen, "out of memory");
	meta_free(&m);
	free(rec);
	tlm_py_close(t);
	tlm_reader_close(rd);
	return NULL;
}

TLM_PY_API uint64_t tlm_py_events(const struct tlm_py_trace *t)
{
	return t->n;
}

TLM_PY_API void *tlm_py_take(struct tlm_py_trace *t, int col)
{
	if (col < 0 || col >= TLM_PY_NCOLS || !t->n || !t->col[col]) /* taken already: realloc(NULL) would hand out garbage */
		return NULL;
	void *p = t->col[col], *q = realloc(p, t->n * col_size[col]); /* what the growth left unused */
	t->col[col] = NULL;
	return q ? q : p;
}

TLM_PY_API const char *tlm_py_meta(const struct tlm_py_trace *t, size_t *len)
{
	if (len)
		*len = t->metalen;
	return t->meta;
}

TLM_PY_API void tlm_py_free(void *p)
{
	free(p);
}

TLM_PY_API const char *tlm_py_name(int which, unsigned code)
{
	const char *s = which == 0 ? (code < TLM_OP_COUNT ? tlm_op_name(code) : NULL)
		      : which == 1 ? (code < TLM_KIND_COUNT ? tlm_kind_name(code) : NULL)
		      : which == 2 ? (code < TLM_API_COUNT ? tlm_api_name(code) : NULL)
				   : NULL;
	return s;
}

TLM_PY_API const char *tlm_py_version(void)
{
	return TLM_VERSION;
}
