/* SPDX-License-Identifier: MIT */
/*
 * encode.c - tlm_tw_event and the other record encoders (see
 * docs/trace-format.md for the layout). The event path is the hot one: it
 * compares against per-chunk delta state and emits only what changed.
 */
#include <errno.h>
#include <string.h>

#include "tw.h"

/* Largest of the shifts 21, 12, 8 whose low bits of v are all zero, as a
 * selector 3..0. Branch-free: alignment is unpredictable per event. */
static inline unsigned pick_sel(uint64_t v)
{
	unsigned tz = (unsigned)__builtin_ctzll(v | (1ULL << 63));
	return (tz >= 8) + (tz >= 12) + (tz >= 21);
}

/* An allocator block (kind BLOCK): a record of its own (docs/trace-format.md,
 * "Allocator blocks"). The allocated total is predicted from the device's
 * last one plus or minus the block size, so it usually costs nothing. */
static int block_event(struct tlm_tw *w, const struct tlm_event *ev)
{
	int rc;
	uint8_t *start = tlm__tw_reserve(w, TLM__EVENT_MAX, &rc);
	struct tlm__blkstate *b = &w->blk;
	unsigned op = ev->op, bits = 0, m = 0;
	if (op == TLM_OP_FREE)
		bits |= TLM__B_FREE;
	else if (op != TLM_OP_ALLOC)
		m |= TLM__BM_OP;
	if (w->nev == 0)
		w->base_time = w->prev_time = ev->time_ns;
	uint64_t dt = tlm__zz(ev->time_ns - w->prev_time);
	w->prev_time = ev->time_ns;
	if (ev->thread != w->prev_thread)
		bits |= TLM__B_THREAD;
	unsigned so = op == TLM_OP_FREE;
	if (ev->stack_id != b->stack[so])
		bits |= TLM__B_STACK;
	if (ev->device != b->device)
		m |= TLM__BM_DEVICE;
	uint64_t resv_prev, pred = tlm__blk_predict(b, op, ev->result, ev->device, ev->size, &resv_prev);
	if (ev->aux != pred)
		m |= TLM__BM_ALLOCATED;
	if (ev->stream != resv_prev)
		m |= TLM__BM_RESERVED;
	if (ev->api != b->api || ev->flags != b->flags)
		m |= TLM__BM_API;
	if (ev->result || ev->device_free)
		m |= TLM__BM_FAIL;

	unsigned ks = tlm__kslot(TLM_KIND_BLOCK);
	uint64_t d = ev->addr - w->prev_addr[ks];
	w->prev_addr[ks] = ev->addr;
	unsigned asel = pick_sel(d);
	uint64_t acode = tlm__zz(tlm__sar(d, tlm__shift(asel)));
	if (asel == 0 && acode >> 62)
		m |= TLM__BM_ADDR_RAW;
	acode = acode << 2 | asel;
	unsigned ssel = pick_sel(ev->size);
	uint64_t scode = ev->size >> tlm__shift(ssel);
	if (ssel == 0 && scode >> 62)
		m |= TLM__BM_SIZE_RAW;
	scode = scode << 2 | ssel;
	if (m)
		bits |= TLM__B_MORE;

	uint8_t *p = start;
	*p++ = TLM__TAG_REC(TLM__BLK_TYPE | bits);
	if (m)
		*p++ = (uint8_t)m;
	if (m & TLM__BM_OP)
		*p++ = (uint8_t)op;
	p = tlm__put_uv(p, dt);
	if (bits & TLM__B_THREAD)
		p = tlm__put_uv(p, ev->thread);
	if (m & TLM__BM_ADDR_RAW) {
		tlm__put_u64(p, ev->addr);
		p += 8;
	} else {
		p = tlm__put_uv(p, acode);
	}
	if (m & TLM__BM_SIZE_RAW) {
		tlm__put_u64(p, ev->size);
		p += 8;
	} else {
		p = tlm__put_uv(p, scode);
	}
	if (bits & TLM__B_STACK)
		p = tlm__put_uv(p, ev->stack_id);
	if (m & TLM__BM_DEVICE)
		p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)ev->device));
	if (m & TLM__BM_ALLOCATED)
		p = tlm__put_uv(p, tlm__zz(ev->aux - pred));
	if (m & TLM__BM_RESERVED)
		p = tlm__put_uv(p, tlm__zz(ev->stream - resv_prev));
	if (m & TLM__BM_API) {
		p = tlm__put_uv(p, ev->api);
		p = tlm__put_uv(p, ev->flags);
	}
	if (m & TLM__BM_FAIL) {
		p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)ev->result));
		p = tlm__put_uv(p, ev->device_free);
	}
	b->stack[so] = ev->stack_id;
	b->api = ev->api;
	b->flags = ev->flags;
	tlm__blk_update(b, ev->device, ev->aux, ev->stream);
	w->prev_thread = ev->thread;
	w->nev++;
	w->events++;
	tlm__tw_commit(w, p);
	return rc;
}

