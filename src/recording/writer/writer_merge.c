/* SPDX-License-Identifier: MIT */
/*
 * writer_merge.c - one drain: rings into staging, staging into the trace.
 *
 * Compute the watermark W (below every in-flight producer's announced seq);
 * move every ring's records to staging (stack definitions are interned
 * globally and written at once); merge the staged events below W in seq order
 * into the trace writer; flush. Staging lets rings empty even while one
 * thread sits in a slow cuMemFree holding W back, so a producer never waits
 * on another thread's call.
 */
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recording/clock.h"
#include "recording/log.h"
#include "recording/stack/pystack.h"
#include "recording/stack/stack.h"
#include "recording/writer/modules.h"
#include "recording/writer/writer.h"
#include "recording/writer/writer_int.h"

struct staged {
	uint64_t seq;
	struct tlm_event ev;
	uint32_t sample; /* its device memory sample (writer_devmem.c), 0 = none */
	bool lost;       /* a voided record (ring.h): counted lost in its place */
};

/* The writer's view of one ring. It lives in the ring's own mapping (the
 * producer maps it, see tlm__writer_ring_bytes) with room to stage a whole
 * ring, so a drain from a fatal-signal handler needs no allocation. */
struct wring {
	uint32_t gen;
	bool known;
	uint64_t stuck_seq, stuck_since; /* the in-flight bound last seen, and since when */
	uint32_t stuck_gen;              /* the owner they were seen for */
	bool stuck_seen, stuck_said;     /* seen: stuck_seq and stuck_since hold */
	uint64_t lost_seen;
	struct staged *buf;
	size_t pos, n, cap;
	uint32_t stkmap[TLM__STK_BUCKETS]; /* local stack id -> global id */
	uint32_t pymap[TLM__PY_STACKS];    /* local merged (Python) id -> global id */
	struct staged inline_buf[];        /* ring_slots entries */
};

size_t tlm__writer_ring_bytes(unsigned slots)
{
	return sizeof(struct wring) + (size_t)slots * sizeof(struct staged);
}

/* ---------------------------------------------------------------- drain */

