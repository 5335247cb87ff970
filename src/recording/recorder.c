/* SPDX-License-Identifier: MIT */
/*
 * recorder.c - the hot path: one event from a hook into the thread's ring.
 *
 * Cost per event: a clock read (the TSC), a TLS load, the stack capture
 * and a per-thread intern lookup (plus, on a Python thread, the frame-chain
 * walk of pywalk.c), a release store and one atomic add (the global order),
 * and a release store to publish. No allocation, no lock, no syscall except
 * when the ring is half full (one futex wake) or full (lossless wait).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "recording/clock.h"
#include "recording/config.h"
#include "recording/devmem.h"
#include "recording/driver_query.h"
#include "recording/recorder.h"
#include "recording/stack/pystack.h"
#include "recording/stack/stack.h"
#include "recording/writer/writer.h"

/* A free's claim on its allocation (reserved_table.h) while its record is
 * open: an abandoned free puts it back, as the report, which never sees the
 * free, keeps the allocation. */
static TLM_TLS struct tlm__rt_claim t_claim = {.slot = -1};

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

void tlm__rec_abandon(void)
{
	struct tlm__ring *r = tlm__ring_peek();
	if (r && tlm__ring_void_open(r))
		tlm__rt_settle(&t_claim, false);
	t_claim.slot = -1;
}

/* Thread exit (a TLS destructor, on the exiting thread): a free it left open
 * (cancelled, or pthread_exit from inside a hooked call) gives its claim
 * back; the writer counts the event lost when it drains the exited ring
 * (ring.h). The slots are left alone: a cancellation runs this from its
 * signal handler. */
static void thread_exit(void *p)
{
	struct tlm__ring *r = p;
	if (tlm__ring_peek() == r && tlm__ring_open(r))
		tlm__rt_settle(&t_claim, false);
	t_claim.slot = -1;
	tlm__ring_release(r);
}

static void exit_key_create(void)
{
	(void)pthread_key_create(&exit_key, thread_exit);
}

void tlm__rec_atfork_child(void)
{
	/* the parent's rings are gone from the child (ring.h): none to release */
	if (exit_key_once != PTHREAD_ONCE_INIT)
		(void)pthread_setspecific(exit_key, NULL);
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *to)
{
	return syscall(SYS_futex, (uint32_t *)w, op, val, to, NULL, 0);
}

/* Lossless mode: sleep until the writer made room (it wakes us after each
 * drain); with the writer gone (after the final flush) drain ourselves. */
static bool wait_for_space(struct tlm__ring *r, uint64_t head, uint32_t need)
{
	uint64_t size = (uint64_t)r->mask + 1;
	if (tlm__cfg.drop)
		return false;
	unsigned drained = 0;
	for (;;) {
		uint32_t w = atomic_load_explicit(&r->wake, memory_order_acquire);
		atomic_store_explicit(&r->waiting, 1, memory_order_seq_cst);
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_seq_cst);
		if (head + need - r->cached_tail <= size) {
			atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
			return true;
		}
		if (atomic_load_explicit(&tlm__state, memory_order_acquire) != TLM__RUNNING) {
			tlm__writer_drain_sync();
			continue;
		}
		if (tlm__writer_threadless()) { /* no thread will drain (a raw-fork child, writer.h) */
			if (drained++) { /* no room after a drain: another thread's event is open */
				struct timespec d = {0, 100000};
				nanosleep(&d, NULL);
			}
			tlm__writer_help_drain();
			continue;
		}
		tlm__writer_kick();
		struct timespec to = {0, 2000000};
		if (futex(&r->wake, FUTEX_WAIT_PRIVATE, w, &to) != 0 && errno == ETIMEDOUT)
			tlm__writer_help_drain(); /* the writer is slow or gone: do what it may here */
	}
}

static void count_lost(struct tlm__ring *r)
{
	if (r)
		atomic_fetch_add_explicit(&r->lost, 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&tlm__lost_noring, 1, memory_order_relaxed);
}

/* ST_PYTHON_ELSE_ALL: the Python frames, and the native unwind only where
 * there are none (recorder.h, tlm__rec_begin_block) */
enum { ST_NONE, ST_PYTHON, ST_ALL, ST_PYTHON_ELSE_ALL };
static bool rec_begin(struct tlm__rec *rc, bool ext, int stacks);

bool tlm__rec_begin(struct tlm__rec *rc, bool ext)
{
	return rec_begin(rc, ext, ST_ALL);
}

/* An allocator's block allocation on a Python thread: its Python frames
 * name it (PyTorch's own recorder keeps those alone), and the unwind
 * through c10 and ATen under them was a fifth of the capture's cost on a
 * training step (recorder.h) */
bool tlm__rec_begin_block(struct tlm__rec *rc, bool ext)
{
	return rec_begin(rc, ext, tlm__cfg.block_native ? ST_ALL : ST_PYTHON_ELSE_ALL);
}

/* An allocator's block free: its Python frames (the line that dropped the
 * tensor, as PyTorch's snapshot has), no native unwind: the report keeps
 * the allocation's native stack, and a free's destructor path through
 * libtorch is deep and varied, the costliest part an event could have. */
