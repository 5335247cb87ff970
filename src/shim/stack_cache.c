/* SPDX-License-Identifier: MIT */
/*
 * stack_cache.c - skip the unwind when the call path is one seen before.
 *
 * The unwind from the hooked call's caller is a function of three registers
 * (rip, rsp, rbp at the call) and of the stack memory the unwinder reads: each
 * frame's return-address slot and, where a frame saved it, the caller's rbp.
 * On a full unwind we note those slots and their values; a later call with
 * the same three registers whose slots still hold the same values unwinds to
 * the same frames, so we reuse them (and their interned id) after one compare
 * per slot. Frames whose registers do not come from memory (signal frames,
 * registers saved in registers) make a stack uncacheable. x86-64 only.
 *
 * The caller's registers come from our own frame-pointer chain (libtlm is
 * built with frame pointers): the first return address outside libtlm is the
 * caller's rip, that frame's base + 16 its rsp, the saved rbp its rbp.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "shim/stack.h"

static _Atomic uint64_t verify_hits, verify_bad;

/* An unwind that misses libunwind's caches walks the loaded objects with
 * dl_iterate_phdr, under glibc's loader lock; a fork at that moment would
 * leave the lock held in the child. fork waits for running unwinds to end
 * (tlm__stack_atfork_prepare) and holds new ones back until it is done. */
static _Atomic int unwinding, forking;

static void unwind_enter(void)
{
	for (;;) {
		atomic_fetch_add(&unwinding, 1);
		if (TLM_LIKELY(!atomic_load(&forking)))
			return;
		atomic_fetch_sub(&unwinding, 1);
		while (atomic_load(&forking))
			sched_yield();
	}
}

static void unwind_leave(void)
{
	atomic_fetch_sub(&unwinding, 1);
}

void tlm__stack_atfork_prepare(void)
{
	atomic_store(&forking, 1);
	/* unwinds take microseconds; the bound only guards against a fork from
	 * a signal handler that interrupted an unwind on this very thread */
	uint64_t until = tlm__now_ns() + 2000000000ull;
	while (atomic_load(&unwinding) && tlm__now_ns() < until)
		sched_yield();
}

void tlm__stack_atfork_done(void)
{
	atomic_store(&forking, 0);
}

/* libunwind's whole unwind, between the fork guards */
static uint32_t guarded_capture(uint64_t *ips, uint32_t max)
{
	unwind_enter();
	uint32_t d = tlm__stack_capture(ips, max);
	unwind_leave();
	return d;
}
static int verify = -1;

