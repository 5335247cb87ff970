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

struct tlm__code tlm__self, tlm__interp;
_Atomic bool tlm__interp_cut;

struct find {
	uintptr_t addr; /* an address inside the object */
	struct tlm__code *code;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const struct find *f = arg;
	struct tlm__code *c = f->code;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
		if (f->addr >= lo && f->addr < hi) {
			for (int j = 0; j < info->dlpi_phnum && c->n < TLM__CODE_RANGES; j++) {
				const ElfW(Phdr) *q = &info->dlpi_phdr[j];
				if (q->p_type == PT_LOAD && (q->p_flags & PF_X)) {
					c->rlo[c->n] = info->dlpi_addr + q->p_vaddr;
					c->rhi[c->n] = c->rlo[c->n] + q->p_memsz;
					c->n++;
				}
			}
			return 1;
		}
	}
	return 0;
}

/* the executable ranges of the object holding addr into c (left empty if none) */
static void find_code(const void *addr, struct tlm__code *c)
{
	struct find f = {(uintptr_t)addr, c};
	dl_iterate_phdr(find_object, &f);
	if (c->n > 0) {
		c->lo = c->rlo[0];
		c->len = c->rhi[0] - c->rlo[0];
	}
}

bool tlm__in_code_rest(const struct tlm__code *c, uint64_t ip)
{
	for (int i = 0; i < c->n; i++)
		if (ip >= c->rlo[i] && ip < c->rhi[i])
			return true;
	return false;
}

void tlm__stack_self_init(void)
{
	if (tlm__self.n == 0)
		find_code((const void *)&tlm__stack_self_init, &tlm__self);
}

void tlm__stack_interp_found(const void *sym)
{
	if (!tlm__cfg.stack_past_python && sym && tlm__interp.n == 0)
		find_code(sym, &tlm__interp);
}

void tlm__stack_interp_on(void)
{
	if (tlm__interp.n)
		atomic_store_explicit(&tlm__interp_cut, true, memory_order_release);
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
	while (i < n && tlm__in_code(&tlm__self, (uint64_t)(uintptr_t)buf[i]))
		i++;
	uint32_t d = 0;
	bool cut = atomic_load_explicit(&tlm__interp_cut, memory_order_acquire);
	for (; i < n && d < max; i++) {
		ips[d++] = (uint64_t)(uintptr_t)buf[i];
		if (cut && tlm__in_code(&tlm__interp, ips[d - 1]))
			break; /* as the walk ends (stack_walk.c) */
	}
	return d;
}

/* Four lanes, each a multiply chain over every fourth frame, joined at the
 * end: one chain over all the frames waits for a multiply per frame (about
 * 5 cycles each, 150 for a 30-frame miss); four chains overlap. */
static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0xff51afd7ed558ccdull;
	return h ^ h >> 32;
}

static inline uint64_t stack_hash(const uint64_t *ips, uint32_t depth)
{
	uint64_t a = 0x9e3779b97f4a7c15ull ^ depth, b = 0xc2b2ae3d27d4eb4full, c = 0x165667b19e3779f9ull,
		 d = 0x27d4eb2f165667c5ull;
	uint32_t i = 0;
	for (; i + 4 <= depth; i += 4) {
		a = mix(a, ips[i]);
		b = mix(b, ips[i + 1]);
		c = mix(c, ips[i + 2]);
		d = mix(d, ips[i + 3]);
	}
	for (; i < depth; i++)
		a = mix(a, ips[i]);
	return mix(mix(mix(a, b), c), d) | 1; /* never 0 */
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
