/* SPDX-License-Identifier: MIT */
/*
 * stack_cache.c - skip the unwind when the call path is one seen before.
 *
 * The unwind from the hooked call's caller is a function of its registers
 * (rip, rsp at the call; rbp where a frame's CFA is rbp-based) and of the
 * stack memory the walk reads: each frame's return-address slot and the saved
 * rbp values that a later rbp-based frame used. The walk (stack_walk.c) notes
 * those slots and their values; a later call with the same registers whose
 * slots still hold the same values unwinds to the same frames, so we reuse
 * them (and their interned id) after one compare per slot. Stacks with a
 * frame the walk leaves to libunwind (signal frames, realigned stacks) are
 * unwound by unw_backtrace and not cached. x86-64 only.
 *
 * The caller's registers come from our own frame-pointer chain (libtlm is
 * built with frame pointers): the first return address outside libtlm is the
 * caller's rip, that frame's base + 16 its rsp, the saved rbp its rbp.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "recording/config.h"
#include "recording/log.h"
#include "recording/stack/stack_int.h"
#include "recording/stack/unwind_dl.h"
#include "recording/writer/writer.h"

static _Atomic uint64_t verify_hits, verify_bad, verify_walks, verify_walk_bad;
static _Atomic uint64_t n_hit, n_miss, n_slow; /* TLM_DEBUG_STACK_STATS */

/* set with the configuration, before any thread records (a thread's first
 * event must not race another's on it) */
static int verify;
static bool stats;

void tlm__stack_init(void)
{
	tlm__stack_self_init();
	bool unw = tlm__unw_load(); /* and its per-thread caching policy */
	/* the report says why OWNERS cannot tell who allocated (report.md) */
	tlm__writer_prop("stacks.native", !tlm__cfg.stack_depth ? "off: TLM_STACK_DEPTH=0" : unw ? "on" : tlm__unw_why);
	verify = tlm__cfg.verify_stacks;
	stats = tlm__cfg.stack_stats;
}

static inline void count(_Atomic uint64_t *n)
{
	if (TLM_UNLIKELY(stats))
		atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
}

/* no cached unwind, no last walk to take frames over from */
static void forget_walks(struct tlm__stk_cache *c)
{
	for (unsigned i = 0; i < TLM__SC_SETS; i++) /* a read leaves an untouched page unmapped */
		for (unsigned w = 0; w < TLM__SC_WAYS; w++)
			if (c->sc_set[i].tag[w])
				c->sc_set[i].tag[w] = 0;
	for (unsigned i = 0; i < TLM__SC_ENTRIES; i++)
		if (c->sc[i].depth)
			c->sc[i].depth = 0;
	c->last.e = NULL;
}

void tlm__stack_thread_init(struct tlm__stk_cache *c)
{
	c->stack_lo = c->stack_hi = 0;
	c->gen++;
	forget_walks(c);
#if defined(__x86_64__)
	pthread_attr_t a;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		void *addr;
		size_t size;
		if (pthread_attr_getstack(&a, &addr, &size) == 0) {
			c->stack_lo = (uint64_t)(uintptr_t)addr;
			c->stack_hi = c->stack_lo + size;
		}
		pthread_attr_destroy(&a);
	}
#endif
}

#if defined(__x86_64__)

/* The hooked call's caller: walk our own frame-pointer chain. A frame whose
 * return address is in libtlm was called by libtlm code, which keeps frame
 * pointers, so its saved rbp is the base of another of our frames: every
 * frame read here is ours, and a step is two loads and one range compare
 * (the caller's frame base is checked against the stack bounds once). */
static __attribute__((noinline)) bool caller_regs(const struct tlm__stk_cache *c, uint64_t *ip, uint64_t *cfa,
						   uint64_t *rbp)
{
	const uint64_t *fp = __builtin_frame_address(0);
	const uint64_t lo = tlm__self.lo, len = tlm__self.len;
	for (int i = 0; i < 16; i++) {
		uint64_t ret = fp[1];
		const uint64_t *next = (const uint64_t *)(uintptr_t)fp[0];
		if (ret - lo >= len && !(tlm__self.n > 1 && tlm__in_code_rest(&tlm__self, ret))) {
			uint64_t f = (uint64_t)(uintptr_t)fp;
			if (f < c->stack_lo || f + 16 > c->stack_hi)
				return false;
			*ip = ret;
			*cfa = f + 16;
			*rbp = (uint64_t)(uintptr_t)next;
			return true;
		}
		if (TLM_UNLIKELY(next <= fp))
			return false;
		fp = next;
	}
	return false;
}

