/* SPDX-License-Identifier: MIT */
/*
 * stack.c - libtlm's own code ranges, libunwind's whole unwind
 * (unwind_dl.c) and the per-thread intern table of stacks (stack_int.h).
 *
 * Training loops allocate from a handful of call paths over and over, so each
 * thread keeps a small cache from stack to id: a repeated stack costs a hash
 * and a compare, and its addresses go into the trace once.
 */
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "recording/config.h"

#include "recording/stack/stack_int.h"
#include "recording/stack/unwind_dl.h"

/* Executable ranges of one loaded object (the one containing an address):
 * libtlm's own (leading frames inside them are ours) and the Python
 * interpreter's (a native walk of a Python thread ends at its first frame
 * there). */
#define MAX_RANGES 4
struct ranges {
	uintptr_t lo[MAX_RANGES], hi[MAX_RANGES];
	int n;
	uintptr_t addr; /* in: an address inside the object */
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct ranges *r = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
		if (r->addr >= lo && r->addr < hi) {
			for (int j = 0; j < info->dlpi_phnum && r->n < MAX_RANGES; j++) {
				const ElfW(Phdr) *q = &info->dlpi_phdr[j];
				if (q->p_type == PT_LOAD && (q->p_flags & PF_X)) {
					r->lo[r->n] = info->dlpi_addr + q->p_vaddr;
					r->hi[r->n] = r->lo[r->n] + q->p_memsz;
					r->n++;
				}
			}
			return 1;
		}
	}
	return 0;
}

static bool in_ranges(const struct ranges *r, uint64_t ip)
{
	for (int i = 0; i < r->n; i++)
		if (ip >= r->lo[i] && ip < r->hi[i])
			return true;
	return false;
}

static struct ranges self;

void tlm__stack_self_init(void)
{
	if (self.n == 0) {
		self.addr = (uintptr_t)&tlm__stack_self_init;
		dl_iterate_phdr(find_object, &self);
		if (self.n > 0) {
			tlm__self_lo = self.lo[0];
			tlm__self_len = self.hi[0] - self.lo[0];
			tlm__self_more = self.n > 1;
		}
	}
}

/* the first executable range, for stack_cache.c's inline test (stack.h) */
uint64_t tlm__self_lo, tlm__self_len;
bool tlm__self_more;

bool tlm__in_self(uint64_t ip)
{
	return in_ranges(&self, ip);
}

/* Written once, before tlm__interp_cut is released; read after acquiring it. */
static struct ranges interp;
uint64_t tlm__interp_lo, tlm__interp_len;
bool tlm__interp_more;
_Atomic bool tlm__interp_cut;

void tlm__stack_interp_found(const void *sym)
{
	if (tlm__cfg.stack_past_python || !sym || atomic_load(&tlm__interp_cut) || interp.n)
		return;
	interp.addr = (uintptr_t)sym;
	dl_iterate_phdr(find_object, &interp);
	if (!interp.n)
		return;
	tlm__interp_lo = interp.lo[0];
	tlm__interp_len = interp.hi[0] - interp.lo[0];
	tlm__interp_more = interp.n > 1;
}

void tlm__stack_interp_on(void)
{
	if (interp.n)
		atomic_store_explicit(&tlm__interp_cut, true, memory_order_release);
}

bool tlm__in_interp(uint64_t ip)
{
	return in_ranges(&interp, ip);
}

uint32_t tlm__stack_capture(uint64_t *ips, uint32_t max)
{
	enum { SLACK = 12 }; /* room for our own frames, dropped below */
	void *buf[TLM_MAX_STACK_DEPTH + SLACK];
	int want = (int)max + SLACK;
	if (!tlm__unw.backtrace)
		return 0; /* no libunwind: no native stacks */
	tlm__stack_unwind_enter();
	int n = tlm__unw.backtrace(buf, want);
	tlm__stack_unwind_leave();
	int i = 0;
	while (i < n && tlm__in_self((uint64_t)(uintptr_t)buf[i]))
		i++;
	uint32_t d = 0;
	bool cut = atomic_load_explicit(&tlm__interp_cut, memory_order_acquire);
	for (; i < n && d < max; i++) {
		ips[d++] = (uint64_t)(uintptr_t)buf[i];
		if (cut && tlm__in_interp_fast(ips[d - 1]))
			break; /* as the walk ends (stack_walk.c) */
	}
	return d;
}

static inline uint64_t stack_hash(const uint64_t *ips, uint32_t depth)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ depth;
	for (uint32_t i = 0; i < depth; i++) {
		h ^= ips[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h | 1; /* never 0 */
}


uint32_t tlm__stack_intern(struct tlm__stk_cache *c, const uint64_t *ips, uint32_t depth, bool *fresh)
{
	enum { PROBES = 8 };
	uint64_t h = stack_hash(ips, depth);
	uint32_t mask = TLM__STK_BUCKETS - 1;
	struct tlm__stk_entry *empty = NULL;
	for (uint32_t p = 0; p < PROBES; p++) {
		struct tlm__stk_entry *e = &c->b[(h + p) & mask];
		if (e->id == 0) {
			empty = e;
			break;
		}
		if (e->hash == h && e->depth == depth && memcmp(&c->arena[e->off], ips, depth * 8) == 0) {
			*fresh = false;
			return e->id;
		}
	}
	if (!empty || c->arena_used + depth > TLM__STK_ARENA || c->next_id >= TLM__STK_BUCKETS) {
		tlm__stack_forget_all(c); /* the writer rebinds an id at each definition */
		empty = &c->b[h & mask];
	}
	empty->hash = h;
	empty->depth = depth;
	empty->off = c->arena_used;
	empty->id = c->next_id++;
	memcpy(&c->arena[c->arena_used], ips, depth * 8);
	c->arena_used += depth;
	*fresh = true;
	return empty->id;
}

void tlm__stack_forget_all(struct tlm__stk_cache *c)
{
	memset(c->b, 0, sizeof c->b);
	c->arena_used = 0;
	c->next_id = 1;
	c->gen++;
}