int tlm_tw_event(struct tlm_tw *w, const struct tlm_event *ev)
{
	if (ev->kind == TLM_KIND_BLOCK)
		return block_event(w, ev);
	int rc;
	uint8_t *start = tlm__tw_reserve(w, TLM__EVENT_MAX, &rc);
	unsigned kind = ev->kind, op = ev->op;
	unsigned tag = 0, x = 0, x2 = 0;

	if (kind < 7)
		tag = kind;
	else
		x2 |= TLM__X2_KIND;
	if (op == TLM_OP_FREE)
		tag |= TLM__EV_FREE;
	else if (op != TLM_OP_ALLOC)
		x |= TLM__X_OP;

	if (w->nev == 0)
		w->base_time = w->prev_time = ev->time_ns;
	uint64_t dt = tlm__zz(ev->time_ns - w->prev_time);
	w->prev_time = ev->time_ns;
	if (ev->thread != w->prev_thread)
		tag |= TLM__EV_THREAD;

	unsigned ks = tlm__kslot(kind);
	uint64_t d = ev->addr - w->prev_addr[ks];
	w->prev_addr[ks] = ev->addr;
	unsigned asel = pick_sel(d);
	uint64_t acode = tlm__zz(tlm__sar(d, tlm__shift(asel)));
	if (asel == 0 && acode >> 62)
		x2 |= TLM__X2_ADDR_RAW;
	acode = acode << 2 | asel;

	uint64_t scode = 0;
	if (ev->size) {
		tag |= TLM__EV_SIZE;
		unsigned ssel = pick_sel(ev->size);
		scode = ev->size >> tlm__shift(ssel);
		if (ssel == 0 && scode >> 62)
			x2 |= TLM__X2_SIZE_RAW;
		scode = scode << 2 | ssel;
	}

	struct tlm__slotstate *s = &w->slot[tlm__slot(op, kind)];
	if (ev->stack_id != s->stack)
		tag |= TLM__EV_STACK;
	if (ev->api != s->api)
		x |= TLM__X_API;
	if (ev->flags != s->flags)
		x |= TLM__X_FLAGS;
	if (ev->device != s->device)
		x |= TLM__X_DEVICE;
	if (ev->stream != s->stream)
		x |= TLM__X_STREAM;
	if (ev->aux != s->aux)
		x |= TLM__X_AUX;
	if (ev->result || ev->device_free)
		x |= TLM__X_FAIL;
	if (x2)
		x |= TLM__X_EXT2;
	if (x)
		tag |= TLM__EV_EXT;

	uint8_t *p = start;
	*p++ = (uint8_t)tag;
	if (x) {
		*p++ = (uint8_t)x;
		if (x2)
			*p++ = (uint8_t)x2;
		if (x & TLM__X_OP)
			*p++ = (uint8_t)op;
		if (x2 & TLM__X2_KIND)
			*p++ = (uint8_t)kind;
	}
	p = tlm__put_uv(p, dt);
	if (tag & TLM__EV_THREAD)
		p = tlm__put_uv(p, ev->thread);
	if (x2 & TLM__X2_ADDR_RAW) {
		tlm__put_u64(p, ev->addr);
		p += 8;
	} else {
		p = tlm__put_uv(p, acode);
	}
	if (tag & TLM__EV_SIZE) {
		if (x2 & TLM__X2_SIZE_RAW) {
			tlm__put_u64(p, ev->size);
			p += 8;
		} else {
			p = tlm__put_uv(p, scode);
		}
	}
	if (tag & TLM__EV_STACK)
		p = tlm__put_uv(p, ev->stack_id);
	if (x) {
		if (x & TLM__X_API)
			p = tlm__put_uv(p, ev->api);
		if (x & TLM__X_FLAGS)
			p = tlm__put_uv(p, ev->flags);
		if (x & TLM__X_DEVICE)
			p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)ev->device));
		if (x & TLM__X_STREAM)
			p = tlm__put_uv(p, tlm__zz(ev->stream - s->stream));
		if (x & TLM__X_AUX)
			p = tlm__put_uv(p, tlm__zz(ev->aux - s->aux));
		if (x & TLM__X_FAIL) {
			p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)ev->result));
			p = tlm__put_uv(p, ev->device_free);
		}
	}
	s->stack = ev->stack_id;
	s->api = ev->api;
	s->flags = ev->flags;
	s->device = ev->device;
	s->stream = ev->stream;
	s->aux = ev->aux;
	w->prev_thread = ev->thread;
	w->nev++;
	w->events++;
	tlm__tw_commit(w, p);
	return rc;
}