/* A lookup reads the slots' steps (2 bytes a slot) and a hash per 8 slots,
 * not each slot's address and value (16 bytes a slot, about 18 lines for a
 * 36-frame stack, each a miss after the host's own work between two events).
 * A chunk's hash is sum of v_j * K^e_j mod 2^64 with K odd: every coefficient
 * is odd, so a difference in any one slot always changes it, and one in two
 * slots changes it unless the two differences stand in the one ratio (of
 * 2^64) that cancels. Stacks that share the caller's registers differ in
 * some slot: the chunk that holds it ends the lookup, as the slot itself did
 * when values were compared. */
#define TLM__SC_K 0x9e3779b97f4a7c15ull
static inline uint64_t chunk_hash(const uint64_t v[8])
{
	uint64_t a = v[0] * TLM__SC_K + v[1], b = v[2] * TLM__SC_K + v[3], c = v[4] * TLM__SC_K + v[5],
		 d = v[6] * TLM__SC_K + v[7];
	const uint64_t k2 = TLM__SC_K * TLM__SC_K;
	return ((a * k2 + b) * k2 + c) * k2 + d;
}

/* Do the slots hold what the walk read? Reading is safe: with the same
 * caller registers the addresses are the walk's own, inside this thread's
 * stack, whose pages stay mapped. */
static bool chunks_match(const struct tlm__sc_entry *e)
{
	const uint32_t n = e->nslot;
	uint64_t a = e->cfa0;
	uint32_t i = 0;
#define TLM__AT(j) (a += (uint64_t)(int64_t)k->step[j] * 8, *(const volatile uint64_t *)(uintptr_t)a)
	for (; i + 8 <= n; i += 8) { /* whole chunks, unrolled */
		const struct tlm__sc_chunk *k = &e->chunk[i / 8];
		uint64_t v[8];
		v[0] = TLM__AT(0);
		v[1] = TLM__AT(1);
		v[2] = TLM__AT(2);
		v[3] = TLM__AT(3);
		v[4] = TLM__AT(4);
		v[5] = TLM__AT(5);
		v[6] = TLM__AT(6);
		v[7] = TLM__AT(7);
		if (chunk_hash(v) != k->hash)
			return false;
	}
	if (i < n) {
		const struct tlm__sc_chunk *k = &e->chunk[i / 8];
		uint64_t v[8] = {0};
		for (uint32_t j = 0; j < n - i; j++)
			v[j] = TLM__AT(j);
		if (chunk_hash(v) != k->hash)
			return false;
	}
#undef TLM__AT
	return true;
}

/* The same, from the walk's own record, value by value: an entry's first
 * lookup, before it is packed. Four slots a test: one branch where four
 * would be. Reading up to three slots past a difference is safe (above). */
static bool slots_match(const struct tlm__sc_entry *e)
{
	const uint32_t n = e->nslot;
	uint32_t i = 0;
#define TLM__SLOT_DIFF(k) (*(const volatile uint64_t *)(uintptr_t)e->slot_addr[k] ^ e->slot_val[k])
	for (; i + 4 <= n; i += 4)
		if (TLM__SLOT_DIFF(i) | TLM__SLOT_DIFF(i + 1) | TLM__SLOT_DIFF(i + 2) | TLM__SLOT_DIFF(i + 3))
			return false;
	for (; i < n; i++)
		if (TLM__SLOT_DIFF(i))
			return false;
#undef TLM__SLOT_DIFF
	return true;
}

/* The walk's slots as chunks, made when the entry is first hit: a stack met
 * once (most, where stacks vary) or only told apart from others never pays
 * for them. False when a slot is too far from the last to pack (a frame of
 * over 256 KiB): the entry then stays unpacked. */
static bool pack(struct tlm__sc_entry *e)
{
	uint64_t a = e->cfa0;
	for (uint32_t i = 0; i < e->nslot; i += 8) {
		struct tlm__sc_chunk *k = &e->chunk[i / 8];
		uint64_t v[8] = {0};
		uint32_t m = e->nslot - i < 8 ? e->nslot - i : 8;
		for (uint32_t j = 0; j < m; j++) {
			uint64_t d = e->slot_addr[i + j] - a;
			if ((d & 7) || d + (0x8000ull << 3) >= (0x10000ull << 3))
				return false;
			k->step[j] = (int16_t)((int64_t)d >> 3);
			a = e->slot_addr[i + j];
			v[j] = e->slot_val[i + j];
		}
		k->hash = chunk_hash(v);
	}
	return true;
}

/* TLM_DEBUG_STACK_VERIFY: a stack we computed against libunwind's own */
static void check_against_libunwind(const uint64_t *ips, uint32_t d, uint32_t max, _Atomic uint64_t *n,
				    _Atomic uint64_t *bad)
{
	uint64_t ref[TLM_MAX_STACK_DEPTH];
	uint32_t rd = tlm__stack_capture(ref, max);
	atomic_fetch_add(n, 1);
	if (rd != d || memcmp(ref, ips, d * 8))
		atomic_fetch_add(bad, 1);
}

