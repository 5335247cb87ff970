/* SPDX-License-Identifier: MIT */
/*
 * decode.c - decodes the records of one chunk payload (see
 * docs/trace-format.md). Every read is bounded by r->end and every value is
 * range-checked against the field it lands in, so any input is safe.
 */
#include <stdbool.h>
#include <string.h>

#include "rd.h"

#define GET(v)                                          \
	do {                                            \
		if (!(p = tlm__get_uv(p, end, &(v))))   \
			return bad(why, "bad varint");  \
	} while (0)
#define NEED(n)                                                  \
	do {                                                     \
		if ((size_t)(end - p) < (size_t)(n))             \
			return bad(why, "record ends early");    \
	} while (0)

/* a varint that must fit 32 bits (ids, indexes) */
#define GET_U32(dst, what)                              \
	do {                                            \
		GET(v);                                 \
		if (v > UINT32_MAX)                     \
			return bad(why, what);          \
		(dst) = (uint32_t)v;                    \
	} while (0)

/* a zigzag varint that must fit a signed 32-bit field */
#define GET_S32(dst, what)                                              \
	do {                                                            \
		GET(v);                                                 \
		int64_t s32_ = sval(v);                                 \
		if (s32_ < INT32_MIN || s32_ > INT32_MAX)               \
			return bad(why, what);                          \
		(dst) = (int32_t)s32_;                                  \
	} while (0)

/* a varint length in lo..hi (one unsigned compare), then that many bytes
 * into dst, NUL-terminated */
#define GET_BYTES(dst, lo, hi, what)                    \
	do {                                            \
		GET(v);                                 \
		if (v - (lo) > (uint64_t)(hi) - (lo))   \
			return bad(why, what);          \
		NEED(v);                                \
		memcpy((dst), p, v);                    \
		(dst)[v] = 0;                           \
		p += v;                                 \
	} while (0)

static int bad(const char **why, const char *what)
{
	*why = what;
	return 0;
}

/* The value of a zigzag varint as a signed int64. */
static inline int64_t sval(uint64_t zz)
{
	return (int64_t)tlm__unzz(zz);
}

/* Time, thread and address: the head that events and block records share.
 * Returns the position after it, or NULL with *why set. */
static const uint8_t *decode_head(struct tlm_reader *r, const uint8_t *p, const uint8_t *end, bool thread,
				  bool addr_raw, unsigned kind, struct tlm_event *ev, const char **why)
{
	uint64_t v;
	if (!(p = tlm__get_uv(p, end, &v)))
		goto bad_varint;
	r->prev_time += tlm__unzz(v);
	ev->time_ns = r->prev_time;
	if (thread) {
		if (!(p = tlm__get_uv(p, end, &v)))
			goto bad_varint;
		if (v > UINT32_MAX) {
			*why = "thread index out of range";
			return NULL;
		}
		r->prev_thread = (uint32_t)v;
	}
	ev->thread = r->prev_thread;
	unsigned ks = tlm__kslot(kind);
	if (addr_raw) {
		if ((size_t)(end - p) < 8) {
			*why = "record ends early";
			return NULL;
		}
		ev->addr = tlm__get_u64(p);
		p += 8;
	} else {
		if (!(p = tlm__get_uv(p, end, &v)))
			goto bad_varint;
		ev->addr = r->prev_addr[ks] + (tlm__unzz(v >> 2) << tlm__shift((unsigned)v & 3));
	}
	r->prev_addr[ks] = ev->addr;
	return p;
bad_varint:
	*why = "bad varint";
	return NULL;
}

/* A size: 8 raw bytes, or a varint whose low 2 bits select a power-of-two
 * scale. Returns the position after it, or NULL with *why set. */
static const uint8_t *decode_size(const uint8_t *p, const uint8_t *end, bool raw, uint64_t *size, const char **why)
{
	if (raw) {
		if ((size_t)(end - p) < 8) {
			*why = "record ends early";
			return NULL;
		}
		*size = tlm__get_u64(p);
		return p + 8;
	}
	uint64_t v;
	if (!(p = tlm__get_uv(p, end, &v))) {
		*why = "bad varint";
		return NULL;
	}
	unsigned sh = tlm__shift((unsigned)v & 3);
	v >>= 2;
	if (sh && v >> (64 - sh)) {
		*why = "size out of range";
		return NULL;
	}
	*size = v << sh;
	return p;
}