static void wake_producer(struct tlm__ring *r)
{
	if (atomic_load_explicit(&r->waiting, memory_order_seq_cst)) {
		atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->wake, 1, memory_order_release);
		syscall(SYS_futex, (uint32_t *)&r->wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static bool stage(struct wring *w, bool no_alloc)
{
	if (w->n < w->cap)
		return true;
	if (w->pos) { /* compact first */
		memmove(w->buf, w->buf + w->pos, (w->n - w->pos) * sizeof *w->buf);
		w->n -= w->pos;
		w->pos = 0;
		if (w->n < w->cap)
			return true;
	}
	if (no_alloc)
		return false;
	size_t nc = w->cap * 2;
	struct staged *nb = malloc(nc * sizeof *nb);
	if (!nb)
		return false;
	memcpy(nb, w->buf, w->n * sizeof *nb);
	if (w->buf != w->inline_buf)
		free(w->buf);
	w->buf = nb;
	w->cap = nc;
	return true;
}

static struct wring *wstate(struct tlm__ring *r)
{
	struct wring *w = r->wstate;
	if (!w->buf) {
		w->buf = w->inline_buf;
		w->cap = (size_t)r->mask + 1;
	}
	return w;
}

static uint64_t stage_cap; /* the first event a drain could not stage */
static bool helping;       /* a producer drains (tlm__wm_drain_help): defer what needs malloc */

/* The seq of the event the definitions at tail belong to (a producer
 * publishes them together); 0 (merge nothing) if none is there. */
static uint64_t event_after(const struct tlm__ring *r, uint64_t tail, uint64_t head)
{
	while (tail < head) {
		const struct tlm__slot *s = &r->slots[tail & r->mask];
		uint8_t type = s->type;
		if (type == TLM__SLOT_STACK)
			tail += 1 + ((uint32_t)s->size + 7) / 8;
		else if (type == TLM__SLOT_PYSTACK)
			tail += 1 + ((uint32_t)s->addr + 63) / 64;
		else
			return s->seq;
	}
	return 0;
}

static void drain_ring(struct tlm__ring *r, bool no_alloc)
{
	struct wring *w = wstate(r);
	int st = atomic_load_explicit(&r->state, memory_order_acquire);
	if (st != TLM__RING_ACTIVE && st != TLM__RING_EXITED)
		return;
	uint32_t gen = atomic_load_explicit(&r->gen, memory_order_relaxed);
	if (!w->known || w->gen != gen) {
		w->known = true;
		w->gen = gen;
		struct tlm_rec_thread t = {.index = r->thread_index, .tid = r->tid};
		memcpy(t.name, r->name, sizeof t.name);
		t.name[15] = 0;
		if (!tlm__wf.failed)
			tlm__wf_check(tlm_tw_thread(tlm__wf.tw, &t));
	}
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	while (tail < head) {
		struct tlm__slot *s = &r->slots[tail & r->mask];
		uint8_t type = s->type;
		if (helping && ((type == TLM__SLOT_STACK && !tlm__wi_stack_fits((uint32_t)s->size)) ||
				(type == TLM__SLOT_PYSTACK && !tlm__wi_pystack_fits((uint32_t)s->size, (uint32_t)s->addr)))) {
			/* the tables must grow: leave it to the writer thread, and
			 * merge nothing from its event on */
			uint64_t e = event_after(r, tail, head);
			if (e < stage_cap)
				stage_cap = e;
			break;
		}
		if (type == TLM__SLOT_STACK) {
			uint32_t d = (uint32_t)s->size, lid = (uint32_t)s->aux;
			uint64_t ips[TLM_MAX_STACK_DEPTH];
			for (uint32_t k = 0; k < d; k += 8) {
				const uint64_t *src = (const uint64_t *)&r->slots[(tail + 1 + k / 8) & r->mask];
				memcpy(ips + k, src, (d - k < 8 ? d - k : 8) * 8);
			}
			if (lid < TLM__STK_BUCKETS)
				w->stkmap[lid] = tlm__wi_stack(ips, d, no_alloc);
			tail += 1 + (d + 7) / 8;
			continue;
		}
		if (type == TLM__SLOT_PYSTACK) {
			uint32_t lid = (uint32_t)s->aux;
			uint32_t lnat = (uint32_t)s->stream;
			uint32_t gid = tlm__wi_pystack(r, tail, lnat < TLM__STK_BUCKETS ? w->stkmap[lnat] : 0, no_alloc);
			if (lid < TLM__PY_STACKS)
				w->pymap[lid] = gid;
			tail += 1 + ((uint32_t)s->addr + 63) / 64;
			continue;
		}
		/* an event (and its extension slot for a failed allocation) */
		if (!stage(w, no_alloc)) {
			if (s->seq < stage_cap) /* staging is full (no allocation): merge nothing from here on */
				stage_cap = s->seq;
			break;
		}
		struct staged *e = &w->buf[w->n++];
		e->seq = s->seq;
		if (type == TLM__SLOT_VOID) {
			e->lost = true;
			e->sample = 0;
			e->ev.thread = r->thread_index;
			tail += 1 + s->stream;
			continue;
		}
		e->lost = false;
		e->ev = (struct tlm_event){
			.time_ns = tlm__ticks_to_ns(s->time_ns), .addr = s->addr, .size = s->size, .stream = s->stream, .aux = s->aux,
			.stack_id = (s->stack & TLM__PY_ID_BIT) ? ((s->stack & ~TLM__PY_ID_BIT) < TLM__PY_STACKS
									 ? w->pymap[s->stack & ~TLM__PY_ID_BIT] : 0)
				    : s->stack < TLM__STK_BUCKETS ? w->stkmap[s->stack] : 0,
			.thread = r->thread_index, .result = s->result, .device = s->device, .op = s->op,
			.kind = s->kind, .flags = s->flags, .api = s->api,
		};
		tail++;
		e->sample = 0;
		if ((s->op == TLM_OP_ALLOC && s->result != 0) || type == TLM__SLOT_EVENT_FREE) {
			const struct tlm__slot *x = &r->slots[tail & r->mask];
			e->ev.device_free = x->addr;
			e->sample = tlm__wd_stage(x);
			tail++;
		}
	}
	atomic_store_explicit(&r->tail, tail, memory_order_seq_cst);
	atomic_store_explicit(&r->kicked, 0, memory_order_relaxed);
	wake_producer(r);
	uint64_t lost = atomic_load_explicit(&r->lost, memory_order_relaxed);
	if (lost > w->lost_seen) {
		if (!tlm__wf.failed)
			tlm__wf_check(tlm_tw_lost(tlm__wf.tw, r->thread_index, lost - w->lost_seen));
		w->lost_seen = lost;
	}
	/* the owner is gone and everything is out: a record it began and never
	 * committed (cancelled inside the call) is lost, in its place; then the
	 * ring may be reused */
	if (st == TLM__RING_EXITED && tail == atomic_load_explicit(&r->head, memory_order_acquire) &&
	    tlm__ring_open(r)) {
		if (!stage(w, no_alloc))
			return; /* next drain */
		struct staged *e = &w->buf[w->n++];
		e->seq = atomic_load_explicit(&r->open_seq, memory_order_relaxed);
		e->lost = true;
		e->sample = 0;
		e->ev.thread = r->thread_index;
		tail = atomic_load_explicit(&r->open_end, memory_order_relaxed);
		atomic_store_explicit(&r->head, tail, memory_order_relaxed);
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		atomic_store_explicit(&r->open_end, 0, memory_order_relaxed);
		atomic_store_explicit(&r->inflight, UINT64_MAX, memory_order_release);
	}
	/* the owner is gone and everything is out: the ring may be reused */
	if (st == TLM__RING_EXITED && tail == atomic_load_explicit(&r->head, memory_order_acquire)) {
		if (atomic_load_explicit(&r->inflight, memory_order_acquire) != UINT64_MAX) {
			/* its owner left inside a hooked call before the record was
			 * marked open (recorder.c voids the others): it never came */
			atomic_store_explicit(&r->inflight, UINT64_MAX, memory_order_relaxed);
			if (!tlm__wf.failed)
				tlm__wf_check(tlm_tw_lost(tlm__wf.tw, r->thread_index, 1));
		}
		int ex = TLM__RING_EXITED;
		atomic_compare_exchange_strong(&r->state, &ex, TLM__RING_FREE);
	}
}

static uint64_t noring_seen;

/* The merge: a binary min-heap of the rings with staged events, keyed by the
 * seq of each ring's next event, so writing one event costs O(log rings)
 * (usually two compares: a thread's events come in runs), not a scan of
 * every ring. Keys sit beside the ring pointers to keep the sift in cache. */
struct hnode {
	uint64_t seq;
	struct wring *w;
};

static void sift_down(struct hnode *h, uint32_t n, uint32_t i)
{
	struct hnode x = h[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && h[c + 1].seq < h[c].seq)
			c++;
		if (h[c].seq >= x.seq)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void emit(struct staged *e)
{
	if (TLM_UNLIKELY(e->lost)) { /* an event that never came: lost, in its place */
		if (e->seq >= tlm__wf.next_seq || !tlm__wf.bypassed) {
			if (e->seq != tlm__wf.next_seq && !tlm__wf.bypassed)
				tlm__wf.order_errors++;
			tlm__wf.next_seq = e->seq + 1;
		}
		if (!tlm__wf.failed)
			tlm__wf_check(tlm_tw_lost(tlm__wf.tw, e->ev.thread, 1));
		return;
	}
	if (e->seq < tlm__wf.next_seq && tlm__wf.bypassed) {
		e->ev.flags |= TLM_EVF_LATE; /* its thread was passed by (stuck()) */
		tlm__wf.late++;
	} else {
		if (e->seq != tlm__wf.next_seq && !tlm__wf.bypassed)
			tlm__wf.order_errors++;
		tlm__wf.next_seq = e->seq + 1;
	}
	if (tlm__wf.failed)
		tlm__wf.discarded++;
	else
		tlm__wf_check(tlm_tw_event(tlm__wf.tw, &e->ev));
	if (e->sample) /* right after its event (the placement rule) */
		tlm__wd_emit(e->sample);
}

/* Emits, in seq order, every staged event below the watermark. */
static void merge(uint64_t wmark, uint32_t nr)
{
	static struct hnode heap[TLM__MAX_RINGS];
	static struct wring *act[TLM__MAX_RINGS];
	uint32_t n = 0, na = 0;
	for (uint32_t i = 0; i < nr; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		struct wring *w = r ? wstate(r) : NULL;
		if (w && w->pos < w->n) {
			act[na++] = w;
			heap[n++] = (struct hnode){w->buf[w->pos].seq, w};
		}
	}
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(heap, n, i);
	while (n && heap[0].seq < wmark) {
		struct wring *w = heap[0].w;
		emit(&w->buf[w->pos++]);
		if (w->pos < w->n)
			heap[0].seq = w->buf[w->pos].seq;
		else
			heap[0] = heap[--n];
		if (n > 1)
			sift_down(heap, n, 0);
	}
	for (uint32_t k = 0; k < na; k++) {
		struct wring *w = act[k];
		if (w->pos == w->n)
			w->pos = w->n = 0;
	}
}

/* A producer that stays inside one hooked call (blocked in the driver,
 * cancelled, longjmp'd out) must not hold every other thread's events back
 * for good: after STUCK_NS with the same announced bound, or at once when its
 * owner is gone, the watermark ignores it. Its event, if it ever comes, is
 * then written late and flagged TLM_EVF_LATE; one that never comes is counted
 * as lost when its ring is recycled or the trace ends. */
#define STUCK_NS 1000000000ull

static bool final_pass;

static bool stuck(struct tlm__ring *r, uint64_t f, uint64_t now)
{
	struct wring *w = wstate(r);
	if (final_pass) {
		tlm__wf.bypassed = true;
		return true;
	}
	if (atomic_load_explicit(&r->state, memory_order_acquire) != TLM__RING_ACTIVE)
		return !tlm__ring_open(r); /* no owner: in flight only what it left open, lost next drain */
	uint32_t gen = atomic_load_explicit(&r->gen, memory_order_relaxed);
	if (!w->stuck_seen || w->stuck_seq != f || w->stuck_gen != gen) {
		/* a bound not seen before (a new thread's first one is 0, as the
		 * zeroed state's): its time starts now */
		w->stuck_seen = true;
		w->stuck_seq = f;
		w->stuck_gen = gen;
		w->stuck_since = now;
		w->stuck_said = false;
		return false;
	}
	if (now - w->stuck_since < STUCK_NS)
		return false;
	tlm__wf.bypassed = true;
	if (!w->stuck_said) {
		w->stuck_said = true;
		tlm__log("thread %d has been inside one CUDA call for more than %llu ms: the other threads' events are "
			 "written without waiting for it (its event, if it returns, is flagged late)",
			 (int)r->tid, (unsigned long long)(STUCK_NS / 1000000));
	}
	return true;
}

/* Caller holds the lock. */
void tlm__wm_drain(bool no_alloc)
{
	if (!tlm__wf.tw)
		return;
	if (!no_alloc && !tlm__wf.failed)
		tlm__wf_check(tlm__modules_sync(tlm__wf.tw));
	tlm__clock_calibrate();
	/* watermark first, then heads: every event below it is published */
	uint64_t wmark = atomic_load_explicit(&tlm__seq, memory_order_seq_cst);
	uint64_t now = tlm__now_ns();
	uint32_t nr = atomic_load_explicit(&tlm__nrings, memory_order_acquire);
	if (nr > TLM__MAX_RINGS)
		nr = TLM__MAX_RINGS;
	for (uint32_t i = 0; i < nr; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		if (!r)
			continue;
		uint64_t f = atomic_load_explicit(&r->inflight, memory_order_seq_cst);
		if (f < wmark && !stuck(r, f, now))
			wmark = f;
	}
	stage_cap = UINT64_MAX;
	for (uint32_t i = 0; i < nr; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		if (r)
			drain_ring(r, no_alloc);
	}
	merge(wmark < stage_cap ? wmark : stage_cap, nr);
	uint64_t nl = atomic_load_explicit(&tlm__lost_noring, memory_order_relaxed);
	if (nl > noring_seen && !tlm__wf.failed) {
		tlm__wf_check(tlm_tw_lost(tlm__wf.tw, UINT32_MAX, nl - noring_seen));
		noring_seen = nl;
	}
	if (!no_alloc)
		tlm__wd_jobs(final_pass);
	if (!tlm__wf.failed)
		tlm__wf_check(tlm_tw_flush(tlm__wf.tw));
}

/* Caller holds the lock. A producer whose ring stayed full while the writer
 * thread did not run (starved on a loaded machine) drains on its own thread,
 * on the hot path: without allocating and without the loader lock (no module
 * scan). A definition the intern tables cannot take without growing stays in
 * its ring, with what follows it, until the writer thread drains. */
void tlm__wm_drain_help(void)
{
	helping = true;
	tlm__wm_drain(true);
	helping = false;
}

/* The trace ends: write everything, whoever is still inside a hooked call;
 * an event still in flight will not be in this trace: count it lost. */
void tlm__wm_drain_final(void)
{
	final_pass = true;
	tlm__wm_drain(false);
	final_pass = false;
	uint32_t nr = atomic_load_explicit(&tlm__nrings, memory_order_acquire);
	for (uint32_t i = 0; i < nr && i < TLM__MAX_RINGS; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		if (r && atomic_load_explicit(&r->inflight, memory_order_acquire) != UINT64_MAX && !tlm__wf.failed)
			tlm__wf_check(tlm_tw_lost(tlm__wf.tw, r->thread_index, 1));
	}
	tlm__wd_exit(); /* a high the rate limit skipped, with no free after it */
}

void tlm__wm_reset_child(void)
{
	uint32_t nr = atomic_load(&tlm__nrings);
	for (uint32_t i = 0; i < nr && i < TLM__MAX_RINGS; i++) {
		struct tlm__ring *r = atomic_load(&tlm__rings[i]);
		struct wring *w = r ? r->wstate : NULL;
		if (w && w->buf && w->buf != w->inline_buf)
			free(w->buf);
	}
	noring_seen = 0;
	tlm__wd_reset();
}
