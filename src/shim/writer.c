/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the one thread that drains the rings into the trace file.
 *
 * Each drain: note module changes; compute the watermark W (below every
 * in-flight producer's announced seq); move every ring's records to staging
 * (stack definitions are interned globally and written at once); merge the
 * staged events below W in seq order into the trace writer; flush. Staging
 * lets rings empty even while one thread sits in a slow cuMemFree holding W
 * back, so a producer never waits on another thread's call.
 *
 * Whoever drains holds the writer lock: normally the writer thread; after the
 * final flush, a late producer; in a fatal-signal handler, the faulting thread
 * (if it can take the lock within a bounded time).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim/modules.h"
#include "shim/output.h"
#include "shim/ring.h"
#include "shim/pystack.h"
#include "shim/stack.h"
#include "tlm/trace.h"
#include "tlm_config.h"

struct staged {
	uint64_t seq;
	struct tlm_event ev;
};

/* The writer's view of one ring. It lives in the ring's own mapping (the
 * producer maps it, see tlm__writer_ring_bytes) with room to stage a whole
 * ring, so a drain from a fatal-signal handler needs no allocation. */
struct wring {
	uint32_t gen;
	bool known;
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

struct gstack {            /* global stack intern table entry */
	uint64_t hash;
	uint32_t id, depth;
	size_t off;
};

static struct {
	int fd;
	char path[4300];
	struct tlm_tw *tw;
	bool failed;
	uint64_t next_seq;
	uint64_t order_errors;
	uint64_t discarded;
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
	pthread_t thread;
	bool thread_started;
	bool props_live;            /* PROP records go straight into the trace */
} W = {.fd = -1};

/* Facts about the recording (PROP records), kept so that every trace this
 * process writes (a fork child's too) gets them, whenever they were set. */
#define NPROPS 8
static struct {
	char key[TLM_MAX_PROP_KEY + 1];
	char value[512];
} props[NPROPS];
static size_t nprops;

static _Atomic int wlock;
static _Atomic uint32_t kick_word;
static _Atomic uint64_t start_realtime, start_monotonic;

/* ---------------------------------------------------------------- lock */

static void lock(void)
{
	unsigned spins = 0;
	while (atomic_exchange_explicit(&wlock, 1, memory_order_acquire)) {
		if (++spins > 64)
			sched_yield();
	}
}

static bool trylock_for_ms(unsigned ms)
{
	uint64_t until = tlm__now_ns() + (uint64_t)ms * 1000000ull;
	while (atomic_exchange_explicit(&wlock, 1, memory_order_acquire)) {
		if (tlm__now_ns() > until)
			return false;
		sched_yield();
	}
	return true;
}

static void unlock(void)
{
	atomic_store_explicit(&wlock, 0, memory_order_release);
}

/* ---------------------------------------------------------------- sink */

static int sink(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	const char *p = buf;
	while (len) {
		ssize_t w = write(W.fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void write_failed(int err)
{
	if (W.failed)
		return;
	W.failed = true;
	tlm__log("writing the trace %s failed: %s; recording stops here and the trace ends truncated", W.path,
		 strerror(-err));
}

/* keeps the first error; afterwards everything is counted, not written */
static void check(int rc)
{
	if (rc < 0)
		write_failed(rc);
}

/* ---------------------------------------------------------- global stacks */

static uint64_t ghash(const uint64_t *ip, uint32_t d)
{
	uint64_t h = 1469598103934665603ull ^ d;
	for (uint32_t i = 0; i < d; i++)
		h = (h ^ ip[i]) * 1099511628211ull;
	return h;
}

static bool gs_grow(void)
{
	size_t nc = W.gs_cap ? W.gs_cap * 2 : 4096;
	struct gstack *n = calloc(nc, sizeof *n);
	if (!n)
		return false;
	for (size_t i = 0; i < W.gs_cap; i++) {
		if (!W.gs[i].id)
			continue;
		size_t j = W.gs[i].hash & (nc - 1);
		while (n[j].id)
			j = (j + 1) & (nc - 1);
		n[j] = W.gs[i];
	}
	free(W.gs);
	W.gs = n;
	W.gs_cap = nc;
	return true;
}

/* Returns the global id (0 if it cannot be stored), writing a STACK record
 * when the stack is new to the trace. */
static uint32_t gs_intern(const uint64_t *ip, uint32_t d, bool no_alloc)
{
	if ((W.gs_n + 1) * 2 > W.gs_cap && (no_alloc || !gs_grow()))
		return 0;
	uint64_t h = ghash(ip, d);
	size_t j = h & (W.gs_cap - 1);
	for (; W.gs[j].id; j = (j + 1) & (W.gs_cap - 1))
		if (W.gs[j].hash == h && W.gs[j].depth == d && !memcmp(&W.gips[W.gs[j].off], ip, d * 8))
			return W.gs[j].id;
	if (W.gips_n + d > W.gips_cap) {
		size_t nc = W.gips_cap ? W.gips_cap * 2 : 65536;
		while (nc < W.gips_n + d)
			nc *= 2;
		uint64_t *n = no_alloc ? NULL : realloc(W.gips, nc * 8);
		if (!n)
			return 0;
		W.gips = n;
		W.gips_cap = nc;
	}
	memcpy(&W.gips[W.gips_n], ip, d * 8);
	W.gs[j] = (struct gstack){.hash = h, .id = ++W.next_gid, .depth = d, .off = W.gips_n};
	W.gips_n += d;
	W.gs_n++;
	if (!W.failed)
		check(tlm_tw_stack(W.tw, W.gs[j].id, ip, d));
	return W.gs[j].id;
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
	if ((W.str_n + 1) * 2 > W.str_cap && (no_alloc || !table_grow((void **)&W.str, &W.str_cap, sizeof *W.str, 1024)))
		return 0;
	uint64_t h = bhash(s, len, 1469598103934665603ull);
	size_t j = h & (W.str_cap - 1);
	for (; W.str[j].id; j = (j + 1) & (W.str_cap - 1))
		if (W.str[j].hash == h && W.str[j].len == len && !memcmp(W.spool + W.str[j].off, s, len))
			return W.str[j].id;
	if (!grow((void **)&W.spool, &W.spool_cap, W.spool_n + len + 1, 1, 65536, no_alloc))
		return 0;
	memcpy(W.spool + W.spool_n, s, len);
	W.str[j] = (struct gstr){.hash = h, .id = (uint32_t)W.str_n + 1, .len = len, .off = W.spool_n};
	W.spool_n += len;
	W.str_n++;
	if (!W.failed)
		check(tlm_tw_string(W.tw, W.str[j].id, s, len));
	return W.str[j].id;
}

/* A PYSTACK definition from a ring (header slot at tail): global id, or 0. */
static uint32_t ps_intern(struct tlm__ring *r, struct wring *w, uint64_t tail, bool no_alloc)
{
	const struct tlm__slot *s = &r->slots[tail & r->mask];
	static struct tlm_rec_pystack ps; /* under the writer lock */
	static uint8_t buf[TLM__PY_MAX_FRAMES * (8u + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX) + 64];
	uint32_t bytes = (uint32_t)s->addr, n = (uint32_t)s->size, lnat = (uint32_t)s->stream;
	if (bytes > sizeof buf || n > TLM__PY_MAX_FRAMES)
		return 0;
	for (uint32_t o = 0; o < bytes; o += 64)
		memcpy(buf + o, &r->slots[(tail + 1 + o / 64) & r->mask], 64);
	ps.id = 0;
	ps.native = lnat < TLM__STK_BUCKETS ? w->stkmap[lnat] : 0;
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
	if ((W.ps_n + 1) * 2 > W.ps_cap && (no_alloc || !table_grow((void **)&W.ps, &W.ps_cap, sizeof *W.ps, 1024)))
		return 0;
	uint32_t nk = 1 + 3 * ps.depth;
	if (!grow((void **)&W.pkeys, &W.pkeys_cap, W.pkeys_n + nk, sizeof *W.pkeys, 65536, no_alloc))
		return 0;
	uint32_t *k = W.pkeys + W.pkeys_n;
	k[0] = ps.native;
	for (uint32_t i = 0; i < ps.depth; i++) {
		k[1 + 3 * i] = ps.f[i].file;
		k[2 + 3 * i] = ps.f[i].name;
		k[3 + 3 * i] = (uint32_t)ps.f[i].line;
	}
	uint64_t h = bhash(k, nk * 4, 1469598103934665603ull);
	size_t j = h & (W.ps_cap - 1);
	for (; W.ps[j].id; j = (j + 1) & (W.ps_cap - 1))
		if (W.ps[j].hash == h && W.ps[j].depth == nk && !memcmp(W.pkeys + W.ps[j].off, k, nk * 4))
			return W.ps[j].id;
	W.ps[j] = (struct gstack){.hash = h, .id = ++W.next_gid, .depth = nk, .off = W.pkeys_n};
	W.pkeys_n += nk;
	W.ps_n++;
	ps.id = W.ps[j].id;
	if (!W.failed)
		check(tlm_tw_pystack(W.tw, &ps));
	return ps.id;
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
		if (!W.failed)
			check(tlm_tw_thread(W.tw, &t));
	}
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	while (tail < head) {
		struct tlm__slot *s = &r->slots[tail & r->mask];
		if (s->type == TLM__SLOT_STACK) {
			uint32_t d = (uint32_t)s->size, lid = (uint32_t)s->aux;
			uint64_t ips[TLM_MAX_STACK_DEPTH];
			for (uint32_t k = 0; k < d; k += 8) {
				const uint64_t *src = (const uint64_t *)&r->slots[(tail + 1 + k / 8) & r->mask];
				memcpy(ips + k, src, (d - k < 8 ? d - k : 8) * 8);
			}
			if (lid < TLM__STK_BUCKETS)
				w->stkmap[lid] = gs_intern(ips, d, no_alloc);
			tail += 1 + (d + 7) / 8;
			continue;
		}
		if (s->type == TLM__SLOT_PYSTACK) {
			uint32_t lid = (uint32_t)s->aux;
			uint32_t gid = ps_intern(r, w, tail, no_alloc);
			if (lid < TLM__PY_STACKS)
				w->pymap[lid] = gid;
			tail += 1 + ((uint32_t)s->addr + 63) / 64;
			continue;
		}
		/* an event (and its extension slot for a failed allocation) */
		if (!stage(w, no_alloc))
			break;
		struct staged *e = &w->buf[w->n++];
		e->seq = s->seq;
		e->ev = (struct tlm_event){
			.time_ns = tlm__ticks_to_ns(s->time_ns), .addr = s->addr, .size = s->size, .stream = s->stream, .aux = s->aux,
			.stack_id = (s->stack & TLM__PY_ID_BIT) ? ((s->stack & ~TLM__PY_ID_BIT) < TLM__PY_STACKS
									 ? w->pymap[s->stack & ~TLM__PY_ID_BIT] : 0)
				    : s->stack < TLM__STK_BUCKETS ? w->stkmap[s->stack] : 0,
			.thread = r->thread_index, .result = s->result, .device = s->device, .op = s->op,
			.kind = s->kind, .flags = s->flags, .api = s->api,
		};
		tail++;
		if ((s->op == TLM_OP_ALLOC && s->result != 0) || s->type == TLM__SLOT_EVENT_FREE) {
			e->ev.device_free = r->slots[tail & r->mask].addr;
			tail++;
		}
	}
	atomic_store_explicit(&r->tail, tail, memory_order_seq_cst);
	atomic_store_explicit(&r->kicked, 0, memory_order_relaxed);
	wake_producer(r);
	uint64_t lost = atomic_load_explicit(&r->lost, memory_order_relaxed);
	if (lost > w->lost_seen) {
		if (!W.failed)
			check(tlm_tw_lost(W.tw, r->thread_index, lost - w->lost_seen));
		w->lost_seen = lost;
	}
	/* the owner is gone and everything is out: the ring may be reused */
	if (st == TLM__RING_EXITED && tail == atomic_load_explicit(&r->head, memory_order_acquire)) {
		int ex = TLM__RING_EXITED;
		atomic_compare_exchange_strong(&r->state, &ex, TLM__RING_FREE);
	}
}

static uint64_t noring_seen;

/* Emits, in seq order, every staged event below the watermark. */
static void merge(uint64_t wmark, uint32_t nr)
{
	static struct wring *act[TLM__MAX_RINGS];
	uint32_t na = 0;
	for (uint32_t i = 0; i < nr; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		if (r && wstate(r)->pos < wstate(r)->n)
			act[na++] = wstate(r);
	}
	for (;;) {
		struct staged *best = NULL;
		struct wring *bw = NULL;
		for (uint32_t k = 0; k < na; k++) {
			struct wring *w = act[k];
			if (w->pos < w->n && w->buf[w->pos].seq < wmark && (!best || w->buf[w->pos].seq < best->seq)) {
				best = &w->buf[w->pos];
				bw = w;
			}
		}
		if (!best)
			break;
		bw->pos++;
		if (best->seq != W.next_seq)
			W.order_errors++;
		W.next_seq = best->seq + 1;
		if (W.failed)
			W.discarded++;
		else
			check(tlm_tw_event(W.tw, &best->ev));
	}
	for (uint32_t k = 0; k < na; k++) {
		struct wring *w = act[k];
		if (w->pos == w->n)
			w->pos = w->n = 0;
	}
}

/* Caller holds the lock. */
static void drain(bool no_alloc)
{
	if (!W.tw)
		return;
	if (!no_alloc && !W.failed)
		check(tlm__modules_sync(W.tw));
	tlm__clock_calibrate();
	/* watermark first, then heads: every event below it is published */
	uint64_t wmark = atomic_load_explicit(&tlm__seq, memory_order_seq_cst);
	uint32_t nr = atomic_load_explicit(&tlm__nrings, memory_order_acquire);
	if (nr > TLM__MAX_RINGS)
		nr = TLM__MAX_RINGS;
	for (uint32_t i = 0; i < nr; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		if (!r)
			continue;
		uint64_t f = atomic_load_explicit(&r->inflight, memory_order_seq_cst);
		if (f < wmark)
			wmark = f;
	}
	for (uint32_t i = 0; i < nr; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		if (r)
			drain_ring(r, no_alloc);
	}
	merge(wmark, nr);
	uint64_t nl = atomic_load_explicit(&tlm__lost_noring, memory_order_relaxed);
	if (nl > noring_seen && !W.failed) {
		check(tlm_tw_lost(W.tw, UINT32_MAX, nl - noring_seen));
		noring_seen = nl;
	}
	if (!W.failed)
		check(tlm_tw_flush(W.tw));
}

/* ---------------------------------------------------------------- thread */

static void *writer_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "tlm-writer", 0, 0, 0);
	for (;;) {
		if (!atomic_exchange_explicit(&kick_word, 0, memory_order_acq_rel)) {
			struct timespec to = {tlm__cfg.drain_ms / 1000, (long)(tlm__cfg.drain_ms % 1000) * 1000000L};
			syscall(SYS_futex, (uint32_t *)&kick_word, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
			atomic_store_explicit(&kick_word, 0, memory_order_relaxed);
		}
		if (TLM_UNLIKELY(tlm__cfg.writer_delay_ms)) {
			struct timespec d = {tlm__cfg.writer_delay_ms / 1000, (long)(tlm__cfg.writer_delay_ms % 1000) * 1000000L};
			nanosleep(&d, NULL);
		}
		lock();
		if (atomic_load_explicit(&tlm__state, memory_order_acquire) != TLM__RUNNING) {
			unlock();
			return NULL;
		}
		drain(false);
		unlock();
	}
}

void tlm__writer_kick(void)
{
	if (!atomic_exchange_explicit(&kick_word, 1, memory_order_acq_rel))
		syscall(SYS_futex, (uint32_t *)&kick_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* ---------------------------------------------------------------- header */

static char **read_cmdline(uint32_t *argc)
{
	static char buf[65536];
	static char *argv[1024];
	*argc = 0;
	FILE *f = fopen("/proc/self/cmdline", "re");
	if (!f)
		return argv;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	for (size_t i = 0; i < n && *argc < 1024;) {
		argv[(*argc)++] = &buf[i];
		i += strlen(&buf[i]) + 1;
	}
	return argv;
}

/* ---------------------------------------------------------- properties */

void tlm__writer_prop(const char *key, const char *value)
{
	lock();
	size_t i = 0;
	while (i < nprops && strcmp(props[i].key, key))
		i++;
	if (i == NPROPS) {
		unlock();
		return; /* the keys are ours and few: cannot happen */
	}
	nprops += i == nprops;
	snprintf(props[i].key, sizeof props[i].key, "%s", key);
	snprintf(props[i].value, sizeof props[i].value, "%s", value);
	if (W.props_live && !W.failed)
		check(tlm_tw_prop(W.tw, props[i].key, props[i].value));
	unlock();
}

/* Caller holds the lock; a new trace gets every property set so far. */
static void props_start(void)
{
	for (size_t i = 0; i < nprops && !W.failed; i++)
		check(tlm_tw_prop(W.tw, props[i].key, props[i].value));
	W.props_live = true;
}

void tlm__writer_note_start(void)
{
	struct timespec rt, mt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	atomic_store(&start_realtime, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
	atomic_store(&start_monotonic, (uint64_t)mt.tv_sec * 1000000000ull + (uint64_t)mt.tv_nsec);
}

int tlm__writer_start(void)
{
	char path[4200];
	if (tlm__output_expand(tlm__cfg.output, path, sizeof path) != 0)
		return -1;
	int fd = tlm__output_create(path, W.path, sizeof W.path);
	if (fd < 0)
		return -1;
	static struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.flags = tlm__cfg.drop ? TLM_TRACE_F_DROP_MODE : 0;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	if (!atomic_load(&start_realtime))
		tlm__writer_note_start();
	h.start_realtime_ns = atomic_load(&start_realtime);
	h.start_monotonic_ns = atomic_load(&start_monotonic);
	h.clock_id = CLOCK_MONOTONIC;
	h.stack_depth = tlm__cfg.stack_depth;
	if (gethostname(h.host, sizeof h.host - 1) != 0)
		strcpy(h.host, "unknown");
	ssize_t l = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
	h.exe[l > 0 ? l : 0] = 0;
	snprintf(h.tlm_version, sizeof h.tlm_version, "%s", TLM_VERSION);
	h.argv = read_cmdline(&h.argc);
	W.fd = fd;
	W.failed = false;
	W.next_seq = 0;
	int err = 0;
	W.tw = tlm_tw_open(&h, sink, NULL, 64 * 1024, tlm__cfg.compress, &err);
	if (!W.tw) {
		tlm__log("cannot start the trace %s: %s; recording is off", W.path, strerror(err ? -err : ENOMEM));
		close(fd);
		unlink(W.path);
		W.fd = -1;
		return -1;
	}
	lock();
	check(tlm__modules_sync(W.tw));
	props_start();
	unlock();
	/* the writer must never take the host's signals */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&W.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	W.thread_started = rc == 0;
	if (rc != 0)
		tlm__log("cannot start the writer thread: %s; events are written synchronously", strerror(rc));
	return 0;
}

/* Drains on the calling thread: when there is no writer thread (start
 * failed, after the final flush) or before dlclose/exec. */
void tlm__writer_drain_sync(void)
{
	lock();
	drain(false);
	unlock();
}

/* ---------------------------------------------------------------- ends */

void tlm__writer_finish(void)
{
	lock();
	if (atomic_load_explicit(&tlm__state, memory_order_acquire) != TLM__RUNNING) {
		unlock();
		return;
	}
	drain(false);
	/* give producers caught mid-event a moment to publish */
	for (int i = 0; i < 20 && W.next_seq < atomic_load(&tlm__seq); i++) {
		struct timespec ms = {0, 500000};
		nanosleep(&ms, NULL);
		drain(false);
	}
	tlm__stack_report();
	if (W.order_errors)
		tlm__log("internal error: %llu events out of sequence", (unsigned long long)W.order_errors);
	W.props_live = false; /* nothing after END */
	if (!W.failed) {
		check(tlm_tw_end(W.tw, tlm__now_ns()));
	}
	atomic_store_explicit(&tlm__state, TLM__CLOSED, memory_order_release);
	unlock();
	tlm__writer_kick(); /* the thread sees CLOSED and exits at once */
	if (W.thread_started && !pthread_equal(W.thread, pthread_self())) {
		pthread_join(W.thread, NULL);
		W.thread_started = false;
	}
}

void tlm__writer_signal(int signo)
{
	if (!W.tw || !trylock_for_ms(200))
		return;
	drain(true);
	if (!W.failed) {
		check(tlm_tw_signal(W.tw, signo));
		check(tlm_tw_flush(W.tw));
	}
	unlock();
}

const char *tlm__writer_path(void)
{
	return W.tw ? W.path : NULL;
}

uint64_t tlm__writer_order_errors(void)
{
	return W.order_errors;
}

/* ---------------------------------------------------------------- fork */

void tlm__writer_atfork_prepare(void)
{
	lock();
}

void tlm__writer_atfork_parent(void)
{
	unlock();
}

/* The child has only the forking thread: it drops the parent's trace (that
 * file stays the parent's) and starts its own at its first event. */
void tlm__writer_atfork_child(void)
{
	int s = atomic_load(&tlm__state);
	if (W.tw)
		tlm_tw_close(W.tw);
	W.tw = NULL;
	if (W.fd >= 0)
		close(W.fd);
	W.fd = -1;
	uint32_t nr = atomic_load(&tlm__nrings);
	for (uint32_t i = 0; i < nr && i < TLM__MAX_RINGS; i++) {
		struct tlm__ring *r = atomic_load(&tlm__rings[i]);
		struct wring *w = r ? r->wstate : NULL;
		if (w && w->buf && w->buf != w->inline_buf)
			free(w->buf);
	}
	free(W.gs);
	free(W.gips);
	W.gs = NULL;
	W.gips = NULL;
	W.gs_cap = W.gs_n = W.gips_n = W.gips_cap = 0;
	free(W.str);
	free(W.spool);
	free(W.ps);
	free(W.pkeys);
	W.str = NULL;
	W.spool = NULL;
	W.ps = NULL;
	W.pkeys = NULL;
	W.str_cap = W.str_n = W.spool_n = W.spool_cap = W.ps_cap = W.ps_n = W.pkeys_n = W.pkeys_cap = 0;
	W.next_gid = 0;
	W.next_seq = W.order_errors = W.discarded = 0;
	W.failed = false;
	W.thread_started = false;
	W.props_live = false;
	noring_seen = 0;
	tlm__modules_reset();
	tlm__ring_reset_all_child();
	tlm__writer_note_start();
	if (s != TLM__OFF)
		atomic_store(&tlm__state, TLM__UNINIT);
	atomic_store(&kick_word, 0);
	unlock();
}