uint32_t tlm__stack_get(struct tlm__stk_cache *c, uint64_t *ips, uint32_t max, uint32_t *depth, bool *fresh)
{
	uint64_t ip0, cfa0, rbp0;
	if (!c->stack_hi || !caller_regs(c, &ip0, &cfa0, &rbp0)) {
		*depth = tlm__stack_capture(ips, max);
		return *depth ? tlm__stack_intern(c, ips, *depth, fresh) : 0;
	}
	if (TLM_UNLIKELY(atomic_load_explicit(&tlm__interp_cut, memory_order_acquire) != c->cut)) {
		forget_walks(c); /* walks end at the interpreter from now on: none kept went so */
		c->cut = !c->cut;
	}
	/* the set from the hash's top bits, the tag the whole of it (0: an empty way) */
	const uint64_t h = (ip0 ^ (cfa0 >> 4)) * TLM__SC_K, tag = h | 1;
	const uint32_t si = (uint32_t)(h >> (64 - __builtin_ctz(TLM__SC_SETS)));
	struct tlm__sc_set *set = &c->sc_set[si];
	struct tlm__sc_entry *ways = &c->sc[si * TLM__SC_WAYS], *e = NULL;
	uint32_t now = ++c->tick, w, old = 0;
	/* the allocator's caller is one ip at a few stack positions: several
	 * stacks share a tag, and their slots' values tell them apart */
	for (w = 0; w < TLM__SC_WAYS; w++) {
		if (set->tag[w] == tag) {
			struct tlm__sc_entry *x = &ways[w];
			if (x->ip0 == ip0 && x->cfa0 == cfa0 && (!x->need_rbp0 || x->rbp0 == rbp0) &&
			    (x->packed ? chunks_match(x) : slots_match(x))) {
				e = x;
				break;
			}
		}
		/* the way unused longest, not the last walk's (the next walk may take it over) */
		if (&ways[w] != c->last.e && (&ways[old] == c->last.e || now - set->used[w] > now - set->used[old]))
			old = w;
	}
	if (e) {
		set->used[w] = now;
		if (TLM_UNLIKELY(!e->packed))
			e->packed = pack(e);
		count(&n_hit);
		*depth = e->depth;
		if (TLM_UNLIKELY(verify > 0))
			check_against_libunwind(e->ip, e->depth, max, &verify_hits, &verify_bad);
		if (e->gen == c->gen) {
			*fresh = false;
			return e->local_id;
		}
		memcpy(ips, e->ip, e->depth * 8);
		e->local_id = tlm__stack_intern(c, ips, e->depth, fresh);
		e->gen = c->gen;
		return e->local_id;
	}
	count(&n_miss);
	e = &ways[old];
	set->tag[old] = 0;
	set->used[old] = now;
	e->ip0 = ip0;
	e->cfa0 = cfa0;
	e->rbp0 = rbp0;
	e->depth = 0;
	bool ok;
	uint32_t d = tlm__stack_walk(c, e, ips, max, &ok);
	if (!ok) {
		count(&n_slow); /* a frame we leave to libunwind: not cached */
		d = tlm__stack_capture(ips, max);
	} else if (TLM_UNLIKELY(verify > 0))
		check_against_libunwind(ips, d, max, &verify_walks, &verify_walk_bad);
	*depth = d;
	if (!d)
		return 0;
	uint32_t id = tlm__stack_intern(c, ips, d, fresh);
	if (ok && d <= TLM__SC_DEPTH) {
		memcpy(e->ip, ips, d * 8);
		e->depth = d; /* the last walk's frames stay for a later walk to take over */
		e->local_id = id;
		e->gen = c->gen;
		e->packed = false;
		set->tag[old] = tag;
	} else
		c->last.e = NULL; /* the walk's frames are not kept: nothing to take over */
	return id;
}

#else

uint32_t tlm__stack_get(struct tlm__stk_cache *c, uint64_t *ips, uint32_t max, uint32_t *depth, bool *fresh)
{
	*depth = tlm__stack_capture(ips, max);
	return *depth ? tlm__stack_intern(c, ips, *depth, fresh) : 0;
}

#endif

void tlm__stack_report(void)
{
	if (stats)
		tlm__log("stack cache: %llu hits, %llu misses (%llu of them unwound by libunwind), %u frame rules",
			 (unsigned long long)atomic_load(&n_hit), (unsigned long long)atomic_load(&n_miss),
			 (unsigned long long)atomic_load(&n_slow), tlm__stack_rules());
	if (verify > 0)
		tlm__log("stack cache verification: %llu cached stacks checked, %llu differed; %llu walked stacks checked, "
			 "%llu differed",
			 (unsigned long long)atomic_load(&verify_hits), (unsigned long long)atomic_load(&verify_bad),
			 (unsigned long long)atomic_load(&verify_walks), (unsigned long long)atomic_load(&verify_walk_bad));
}