void tlm__stack_thread_init(struct tlm__stk_cache *c)
{
	c->stack_lo = c->stack_hi = 0;
	c->gen++;
	memset(c->sc, 0, sizeof c->sc[0] * 0); /* entries are checked against gen */
	for (unsigned i = 0; i < TLM__SC_ENTRIES; i++)
		c->sc[i].depth = 0;
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

void tlm__stack_forget_all(struct tlm__stk_cache *c)
{
	memset(c->b, 0, sizeof c->b);
	c->arena_used = 0;
	c->next_id = 1;
	c->gen++;
}

#if defined(__x86_64__)

/* The hooked call's caller: walk our own frame-pointer chain. */
static __attribute__((noinline)) bool caller_regs(const struct tlm__stk_cache *c, uint64_t *ip, uint64_t *cfa,
						   uint64_t *rbp)
{
	const uint64_t *fp = __builtin_frame_address(0);
	for (int i = 0; i < 16; i++) {
		uint64_t f = (uint64_t)(uintptr_t)fp;
		if (f < c->stack_lo || f + 16 > c->stack_hi || (f & 7))
			return false;
		uint64_t ret = fp[1];
		if (!tlm__in_self(ret)) {
			*ip = ret;
			*cfa = f + 16;
			*rbp = fp[0];
			return true;
		}
		const uint64_t *next = (const uint64_t *)(uintptr_t)fp[0];
		if (next <= fp)
			return false;
		fp = next;
	}
	return false;
}

static bool slots_match(const struct tlm__sc_entry *e)
{
	for (uint32_t i = 0; i < e->nslot; i++)
		if (*(const volatile uint64_t *)(uintptr_t)e->slot_addr[i] != e->slot_val[i])
			return false;
	return true;
}

static bool add_slot(struct tlm__sc_entry *e, const struct tlm__stk_cache *c, unw_cursor_t *cur, int reg)
{
	unw_save_loc_t loc;
	if (unw_get_save_loc(cur, reg, &loc) != 0)
		return false;
	if (loc.type == UNW_SLT_NONE && reg == UNW_X86_64_RBP)
		return true; /* passed through unchanged from the inner frame */
	if (loc.type != UNW_SLT_MEMORY || e->nslot >= TLM__SC_SLOTS)
		return false;
	uint64_t a = loc.u.addr;
	if (a < e->cfa0 || a + 8 > c->stack_hi || (a & 7))
		return false;
	e->slot_addr[e->nslot] = a;
	e->slot_val[e->nslot] = *(const uint64_t *)(uintptr_t)a;
	e->nslot++;
	return true;
}

/* Full unwind from the caller's frame, noting the slots; returns depth and
 * whether the result may be cached. */
static uint32_t unwind_noting(struct tlm__stk_cache *c, struct tlm__sc_entry *e, uint64_t *ips, uint32_t max,
			      bool *cacheable)
{
	unw_context_t uc;
	unw_cursor_t cur;
	*cacheable = max <= TLM__SC_DEPTH;
	e->nslot = 0;
	if (unw_getcontext(&uc) != 0 || unw_init_local(&cur, &uc) != 0) {
		*cacheable = false;
		return 0;
	}
	/* step over our own frames to the caller's */
	unw_word_t ip = 0, sp = 0;
	for (int i = 0; i < 16; i++) {
		unw_get_reg(&cur, UNW_REG_IP, &ip);
		if (!tlm__in_self(ip))
			break;
		if (unw_step(&cur) <= 0)
			return 0;
	}
	unw_get_reg(&cur, UNW_REG_SP, &sp);
	if (ip != e->ip0 || sp != e->cfa0)
		*cacheable = false; /* our view of the caller disagrees: do not trust it */
	uint32_t n = 0;
	for (;;) {
		unw_get_reg(&cur, UNW_REG_IP, &ip);
		ips[n++] = ip;
		if (n >= max)
			break;
		if (unw_step(&cur) <= 0)
			break;
		if (*cacheable && (unw_is_signal_frame(&cur) > 0 || !add_slot(e, c, &cur, UNW_X86_64_RIP) ||
				   !add_slot(e, c, &cur, UNW_X86_64_RBP)))
			*cacheable = false;
	}
	return n;
}

uint32_t tlm__stack_get(struct tlm__stk_cache *c, uint64_t *ips, uint32_t max, uint32_t *depth, bool *fresh)
{
	uint64_t ip0, cfa0, rbp0;
	if (TLM_UNLIKELY(verify < 0))
		verify = tlm__cfg.verify_stacks;
	if (!c->stack_hi || !caller_regs(c, &ip0, &cfa0, &rbp0)) {
		*depth = guarded_capture(ips, max);
		return *depth ? tlm__stack_intern(c, ips, *depth, fresh) : 0;
	}
	uint64_t h = (ip0 ^ (cfa0 >> 4) ^ (rbp0 << 7)) * 0x9e3779b97f4a7c15ull;
	struct tlm__sc_entry *e = &c->sc[h >> 59 & (TLM__SC_ENTRIES - 1)];
	if (e->depth && e->ip0 == ip0 && e->cfa0 == cfa0 && e->rbp0 == rbp0 && slots_match(e)) {
		c->hits++;
		*depth = e->depth;
		if (TLM_UNLIKELY(verify > 0)) {
			uint32_t d = guarded_capture(ips, max);
			atomic_fetch_add(&verify_hits, 1);
			if (d != e->depth || memcmp(ips, e->ip, d * 8))
				atomic_fetch_add(&verify_bad, 1);
		}
		if (e->gen == c->gen) {
			*fresh = false;
			return e->local_id;
		}
		memcpy(ips, e->ip, e->depth * 8);
		e->local_id = tlm__stack_intern(c, ips, e->depth, fresh);
		e->gen = c->gen;
		return e->local_id;
	}
	c->misses++;
	e->ip0 = ip0;
	e->cfa0 = cfa0;
	e->rbp0 = rbp0;
	bool cacheable;
	unwind_enter();
	uint32_t d = unwind_noting(c, e, ips, max, &cacheable);
	unwind_leave();
	*depth = d;
	e->depth = 0;
	if (!d)
		return 0;
	uint32_t id = tlm__stack_intern(c, ips, d, fresh);
	if (cacheable) {
		memcpy(e->ip, ips, d * 8);
		e->depth = d;
		e->local_id = id;
		e->gen = c->gen;
	}
	return id;
}

#else

uint32_t tlm__stack_get(struct tlm__stk_cache *c, uint64_t *ips, uint32_t max, uint32_t *depth, bool *fresh)
{
	*depth = guarded_capture(ips, max);
	return *depth ? tlm__stack_intern(c, ips, *depth, fresh) : 0;
}

#endif

void tlm__stack_report(void)
{
	if (verify > 0)
		tlm__log("stack cache verification: %llu cached stacks checked, %llu differed",
			 (unsigned long long)atomic_load(&verify_hits), (unsigned long long)atomic_load(&verify_bad));
}