bool tlm__rec_begin_pyonly(struct tlm__rec *rc)
{
	return rec_begin(rc, false, ST_PYTHON);
}

static bool rec_begin(struct tlm__rec *rc, bool ext, int stacks)
{
	/* the time first: the clock read (rdtsc, microcoded) then runs beside
	 * the stack capture; read after the global order's locked add it waited
	 * for that add, about 50 ns an event on a training step (issue 29) */
	const uint64_t ticks = tlm__ticks();
	bool adopted = false;
	struct tlm__ring *r = tlm__ring_self(&adopted);
	if (TLM_UNLIKELY(!r)) {
		count_lost(NULL);
		return false;
	}
	if (TLM_UNLIKELY(adopted)) { /* a new owner: nothing of the last one's stacks holds */
		tlm__stack_forget_all(r->stk);
		tlm__stack_thread_init(r->stk);
		tlm__py_forget(r);
		(void)pthread_once(&exit_key_once, exit_key_create);
		(void)pthread_setspecific(exit_key, r);
	}
	/* the event's slot line is cold (the ring is a MiB, the writer read it
	 * last): fetch it for writing now, while the stacks are taken, not at
	 * the global order's atomic, which would wait for the store's miss */
	__builtin_prefetch(&r->slots[atomic_load_explicit(&r->head, memory_order_relaxed) & r->mask], 1, 3);
	uint64_t *const ips = r->stk->ips; /* (stack.h) */
	uint32_t depth = 0, sid = 0;
	bool fresh = false;
	uint32_t pyid = 0, pyslots = 0;
	bool pyfresh = false;
	rc->py_ts = TLM__PY_TS_ASK;
	if (stacks != ST_NONE && tlm__cfg.stack_depth) {
		if (stacks == ST_ALL) {
			tlm__py_ready();
			sid = tlm__stack_get(r->stk, ips, tlm__cfg.stack_depth, &depth, &fresh);
		}
		pyid = tlm__py_get(r, sid, r->stk->gen, &pyfresh, &pyslots, &rc->py_ts);
		if (stacks == ST_PYTHON_ELSE_ALL && !pyid) {
			tlm__py_ready();
			sid = tlm__stack_get(r->stk, ips, tlm__cfg.stack_depth, &depth, &fresh);
		}
	}
	uint32_t need = 1 + (ext ? 1 : 0) + (fresh ? 1 + (depth * 8 + 63) / 64 : 0) + (pyfresh ? pyslots : 0);
	uint64_t size = (uint64_t)r->mask + 1;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (TLM_UNLIKELY(head + need - r->cached_tail > size)) {
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (head + need - r->cached_tail > size && !wait_for_space(r, head, need)) {
			if (fresh) /* its definition is lost too: forget every id */
				tlm__stack_forget_all(r->stk);
			if (pyfresh)
				tlm__py_forget(r);
			count_lost(r);
			return false;
		}
	}
	if (fresh) {
		struct tlm__slot *h = &r->slots[head & r->mask];
		h->type = TLM__SLOT_STACK;
		h->aux = sid;
		h->size = depth;
		head++;
		for (uint32_t i = 0; i < depth; i += 8, head++) {
			uint64_t *dst = (uint64_t *)&r->slots[head & r->mask];
			uint32_t n = depth - i < 8 ? depth - i : 8;
			memcpy(dst, ips + i, n * 8);
		}
	}
	if (pyfresh)
		head = tlm__py_write_def(r, head);
	struct tlm__slot *s = &r->slots[head & r->mask];
	/* announce a lower bound of our seq before taking it: the writer emits
	 * nothing at or above it until we publish (see ring.h). The bound is one
	 * past our own last seq, not a read of tlm__seq: reading the shared line
	 * before the add would move it between cores twice per event. Release
	 * is enough (a plain store on x86, where seq_cst is an xchg, a second
	 * full barrier): the add below is a release RMW, so a writer whose
	 * acquire load of tlm__seq sees our number sees this bound too. */
	atomic_store_explicit(&r->inflight, r->last_seq, memory_order_release);
	uint64_t seq = atomic_fetch_add_explicit(&tlm__seq, 1, memory_order_seq_cst);
	s->seq = seq;
	r->last_seq = seq + 1;
	s->time_ns = ticks; /* the writer converts to ns */
	s->type = TLM__SLOT_EVENT;
	s->stack = pyid ? pyid : sid;
	rc->ring = r;
	rc->ev = s;
	rc->ext = ext;
	rc->head = head + 1 + (ext ? 1 : 0);
	atomic_store_explicit(&r->open_ev, head, memory_order_relaxed);
	atomic_store_explicit(&r->open_seq, seq, memory_order_relaxed); /* not read back from the slot's line */
	atomic_signal_fence(memory_order_seq_cst); /* the slot before the mark: a handler may void it */
	atomic_store_explicit(&r->open_end, rc->head, memory_order_relaxed);
	return true;
}