int tlm_tw_thread(struct tlm_tw *w, const struct tlm_rec_thread *t)
{
	int rc;
	uint8_t *p = tlm__tw_reserve(w, 64, &rc);
	size_t n = strnlen(t->name, sizeof t->name - 1);
	*p++ = TLM__TAG_REC(TLM_REC_THREAD);
	p = tlm__put_uv(p, t->index);
	p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)t->tid));
	*p++ = (uint8_t)n;
	memcpy(p, t->name, n);
	tlm__tw_commit(w, p + n);
	return rc;
}

int tlm_tw_stack(struct tlm_tw *w, uint32_t id, const uint64_t *ip, uint32_t depth)
{
	int rc;
	if (depth > TLM_MAX_STACK_DEPTH)
		depth = TLM_MAX_STACK_DEPTH; /* the reader's bound */
	uint8_t *p = tlm__tw_reserve(w, 1 + 2 * TLM__VARINT_MAX + (size_t)depth * TLM__VARINT_MAX, &rc);
	*p++ = TLM__TAG_REC(TLM_REC_STACK);
	p = tlm__put_uv(p, id);
	p = tlm__put_uv(p, depth);
	/* Frames of one stack share a few modules: deltas are short. */
	uint64_t prev = 0;
	for (uint32_t i = 0; i < depth; i++) {
		p = tlm__put_uv(p, tlm__zz(ip[i] - prev));
		prev = ip[i];
	}
	tlm__tw_commit(w, p);
	return rc;
}

int tlm_tw_string(struct tlm_tw *w, uint32_t id, const char *s, uint32_t len)
{
	int rc;
	if (len > TLM_MAX_STRING)
		len = TLM_MAX_STRING;
	uint8_t *p = tlm__tw_reserve(w, 1 + 2 * TLM__VARINT_MAX + len, &rc);
	*p++ = TLM__TAG_REC(TLM_REC_STRING);
	p = tlm__put_uv(p, id);
	p = tlm__put_uv(p, len);
	memcpy(p, s, len);
	tlm__tw_commit(w, p + len);
	return rc;
}

int tlm_tw_prop(struct tlm_tw *w, const char *key, const char *value)
{
	int rc;
	size_t kl = strlen(key), vl = strlen(value);
	if (kl == 0 || kl > TLM_MAX_PROP_KEY)
		return -EINVAL;
	if (vl > TLM_MAX_STRING)
		vl = TLM_MAX_STRING;
	uint8_t *p = tlm__tw_reserve(w, 1 + 2 * TLM__VARINT_MAX + kl + vl, &rc);
	*p++ = TLM__TAG_REC(TLM_REC_PROP);
	p = tlm__put_uv(p, kl);
	memcpy(p, key, kl);
	p += kl;
	p = tlm__put_uv(p, vl);
	memcpy(p, value, vl);
	tlm__tw_commit(w, p + vl);
	return rc;
}

int tlm_tw_pystack(struct tlm_tw *w, const struct tlm_rec_pystack *s)
{
	int rc;
	uint32_t depth = s->depth < TLM_MAX_PY_DEPTH ? s->depth : TLM_MAX_PY_DEPTH;
	uint8_t *p = tlm__tw_reserve(w, 1 + 3 * TLM__VARINT_MAX + (size_t)depth * 3 * TLM__VARINT_MAX, &rc);
	*p++ = TLM__TAG_REC(TLM_REC_PYSTACK);
	p = tlm__put_uv(p, s->id);
	p = tlm__put_uv(p, s->native);
	p = tlm__put_uv(p, depth);
	for (uint32_t i = 0; i < depth; i++) {
		p = tlm__put_uv(p, s->f[i].file);
		p = tlm__put_uv(p, s->f[i].name);
		p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)s->f[i].line));
	}
	tlm__tw_commit(w, p);
	return rc;
}

