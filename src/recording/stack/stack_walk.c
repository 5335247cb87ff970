/* SPDX-License-Identifier: MIT */
/*
 * stack_walk.c - an x86-64 unwind that costs about what unw_backtrace costs.
 *
 * Why: libunwind 1.6's unw_step (as Debian and most distributions build it,
 * without --enable-per-thread-cache) takes its global register-state cache
 * lock at every step, and the lock masks all signals: two rt_sigprocmask
 * system calls per frame, about 14 us for 36 frames, 50 times unw_backtrace
 * (whose own per-thread frame cache skips unw_step). But the slot-noting
 * unwind cache (stack_cache.c) needs to know which memory each step read,
 * which unw_backtrace does not say.
 *
 * So we keep our own cache of how to step out of a frame, per return address
 * (a global, insert-only table): the CFA is rsp+k or rbp+k, the return
 * address is at CFA-8, rbp is either unchanged or reloaded from CFA+m; or the
 * frame ends the chain. A rule is learned once per address, by letting
 * libunwind take one step from three made-up register sets over a scratch
 * area (rsp and rbp moved independently, the other registers changed too):
 * what it computes tells the rule exactly, or that the frame is something
 * else (signal frame, realigned stack, CFA expression), which we leave to
 * libunwind. After that a walk is a table probe and two loads per frame,
 * with every read checked against the thread's stack bounds. And a walk that
 * reaches, within its first frames, a frame of the thread's previous walk
 * (same ip, sp, rbp) whose later slots still hold what that walk read takes
 * the rest from it: a free leaves its alloc's stack only in the innermost
 * frames.
 */
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>

#include "recording/log.h"
#include "recording/stack/stack_int.h"
#include "recording/stack/unwind_dl.h"

#if defined(__x86_64__)

/* rule: bits 0-1 kind, 2-31 CFA offset (signed), 32 rbp reloaded, 33-62 its
 * offset from the CFA (signed). 0 = being learned, BAD = leave to libunwind. */
enum { R_RSP = 1, R_RBP = 2, R_END = 3 };
#define R_BAD (1ull << 63)
#define RULES 16384u /* power of two; distinct return addresses of a process */

static struct {
	_Atomic uint64_t ip;
	_Atomic uint64_t rule;
} rules[RULES];
static _Atomic uint32_t rules_n;

static uint64_t make_rule(int kind, int64_t off, bool rbp_saved, int64_t roff)
{
	return (uint64_t)kind | ((uint64_t)off & 0x3fffffffull) << 2 | (uint64_t)rbp_saved << 32 |
	       ((uint64_t)roff & 0x3fffffffull) << 33;
}

static int64_t sext30(uint64_t v)
{
	return (int64_t)(v << 34) >> 34;
}

/* One made-up step: registers in, CFA and the slots libunwind used out. */
struct probe_out {
	int ret;
	uint64_t cfa, rip_loc, rbp_loc, rbp_after;
	bool rbp_mem;
};

static bool probe_step(uint64_t ip, uint64_t rsp, uint64_t rbp, uint64_t other, struct probe_out *o)
{
	unw_context_t uc;
	unw_cursor_t cur;
	if (tlm__unw.getcontext(&uc) != 0)
		return false;
	greg_t *g = uc.uc_mcontext.gregs;
	static const int others[] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI, REG_R8,  REG_R9,
				     REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
	for (unsigned i = 0; i < sizeof others / sizeof others[0]; i++)
		g[others[i]] = (greg_t)(other + 8 * i);
	g[REG_RIP] = (greg_t)ip;
	g[REG_RSP] = (greg_t)rsp;
	g[REG_RBP] = (greg_t)rbp;
	if (tlm__unw.init_local(&cur, &uc) != 0)
		return false;
	o->ret = tlm__unw.step(&cur);
	if (o->ret < 0)
		return false;
	unw_word_t v;
	tlm__unw.get_reg(&cur, UNW_REG_SP, &v);
	o->cfa = v;
	tlm__unw.get_reg(&cur, UNW_X86_64_RBP, &v);
	o->rbp_after = v;
	unw_save_loc_t l;
	o->rip_loc = tlm__unw.get_save_loc(&cur, UNW_X86_64_RIP, &l) == 0 && l.type == UNW_SLT_MEMORY ? l.u.addr : 0;
	o->rbp_mem = false;
	o->rbp_loc = 0;
	if (tlm__unw.get_save_loc(&cur, UNW_X86_64_RBP, &l) == 0 && l.type == UNW_SLT_MEMORY) {
		uint64_t a = l.u.addr, lo = (uint64_t)(uintptr_t)&uc, hi = lo + sizeof uc;
		if (a < lo || a >= hi) { /* inside the context: the register passed through */
			o->rbp_mem = true;
			o->rbp_loc = a;
		}
	}
	return true;
}