static int decode_event(struct tlm_reader *r, struct tlm_event *ev, const char **why)
{
	const uint8_t *p = r->p, *end = r->end;
	unsigned tag = *p++, x = 0, x2 = 0, op, kind;
	uint64_t v;

	if (tag & TLM__EV_EXT) {
		NEED(1);
		x = *p++;
		if (x & TLM__X_EXT2) {
			NEED(1);
			x2 = *p++;
			if (x2 & ~TLM__X2_KNOWN)
				return bad(why, "unknown event escape bits");
		}
	}
	op = tag & TLM__EV_FREE ? TLM_OP_FREE : TLM_OP_ALLOC;
	kind = tag & TLM__TAG_KIND_MASK;
	if (x & TLM__X_OP) {
		NEED(1);
		op = *p++;
	}
	if (x2 & TLM__X2_KIND) {
		NEED(1);
		kind = *p++;
	}
	ev->op = (uint8_t)op;
	ev->kind = (uint8_t)kind;

	if (!(p = decode_head(r, p, end, tag & TLM__EV_THREAD, x2 & TLM__X2_ADDR_RAW, kind, ev, why)))
		return 0;

	ev->size = 0;
	if (tag & TLM__EV_SIZE) {
		if (!(p = decode_size(p, end, x2 & TLM__X2_SIZE_RAW, &ev->size, why)))
			return 0;
	}

	struct tlm__slotstate *s = &r->slot[tlm__slot(op, kind)];
	if (tag & TLM__EV_STACK) {
		GET_U32(s->stack, "stack id out of range");
	}
	ev->result = 0;
	ev->device_free = 0;
	if (x) {
		if (x & TLM__X_API) {
			GET(v);
			if (v > UINT16_MAX)
				return bad(why, "api out of range");
			s->api = (uint16_t)v;
		}
		if (x & TLM__X_FLAGS) {
			GET(v);
			if (v > UINT16_MAX)
				return bad(why, "flags out of range");
			s->flags = (uint16_t)v;
		}
		if (x & TLM__X_DEVICE) {
			GET(v);
			int64_t d = sval(v);
			if (d < INT16_MIN || d > INT16_MAX)
				return bad(why, "device out of range");
			s->device = (int16_t)d;
		}
		if (x & TLM__X_STREAM) {
			GET(v);
			s->stream += tlm__unzz(v);
		}
		if (x & TLM__X_AUX) {
			GET(v);
			s->aux += tlm__unzz(v);
		}
		if (x & TLM__X_FAIL) {
			GET(v);
			int64_t res = sval(v);
			if (res < INT32_MIN || res > INT32_MAX)
				return bad(why, "result out of range");
			ev->result = (int32_t)res;
			GET(v);
			ev->device_free = v;
		}
	}
	ev->stack_id = s->stack;
	ev->api = s->api;
	ev->flags = s->flags;
	ev->device = s->device;
	ev->stream = s->stream;
	ev->aux = s->aux;
	r->p = p;
	return 1;
}

/* A block record (kind BLOCK), see encode.c. */
static int decode_block(struct tlm_reader *r, struct tlm_event *ev, const char **why)
{
	const uint8_t *p = r->p, *end = r->end;
	unsigned bits = (*p++ >> 3) & 0xfu, m = 0, op;
	uint64_t v;
	struct tlm__blkstate *b = &r->blk;

	if (bits & TLM__B_MORE) {
		NEED(1);
		m = *p++;
	}
	op = bits & TLM__B_FREE ? TLM_OP_FREE : TLM_OP_ALLOC;
	if (m & TLM__BM_OP) {
		if (bits & TLM__B_FREE)
			return bad(why, "block record with two ops");
		NEED(1);
		op = *p++;
	}
	memset(ev, 0, sizeof *ev);
	ev->op = (uint8_t)op;
	ev->kind = TLM_KIND_BLOCK;
	if (!(p = decode_head(r, p, end, bits & TLM__B_THREAD, m & TLM__BM_ADDR_RAW, TLM_KIND_BLOCK, ev, why)))
		return 0;
	if (!(p = decode_size(p, end, m & TLM__BM_SIZE_RAW, &ev->size, why)))
		return 0;
	unsigned so = op == TLM_OP_FREE;
	if (bits & TLM__B_STACK) {
		GET_U32(b->stack[so], "stack id out of range");
	}
	ev->stack_id = b->stack[so];
	ev->device = b->device;
	if (m & TLM__BM_DEVICE) {
		GET(v);
		int64_t d = sval(v);
		if (d < INT16_MIN || d > INT16_MAX)
			return bad(why, "device out of range");
		ev->device = (int16_t)d;
	}
	ev->api = b->api;
	ev->flags = b->flags;
	/* the totals are applied once result is known: the prediction depends on it */
	uint64_t dalloc = 0, dresv = 0;
	if (m & TLM__BM_ALLOCATED)
		GET(dalloc);
	if (m & TLM__BM_RESERVED)
		GET(dresv);
	if (m & TLM__BM_API) {
		GET(v);
		if (v > UINT16_MAX)
			return bad(why, "api out of range");
		ev->api = (uint16_t)v;
		GET(v);
		if (v > UINT16_MAX)
			return bad(why, "flags out of range");
		ev->flags = (uint16_t)v;
	}
	if (m & TLM__BM_FAIL) {
		GET(v);
		int64_t res = sval(v);
		if (res < INT32_MIN || res > INT32_MAX)
			return bad(why, "result out of range");
		ev->result = (int32_t)res;
		GET(ev->device_free);
	}
	uint64_t resv_prev, pred = tlm__blk_predict(b, op, ev->result, ev->device, ev->size, &resv_prev);
	ev->aux = pred + tlm__unzz(dalloc);
	ev->stream = resv_prev + tlm__unzz(dresv);
	b->api = ev->api;
	b->flags = ev->flags;
	tlm__blk_update(b, ev->device, ev->aux, ev->stream);
	r->p = p;
	return 1;
}

