/* SPDX-License-Identifier: MIT */
/* ring.c - creation, ownership and recycling of the per-thread rings. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recording/config.h"
#include "recording/forkguard.h"
#include "recording/log.h"
#include "recording/ring.h"

struct tlm__ring *_Atomic tlm__rings[TLM__MAX_RINGS];
_Atomic uint32_t tlm__nrings;
_Atomic uint64_t tlm__seq;
_Atomic uint32_t tlm__next_thread;
_Atomic uint64_t tlm__lost_noring;

TLM_TLS struct tlm__ring *tlm__t_ring;
static size_t stk_size, writer_size;
void tlm__ring_release(struct tlm__ring *r)
{
	if (tlm__t_ring == r)
		tlm__t_ring = NULL;
	atomic_store_explicit(&r->state, TLM__RING_EXITED, memory_order_release);
}

bool tlm__ring_open(const struct tlm__ring *r)
{
	uint64_t end = atomic_load_explicit(&r->open_end, memory_order_relaxed);
	return end && atomic_load_explicit(&r->head, memory_order_relaxed) < end;
}

bool tlm__ring_void_open(struct tlm__ring *r)
{
	bool was = false;
	uint64_t end = atomic_load_explicit(&r->open_end, memory_order_relaxed);
	if (end) {
		/* not yet published (a commit publishes, then clears open_end) */
		if (atomic_load_explicit(&r->head, memory_order_relaxed) < end) {
			uint64_t ev = atomic_load_explicit(&r->open_ev, memory_order_relaxed);
			struct tlm__slot *s = &r->slots[ev & r->mask];
			s->stream = end - ev - 1;
			s->type = TLM__SLOT_VOID;
			atomic_store_explicit(&r->head, end, memory_order_release);
			was = true;
		}
		atomic_store_explicit(&r->open_end, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&r->inflight, UINT64_MAX, memory_order_release);
	return was;
}

static void ring_adopt(struct tlm__ring *r)
{
	r->thread_index = atomic_fetch_add_explicit(&tlm__next_thread, 1, memory_order_relaxed);
	r->tid = (int32_t)syscall(SYS_gettid);
	memset(r->name, 0, sizeof r->name);
	(void)prctl(PR_GET_NAME, r->name, 0, 0, 0);
	atomic_store_explicit(&r->inflight, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&r->open_end, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_relaxed);
	atomic_store_explicit(&r->state, TLM__RING_ACTIVE, memory_order_release);
}

static struct tlm__ring *ring_recycle(void)
{
	uint32_t n = atomic_load_explicit(&tlm__nrings, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_acquire);
		int expect = TLM__RING_FREE;
		if (r && atomic_compare_exchange_strong(&r->state, &expect, TLM__RING_STARTING_CLAIM))
			return r;
	}
	return NULL;
}

void tlm__ring_layout(size_t stk_bytes, size_t writer_bytes)
{
	stk_size = stk_bytes;
	writer_size = writer_bytes;
}

#define RING_HDR ((sizeof(struct tlm__ring) + 4095) & ~(size_t)4095)

/* Every ring's mapping is this long (a wiped header forgets its map_bytes). */
static size_t ring_bytes(void)
{
	size_t stk = (stk_size + 4095) & ~(size_t)4095;
	size_t ws = (writer_size + 4095) & ~(size_t)4095;
	return RING_HDR + stk + ws + (size_t)tlm__cfg.ring_slots * sizeof(struct tlm__slot);
}

static struct tlm__ring *ring_create(void)
{
	size_t hdr = RING_HDR;
	size_t stk = (stk_size + 4095) & ~(size_t)4095;
	size_t ws = (writer_size + 4095) & ~(size_t)4095;
	size_t bytes = ring_bytes();
	size_t slots = tlm__cfg.ring_slots;
	/* mmap, not malloc: the host may hold malloc's locks (we may be inside a
	 * signal handler or an allocator callback) */
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct tlm__ring *r = m;
	r->armed = madvise(m, hdr, MADV_WIPEONFORK) == 0 ? 1 : 2;
	r->map_bytes = bytes;
	r->mask = (uint32_t)(slots - 1);
	r->stk = (struct tlm__stk_cache *)((char *)m + hdr);
	r->wstate = (char *)m + hdr + stk;
	r->slots = (struct tlm__slot *)((char *)m + hdr + stk + ws);
	uint32_t i = atomic_fetch_add_explicit(&tlm__nrings, 1, memory_order_acq_rel);
	if (i >= TLM__MAX_RINGS) {
		atomic_fetch_sub_explicit(&tlm__nrings, 1, memory_order_relaxed);
		munmap(m, bytes);
		tlm__log_once(too_many, "more than %u recording threads alive at once: events of further threads are counted as lost",
			      TLM__MAX_RINGS);
		return NULL;
	}
	atomic_store_explicit(&r->state, TLM__RING_STARTING_CLAIM, memory_order_relaxed);
	/* publish in the slot, then the writer may see it */
	atomic_store_explicit(&tlm__rings[i], r, memory_order_release);
	return r;
}

struct tlm__ring *tlm__ring_self_slow(bool *adopted)
{
	struct tlm__ring *r = ring_recycle();
	if (!r)
		r = ring_create();
	if (!r)
		return NULL;
	ring_adopt(r);
	*adopted = true;
	tlm__t_ring = r;
	return r;
}

struct tlm__ring *tlm__ring_peek(void)
{
	return tlm__t_ring;
}

void tlm__ring_forget_self(void)
{
	tlm__t_ring = NULL;
}

/* In a forked child only the forking thread exists and none of the parent's
 * rings belong to the child's trace: unmap them all and start afresh. */
void tlm__ring_reset_all_child(void)
{
	uint32_t n = atomic_load_explicit(&tlm__nrings, memory_order_relaxed);
	if (n > TLM__MAX_RINGS)
		n = TLM__MAX_RINGS;
	for (uint32_t i = 0; i < n; i++) {
		struct tlm__ring *r = atomic_load_explicit(&tlm__rings[i], memory_order_relaxed);
		atomic_store_explicit(&tlm__rings[i], NULL, memory_order_relaxed);
		if (r)
			munmap(r, ring_bytes()); /* its header may read 0 here (armed) */
	}
	atomic_store(&tlm__nrings, 0);
	atomic_store(&tlm__seq, 0);
	atomic_store(&tlm__next_thread, 0);
	atomic_store(&tlm__lost_noring, 0);
	tlm__t_ring = NULL;
}