static uint64_t learn(struct tlm__stk_cache *c, uint64_t ip)
{
	if (!tlm__unw.step)
		return R_BAD; /* libunwind could not be opened (unwind_dl.c) */
	uint64_t *s = c->scratch;
	for (unsigned i = 0; i < TLM__SCRATCH; i++)
		s[i] = ip; /* every return address read is a plausible one */
	uint64_t lo = (uint64_t)(uintptr_t)s, hi = lo + sizeof c->scratch;
	uint64_t S = lo + 1024, B = lo + 8192, D = 512;
	struct probe_out o[3];
	if (!probe_step(ip, S, B, lo + 4096, &o[0]) || !probe_step(ip, S, B + D, lo + 4096 + D, &o[1]) ||
	    !probe_step(ip, S + D, B, lo + 4096 + 2 * D, &o[2]))
		return R_BAD;
	if (o[0].ret == 0 && o[1].ret == 0 && o[2].ret == 0) {
		/* the chain ends here, unless a read outside the scratch gave the 0 */
		for (int k = 0; k < 3; k++)
			if (o[k].rip_loc && (o[k].rip_loc < lo || o[k].rip_loc >= hi))
				return R_BAD;
		return make_rule(R_END, 0, false, 0);
	}
	if (o[0].ret == 0 || o[1].ret == 0 || o[2].ret == 0)
		return R_BAD;
	int kind;
	int64_t off;
	if (o[1].cfa == o[0].cfa && o[2].cfa == o[0].cfa + D) {
		kind = R_RSP;
		off = (int64_t)(o[0].cfa - S);
	} else if (o[1].cfa == o[0].cfa + D && o[2].cfa == o[0].cfa) {
		kind = R_RBP;
		off = (int64_t)(o[0].cfa - B);
	} else
		return R_BAD;
	if (off <= 0 || off >= (1 << 28))
		return R_BAD;
	int64_t roff = 0;
	for (int k = 0; k < 3; k++) {
		if (o[k].cfa >= hi || o[k].rip_loc != o[k].cfa - 8)
			return R_BAD;
		if (o[k].rbp_mem != o[0].rbp_mem)
			return R_BAD;
		if (o[k].rbp_mem) {
			int64_t r = (int64_t)(o[k].rbp_loc - o[k].cfa);
			if ((k && r != roff) || o[k].rbp_loc < lo || o[k].rbp_loc + 8 > hi)
				return R_BAD;
			roff = r;
		}
	}
	if (!o[0].rbp_mem && (o[0].rbp_after != B || o[1].rbp_after != B + D || o[2].rbp_after != B))
		return R_BAD; /* rbp came from somewhere we do not model */
	if (roff <= -(1 << 28) || roff >= (1 << 28))
		return R_BAD;
	return make_rule(kind, off, o[0].rbp_mem, roff);
}

/* Unwinds through libunwind (a probe) may take the loader lock: fork guards. */
static uint64_t rule_for(struct tlm__stk_cache *c, uint64_t ip)
{
	uint32_t h = (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> 50) & (RULES - 1);
	for (uint32_t p = 0; p < 32; p++) {
		uint32_t j = (h + p) & (RULES - 1);
		uint64_t k = atomic_load_explicit(&rules[j].ip, memory_order_acquire);
		if (k == ip) {
			uint64_t r = atomic_load_explicit(&rules[j].rule, memory_order_acquire);
			if (TLM_LIKELY(r != 0))
				return r;
			tlm__stack_unwind_enter(); /* another thread is learning it: learn too, keep theirs */
			r = learn(c, ip);
			tlm__stack_unwind_leave();
			return r;
		}
		if (k == 0) {
			uint64_t zero = 0;
			bool mine = atomic_compare_exchange_strong_explicit(&rules[j].ip, &zero, ip, memory_order_acq_rel,
									   memory_order_acquire);
			if (!mine && zero != ip)
				continue;
			tlm__stack_unwind_enter();
			uint64_t r = learn(c, ip);
			tlm__stack_unwind_leave();
			if (mine) {
				atomic_store_explicit(&rules[j].rule, r, memory_order_release);
				atomic_fetch_add_explicit(&rules_n, 1, memory_order_relaxed);
			}
			return r;
		}
	}
	tlm__log_once(rules_full, "more than %u distinct return addresses: further ones are unwound by libunwind", RULES);
	return R_BAD;
}