int tlm_tw_module(struct tlm_tw *w, const struct tlm_rec_module *m)
{
	int rc;
	uint8_t *p = tlm__tw_reserve(w, TLM__MODULE_MAX, &rc);
	uint32_t nseg = m->nseg < TLM_MAX_SEGMENTS ? m->nseg : TLM_MAX_SEGMENTS;
	uint32_t bl = m->build_id_len < sizeof m->build_id ? m->build_id_len : sizeof m->build_id;
	size_t pl = strnlen(m->path, sizeof m->path - 1);

	*p++ = TLM__TAG_REC(TLM_REC_MODULE);
	p = tlm__put_uv(p, m->id);
	p = tlm__put_uv(p, m->base);
	p = tlm__put_uv(p, nseg);
	uint64_t prev = m->base;
	for (uint32_t i = 0; i < nseg; i++) {
		p = tlm__put_uv(p, tlm__zz(m->seg[i].start - prev));
		p = tlm__put_uv(p, tlm__zz(m->seg[i].end - m->seg[i].start));
		prev = m->seg[i].end;
	}
	*p++ = (uint8_t)bl;
	memcpy(p, m->build_id, bl);
	p += bl;
	p = tlm__put_uv(p, pl);
	memcpy(p, m->path, pl);
	tlm__tw_commit(w, p + pl);
	return rc;
}

int tlm_tw_devmem(struct tlm_tw *w, const struct tlm_rec_devmem *d)
{
	int rc;
	uint8_t *p = tlm__tw_reserve(w, TLM__DEVMEM_MAX, &rc);
	*p++ = TLM__TAG_REC(TLM_REC_DEVMEM);
	p = tlm__put_uv(p, d->sample);
	p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)d->device));
	p = tlm__put_uv(p, d->why);
	p = tlm__put_uv(p, d->flags);
	p = tlm__put_uv(p, d->time_ns);
	p = tlm__put_uv(p, d->total);
	p = tlm__put_uv(p, d->free);
	tlm__tw_commit(w, p);
	return rc;
}

int tlm_tw_clock(struct tlm_tw *w, const struct tlm_rec_clock *c)
{
	int rc;
	uint8_t *p = tlm__tw_reserve(w, 1 + 2 * TLM__VARINT_MAX, &rc);
	*p++ = TLM__TAG_REC(TLM_REC_CLOCK);
	p = tlm__put_uv(p, c->time_ns);
	p = tlm__put_uv(p, c->realtime_ns);
	tlm__tw_commit(w, p);
	return rc;
}

int tlm_tw_devprocs(struct tlm_tw *w, const struct tlm_rec_devprocs *d)
{
	int rc;
	uint32_t n = d->n < TLM_MAX_DEVPROCS ? d->n : TLM_MAX_DEVPROCS; /* the reader's bound */
	uint8_t *p = tlm__tw_reserve(w, 1 + 5 * TLM__VARINT_MAX + (size_t)n * 2 * TLM__VARINT_MAX, &rc);
	*p++ = TLM__TAG_REC(TLM_REC_DEVPROCS);
	p = tlm__put_uv(p, d->sample);
	p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)d->device));
	p = tlm__put_uv(p, tlm__zz((uint64_t)(int64_t)d->status));
	p = tlm__put_uv(p, d->time_ns);
	p = tlm__put_uv(p, n);
	for (uint32_t i = 0; i < n; i++) {
		p = tlm__put_uv(p, d->p[i].pid);
		p = tlm__put_uv(p, d->p[i].used);
	}
	tlm__tw_commit(w, p);
	return rc;
}

/* Small records: tag and up to three varints. */
static int small(struct tlm_tw *w, unsigned type, int n, uint64_t a, uint64_t b, uint64_t c)
{
	int rc;
	uint8_t *p = tlm__tw_reserve(w, 1 + 3 * TLM__VARINT_MAX, &rc);
	*p++ = TLM__TAG_REC(type);
	if (n > 0)
		p = tlm__put_uv(p, a);
	if (n > 1)
		p = tlm__put_uv(p, b);
	if (n > 2)
		p = tlm__put_uv(p, c);
	tlm__tw_commit(w, p);
	return rc;
}

int tlm_tw_module_unload(struct tlm_tw *w, uint32_t id)
{
	return small(w, TLM_REC_MODULE_UNLOAD, 1, id, 0, 0);
}

int tlm_tw_lost(struct tlm_tw *w, uint32_t thread, uint64_t count)
{
	w->lost += count;
	return small(w, TLM_REC_LOST, 2, thread, count, 0);
}

int tlm_tw_signal(struct tlm_tw *w, int signo)
{
	return small(w, TLM_REC_SIGNAL, 1, tlm__zz((uint64_t)(int64_t)signo), 0, 0);
}

int tlm_tw_end(struct tlm_tw *w, uint64_t end_monotonic_ns)
{
	int rc = small(w, TLM_REC_END, 3, w->events, w->lost, end_monotonic_ns);
	int f = tlm_tw_flush(w);
	return rc ? rc : f;
}