void tlm__rec_commit(struct tlm__rec *rc)
{
	struct tlm__ring *r = rc->ring;
	atomic_store_explicit(&r->head, rc->head, memory_order_release);
	atomic_store_explicit(&r->inflight, UINT64_MAX, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst); /* published before the mark goes (tlm__ring_void_open) */
	atomic_store_explicit(&r->open_end, 0, memory_order_relaxed);
	uint64_t fill = rc->head - r->cached_tail;
	if (TLM_UNLIKELY(fill > ((uint64_t)r->mask + 1) / 2)) {
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (rc->head - r->cached_tail > ((uint64_t)r->mask + 1) / 2 &&
		    !atomic_exchange_explicit(&r->kicked, 1, memory_order_relaxed))
			tlm__writer_kick();
	}
	if (TLM_UNLIKELY(atomic_load_explicit(&tlm__state, memory_order_acquire) == TLM__CLOSED))
		tlm__writer_drain_sync(); /* late teardown: nobody else will write it */
}

static void fill(struct tlm__slot *s, const struct tlm__evargs *a)
{
	s->addr = a->addr;
	s->size = a->size;
	s->stream = a->stream;
	s->aux = a->aux;
	s->result = a->result;
	s->device = a->device;
	s->op = a->op;
	s->kind = a->kind;
	s->flags = a->flags;
	s->api = (uint8_t)a->api;
}

/* The first successful device allocation on each device also carries the
 * device's free memory (cuMemGetInfo once per device, after the call, like
 * for a failed one): the report's forecast needs what the process could hold. */
static _Atomic uint64_t free_probed; /* bit per device 0..63 */

static bool first_on_device(const struct tlm__evargs *a)
{
	if (a->result || a->op != TLM_OP_ALLOC || a->kind != TLM_KIND_DEVICE || a->device < 0 || a->device >= 64)
		return false;
	uint64_t bit = 1ull << a->device;
	if (atomic_load_explicit(&free_probed, memory_order_relaxed) & bit)
		return false;
	return !(atomic_fetch_or_explicit(&free_probed, bit, memory_order_relaxed) & bit);
}

/* The extension slot after rc's event, cleared. */
static struct tlm__slot *ext_slot(struct tlm__rec *rc)
{
	struct tlm__slot *x = &rc->ring->slots[(rc->head - 1) & rc->ring->mask];
	memset(x, 0, sizeof *x);
	x->type = TLM__SLOT_EXT;
	rc->ev->type = TLM__SLOT_EVENT_FREE; /* "an extension follows" */
	return x;
}

void tlm__record(const struct tlm__evargs *a)
{
	struct tlm__rec rc;
	t_claim.slot = -1;
	bool failed_alloc = a->result != 0 && a->op == TLM_OP_ALLOC;
	bool probe = !failed_alloc && first_on_device(a);
	int why = tlm__dm_after_alloc(a->op, a->kind, a->result, a->addr, a->size, a->device, probe); /* tracks it too */
	if (!tlm__rec_begin(&rc, failed_alloc || probe || why >= 0))
		return;
	fill(rc.ev, a);
	if (a->op == TLM_OP_FREE)
		rc.ev->flags |= tlm__py_free_flags(rc.py_ts);
	if (failed_alloc || probe || why >= 0) {
		struct tlm__slot *x = ext_slot(&rc);
		bool took = why >= 0 && tlm__dm_take(x, why, 0, a->device);
		/* device_free: the current device's free bytes, as before samples */
		if (failed_alloc || probe)
			x->addr = took && a->device == tlm__current_device() ? x->size : tlm__device_free_bytes();
	}
	tlm__rec_commit(&rc);
}

bool tlm__free_begin(struct tlm__rec *rc, const struct tlm__evargs *a)
{
	struct tlm__rt_claim c;
	bool found = tlm__rt_claim(a->kind, a->addr, &c);
	bool before = found && tlm__dm_before_free(&c);
	/* where it lives, whichever device is current; the driver is asked (before
	 * the record opens) only for an address the table does not know */
	int16_t device = found			      ? c.device
			 : a->device == TLM__DEV_CURRENT ? tlm__current_device()
			 : a->device == TLM__DEV_OF_PTR  ? tlm__free_device(a->addr)
							 : a->device;
	t_claim = c; /* before the record opens: an abandon puts it back */
	if (!tlm__rec_begin(rc, before)) {
		tlm__rt_settle(&c, true); /* no event: the table forgets it as the report will */
		return false;
	}
	rc->claim = c;
	fill(rc->ev, a);
	rc->ev->device = device;
	rc->ev->flags |= tlm__py_free_flags(rc->py_ts);
	if (before)
		tlm__dm_take(ext_slot(rc), TLM_DEVMEM_PEAK, TLM_DEVMEM_F_BEFORE, c.device);
	return true;
}

void tlm__free_end(struct tlm__rec *rc, int32_t result)
{
	rc->ev->result = result;
	tlm__rt_settle(&rc->claim, result == 0);
	tlm__rec_commit(rc);
	t_claim.slot = -1;
}