static inline bool in_stack(const struct tlm__stk_cache *c, uint64_t a)
{
	return a >= c->stack_lo && a + 8 <= c->stack_hi && !(a & 7);
}

/* a free's stack leaves its alloc's within a few frames */
#define TAKE_FRAMES 4u

/* The last walk p's frames from its frame j on are this walk's too when we
 * stand at the same frame (same ip, sp and rbp) and every slot p read from
 * there on still holds what it read: the rest of a walk is a function of
 * exactly those (stack_cache.c's argument, for a suffix). Copies its frames
 * into ips from index i and its slots into e; returns the new depth, 0 when
 * they cannot be taken. */
static uint32_t take_suffix(const struct tlm__walk_rec *p, uint32_t j, struct tlm__sc_entry *e, uint64_t *ips,
			    uint32_t i, uint32_t max)
{
	const struct tlm__sc_entry *pe = p->e;
	uint32_t k = p->depth - j;
	if (i + k > max)
		k = max - i; /* both walks stop at max */
	else if (!p->natural)
		return 0; /* p stopped at the limit before its chain ended */
	uint32_t s0 = p->slot0[j], ns = pe->nslot - s0;
	if (e->nslot + ns > TLM__SC_SLOTS)
		return 0;
	for (uint32_t t = s0; t < pe->nslot; t++)
		if (*(const volatile uint64_t *)(uintptr_t)pe->slot_addr[t] != pe->slot_val[t])
			return 0;
	memcpy(e->slot_addr + e->nslot, pe->slot_addr + s0, ns * 8);
	memcpy(e->slot_val + e->nslot, pe->slot_val + s0, ns * 8);
	e->nslot += ns;
	memcpy(ips + i, pe->ip + j, k * 8);
	return i + k;
}

/* The walk's registers between its two loops. rb_addr: where rbp came from
 * (rbp being the value read there); 0 the caller's own register, RB_NOTED
 * once that slot is among e's. */
struct walk_regs {
	uint64_t ip, sp, rbp, rb_addr;
};
#define RB_NOTED 1u /* no slot's address: slots are 8-aligned */

/* The middle frames (from TAKE_FRAMES to lim - 1), in a function of their
 * own with as little state as the step needs, so that more of it stays in
 * registers (callgrind, bench_vary: about 84 instructions a frame, where
 * the walk's own loop took about 103): no suffix to look for, the last walk's record
 * written in place, the usual frame's checks only. A frame that is not the
 * usual one (its rule not in this thread's copy, the chain's end, a bad
 * rule, the interpreter's frame, the caller's own rbp used, a slot out of
 * bounds) is left untouched for the walk's own loop. Each frame notes at
 * most two slots, so a walk of n frames holds at most 2n: with lim at most
 * TLM__SC_DEPTH, the slots never overflow (checked once on entry). Returns
 * the depth; *end when the chain ended at a zero return address. */