static int decode_other(struct tlm_reader *r, struct tlm_record *rec, unsigned type, const char **why)
{
	const uint8_t *p = r->p + 1, *end = r->end;
	uint64_t v, a, b;

	switch (type) {
	case TLM_REC_THREAD: {
		struct tlm_rec_thread *t = &rec->u.thread;
		memset(t, 0, sizeof *t);
		GET_U32(t->index, "thread index out of range");
		GET(v);
		int64_t tid = sval(v);
		if (tid < INT32_MIN || tid > INT32_MAX)
			return bad(why, "tid out of range");
		t->tid = (int32_t)tid;
		NEED(1);
		unsigned n = *p++;
		if (n >= sizeof t->name)
			return bad(why, "thread name too long");
		NEED(n);
		memcpy(t->name, p, n);
		p += n;
		break;
	}
	case TLM_REC_STACK: {
		struct tlm_rec_stack *s = &rec->u.stack;
		GET_U32(s->id, "stack id out of range");
		GET(v);
		if (v > TLM_MAX_STACK_DEPTH)
			return bad(why, "stack depth exceeds 256");
		s->depth = (uint32_t)v;
		uint64_t prev = 0;
		for (uint32_t i = 0; i < s->depth; i++) {
			GET(v);
			prev += tlm__unzz(v);
			s->ip[i] = prev;
		}
		break;
	}
	case TLM_REC_MODULE: {
		struct tlm_rec_module *m = &rec->u.module;
		memset(m, 0, sizeof *m);
		GET_U32(m->id, "module id out of range");
		GET(m->base);
		GET(v);
		if (v > TLM_MAX_SEGMENTS)
			return bad(why, "module has more than 16 segments");
		m->nseg = (uint32_t)v;
		uint64_t prev = m->base;
		for (uint32_t i = 0; i < m->nseg; i++) {
			GET(a);
			GET(b);
			m->seg[i].start = prev + tlm__unzz(a);
			m->seg[i].end = m->seg[i].start + tlm__unzz(b);
			prev = m->seg[i].end;
		}
		NEED(1);
		m->build_id_len = *p++;
		if (m->build_id_len > sizeof m->build_id)
			return bad(why, "build-id longer than 64 bytes");
		NEED(m->build_id_len);
		memcpy(m->build_id, p, m->build_id_len);
		p += m->build_id_len;
		GET_BYTES(m->path, 0, sizeof m->path - 1, "module path too long");
		break;
	}
	case TLM_REC_STRING: {
		struct tlm_rec_string *s = &rec->u.string;
		GET_U32(s->id, "string id out of range");
		GET_BYTES(s->s, 0, TLM_MAX_STRING, "string longer than 4095 bytes");
		s->len = (uint32_t)v;
		break;
	}
	case TLM_REC_PROP: {
		struct tlm_rec_prop *q = &rec->u.prop;
		GET_BYTES(q->key, 1, TLM_MAX_PROP_KEY, "property key length not in 1..63");
		if (strlen(q->key) != v)
			return bad(why, "property key holds a NUL byte");
		GET_BYTES(q->value, 0, TLM_MAX_STRING, "property value longer than 4095 bytes");
		q->len = (uint32_t)v;
		/* the last one counts; a value the shim never writes is not ours, and
		 * reads as a plain exit rather than reaching a terminal */
		if (!strcmp(q->key, "end"))
			strcpy(r->end_how, !strcmp(q->value, "_exit") || !strcmp(q->value, "_Exit") || !strcmp(q->value, "exec") ? q->value : "");
		break;
	}
	case TLM_REC_PYSTACK: {
		struct tlm_rec_pystack *s = &rec->u.pystack;
		GET_U32(s->id, "stack id out of range");
		GET_U32(s->native, "stack id out of range");
		GET(v);
		if (v > TLM_MAX_PY_DEPTH)
			return bad(why, "Python stack depth exceeds 256");
		s->depth = (uint32_t)v;
		for (uint32_t i = 0; i < s->depth; i++) {
			GET(a);
			GET(b);
			GET(v);
			int64_t line = sval(v);
			if (a > UINT32_MAX || b > UINT32_MAX || line < INT32_MIN || line > INT32_MAX)
				return bad(why, "Python frame out of range");
			s->f[i] = (struct tlm_py_frame){(uint32_t)a, (uint32_t)b, (int32_t)line};
		}
		break;
	}
	case TLM_REC_DEVMEM: {
		struct tlm_rec_devmem *d = &rec->u.devmem;
		GET_U32(d->sample, "sample index out of range");
		GET_S32(d->device, "device out of range");
		GET_U32(d->why, "sample reason out of range");
		GET_U32(d->flags, "sample flags out of range");
		GET(d->time_ns);
		GET(d->total);
		GET(d->free);
		break;
	}
	case TLM_REC_DEVPROCS: {
		struct tlm_rec_devprocs *d = &rec->u.devprocs;
		GET_U32(d->sample, "sample index out of range");
		GET_S32(d->device, "device out of range");
		GET_S32(d->status, "NVML status out of range");
		GET(d->time_ns);
		GET(v);
		if (v > TLM_MAX_DEVPROCS)
			return bad(why, "device process count exceeds 256");
		d->n = (uint32_t)v;
		for (uint32_t i = 0; i < d->n; i++) {
			GET_U32(d->p[i].pid, "pid out of range");
			GET(d->p[i].used);
		}
		break;
	}
	case TLM_REC_CLOCK:
		GET(rec->u.clock.time_ns);
		GET(rec->u.clock.realtime_ns);
		break;
	case TLM_REC_MODULE_UNLOAD:
		GET_U32(rec->u.module_unload, "module id out of range");
		break;
	case TLM_REC_LOST:
		GET_U32(rec->u.lost.thread, "thread index out of range");
		GET(rec->u.lost.count);
		/* Saturate: a crafted file must not wrap the total to a small number. */
		r->lost = r->lost + rec->u.lost.count < r->lost ? UINT64_MAX : r->lost + rec->u.lost.count;
		break;
	case TLM_REC_SIGNAL: {
		GET(v);
		int64_t sig = sval(v);
		if (sig < INT32_MIN || sig > INT32_MAX)
			return bad(why, "signal number out of range");
		rec->u.signal = (int32_t)sig;
		r->saw_signal = 1;
		break;
	}
	case TLM_REC_END:
		GET(rec->u.end.events);
		GET(rec->u.end.lost);
		GET(rec->u.end.end_monotonic_ns);
		r->saw_end = 1;
		break;
	default:
		return bad(why, "unknown record type");
	}
	r->p = p;
	return 1;
}

int tlm__decode_record(struct tlm_reader *r, struct tlm_record *rec, const char **why)
{
	unsigned tag = *r->p;
	rec->offset = r->choff;
	rec->seq = r->seq0 + r->nev;
	if ((tag & TLM__TAG_KIND_MASK) != TLM__TAG_NONEVENT) {
		rec->type = TLM_REC_EVENT;
		if (!decode_event(r, &rec->u.ev, why))
			return 0;
		r->nev++;
	} else if ((tag >> 3) >= TLM__BLK_TYPE) {
		rec->type = TLM_REC_EVENT;
		if (!decode_block(r, &rec->u.ev, why))
			return 0;
		r->nev++;
	} else {
		rec->type = tag >> 3;
		if (!decode_other(r, rec, tag >> 3, why))
			return 0;
	}
	r->nrec++;
	return 1;
}