static __attribute__((noinline)) uint32_t walk_middle(struct tlm__stk_cache *restrict c,
						      struct tlm__sc_entry *restrict e, uint64_t *restrict ips,
						      uint32_t n, uint32_t lim, struct walk_regs *g, bool *end)
{
	uint64_t ip = g->ip, sp = g->sp, rbp = g->rbp, rb_addr = g->rb_addr;
	uint32_t ns = e->nslot;
	if (lim > TLM__SC_DEPTH || ns > 2 * n)
		return n;
	struct tlm__walk_rec *restrict w = &c->last;
	/* in_stack(a) as a - lo <= span and 8-aligned, the bounds in registers:
	 * in_stack's own form, its bounds read at each frame, costs about 80
	 * more instructions per event (icount varying) */
	const uint64_t lo = c->stack_lo, span = c->stack_hi - 8 - lo;
	for (; n + 1 < lim; n++) {
		const uint32_t k = (uint32_t)(ip ^ ip >> 9) & (TLM__RC - 1);
		if (TLM_UNLIKELY(c->rc_ip[k] != ip))
			break;
		const uint64_t r = c->rc_rule[k], kind = r & (R_BAD | 3);
		uint64_t base = sp;
		if (kind == R_RBP) {
			if (TLM_UNLIKELY(!rb_addr))
				break;
			base = rbp;
		} else if (TLM_UNLIKELY(kind != R_RSP))
			break;
		if (TLM_UNLIKELY(c->cut) && tlm__in_code(&tlm__interp, ip))
			break;
		const uint64_t cfa = base + (uint64_t)sext30(r >> 2), ra = cfa - 8;
		const uint64_t a = cfa + (uint64_t)sext30(r >> 33);
		if (TLM_UNLIKELY(cfa <= sp || ra - lo > span || (ra & 7) ||
				 ((r >> 32 & 1) && (a - lo > span || (a & 7)))))
			break;
		if (kind == R_RBP && rb_addr != RB_NOTED) { /* the walk now depends on where rbp came from */
			e->slot_addr[ns] = rb_addr;
			e->slot_val[ns++] = rbp;
			rb_addr = RB_NOTED;
		}
		w->sp[n] = sp;
		w->rbp[n] = rbp;
		w->slot0[n] = ns;
		ips[n] = ip;
		ip = *(const uint64_t *)(uintptr_t)ra;
		e->slot_addr[ns] = ra;
		e->slot_val[ns++] = ip;
		if (r >> 32 & 1) {
			rbp = *(const uint64_t *)(uintptr_t)a;
			rb_addr = a;
		}
		sp = cfa;
		if (!ip) {
			*end = true;
			n++;
			break;
		}
	}
	e->nslot = ns;
	*g = (struct walk_regs){ip, sp, rbp, rb_addr};
	return n;
}

uint32_t tlm__stack_walk(struct tlm__stk_cache *c, struct tlm__sc_entry *e, uint64_t *ips, uint32_t max, bool *ok)
{
	uint64_t ip = e->ip0, sp = e->cfa0, rbp = e->rbp0;
	/* where the current rbp was read from (0: it is the caller's register) */
	uint64_t rb_addr = 0;
	bool rb_noted = false;
	const bool cut = c->cut;
	uint32_t n = 0;
	/* w is read as p while the first frames are walked, so those frames'
	 * records wait in locals (the later ones are never read as p) */
	struct tlm__walk_rec *w = &c->last;
	uint64_t fsp[TAKE_FRAMES], frbp[TAKE_FRAMES];
	uint32_t fs0[TAKE_FRAMES];
	uint32_t pd = w->e && w->e != e && w->e->depth == w->depth ? w->depth : 0, j = 0;
	e->nslot = 0;
	e->need_rbp0 = false;
	*ok = true;
	for (;;) {
		if (n >= TAKE_FRAMES) {
			struct walk_regs g = {ip, sp, rbp, rb_noted ? RB_NOTED : rb_addr};
			bool end = false;
			n = walk_middle(c, e, ips, n, max < TLM__SC_DEPTH ? max : TLM__SC_DEPTH, &g, &end);
			ip = g.ip;
			sp = g.sp;
			rbp = g.rbp;
			rb_noted = g.rb_addr == RB_NOTED;
			rb_addr = g.rb_addr;
			if (end) {
				w->natural = true;
				goto done;
			}
		}
		if (n < TAKE_FRAMES && j < pd) { /* p's frames are in rising sp order */
			while (j < pd && w->sp[j] < sp)
				j++;
			if (j < pd && w->sp[j] == sp && w->e->ip[j] == ip && w->rbp[j] == rbp) {
				/* the suffix may use our rbp: note where it came from */
				bool need0 = e->need_rbp0;
				uint32_t ns = e->nslot;
				if (!rb_addr)
					e->need_rbp0 = true;
				else if (!rb_noted && e->nslot < TLM__SC_SLOTS) {
					e->slot_addr[e->nslot] = rb_addr;
					e->slot_val[e->nslot++] = rbp;
				}
				uint32_t d = take_suffix(w, j, e, ips, n, max);
				if (d) {
					w->e = NULL; /* its frames are in p's record, not ours */
					return d;
				}
				e->need_rbp0 = need0;
				e->nslot = ns;
				pd = 0;
			}
		}
		if (n < TAKE_FRAMES) {
			fsp[n] = sp;
			frbp[n] = rbp;
			fs0[n] = e->nslot;
		} else if (TLM_LIKELY(n < TLM__SC_DEPTH)) {
			w->sp[n] = sp;
			w->rbp[n] = rbp;
			w->slot0[n] = e->nslot;
		}
		ips[n++] = ip;
		if (n >= max)
			break;
		if (cut && tlm__in_code(&tlm__interp, ip)) {
			w->natural = true; /* the interpreter's first frame ends it (stack.h) */
			goto done;
		}
		/* this thread's small direct-mapped copy first: the global table is
		 * larger than the L1 and its hash is a multiply on the chain */
		uint32_t k = (uint32_t)(ip ^ ip >> 9) & (TLM__RC - 1);
		uint64_t r;
		if (TLM_LIKELY(c->rc_ip[k] == ip))
			r = c->rc_rule[k];
		else {
			r = rule_for(c, ip);
			c->rc_ip[k] = ip;
			c->rc_rule[k] = r;
		}
		if (TLM_UNLIKELY(r & R_BAD))
			goto bad;
		int kind = (int)(r & 3);
		if (kind == R_END) {
			w->natural = true;
			goto done;
		}
		uint64_t cfa;
		if (kind == R_RBP) {
			/* the walk now depends on where rbp came from */
			if (!rb_addr)
				e->need_rbp0 = true;
			else if (!rb_noted) {
				if (e->nslot >= TLM__SC_SLOTS)
					goto bad;
				e->slot_addr[e->nslot] = rb_addr;
				e->slot_val[e->nslot++] = rbp;
				rb_noted = true;
			}
			cfa = rbp + (uint64_t)sext30(r >> 2);
		} else
			cfa = sp + (uint64_t)sext30(r >> 2);
		/* a suffix from this frame on starts at its return-address slot;
		 * where our rbp came from is for the taker to note */
		if (n <= TAKE_FRAMES)
			fs0[n - 1] = e->nslot;
		else if (TLM_LIKELY(n <= TLM__SC_DEPTH))
			w->slot0[n - 1] = e->nslot;
		uint64_t ra = cfa - 8;
		if (TLM_UNLIKELY(cfa <= sp || !in_stack(c, ra) || e->nslot >= TLM__SC_SLOTS))
			goto bad; /* off our stack (a switched stack?) or too deep to note */
		uint64_t nip = *(const uint64_t *)(uintptr_t)ra;
		e->slot_addr[e->nslot] = ra;
		e->slot_val[e->nslot++] = nip;
		if (r >> 32 & 1) {
			uint64_t a = cfa + (uint64_t)sext30(r >> 33);
			if (TLM_UNLIKELY(!in_stack(c, a)))
				goto bad;
			rbp = *(const uint64_t *)(uintptr_t)a;
			rb_addr = a;
			rb_noted = false;
		}
		sp = cfa;
		ip = nip;
		if (!ip) {
			w->natural = true;
			goto done; /* libunwind ends the chain at a zero return address */
		}
	}
	w->natural = false; /* stopped at max */
done:
	/* the next walk's p: valid while e keeps these frames (stack_get) */
	for (uint32_t t = 0; t < n && t < TAKE_FRAMES; t++) {
		w->sp[t] = fsp[t];
		w->rbp[t] = frbp[t];
		w->slot0[t] = fs0[t];
	}
	w->e = n <= TLM__SC_DEPTH ? e : NULL;
	w->depth = n;
	return n;
bad:
	*ok = false;
	w->e = NULL;
	return n;
}

uint32_t tlm__stack_rules(void)
{
	return atomic_load_explicit(&rules_n, memory_order_relaxed);
}

#else

uint32_t tlm__stack_rules(void)
{
	return 0;
}

#endif
