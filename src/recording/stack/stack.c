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
#include <string.h>

#include "recording/stack/stack_int.h"
#include "recording/stack/unwind_dl.h"

/* libtlm's executable ranges: leading frames inside them are ours. */
#define MAX_SELF 4
static struct { uintptr_t lo, hi; } self_range[MAX_SELF];
static int self_n;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
		if (me >= lo && me < hi) {
			for (int j = 0; j < info->dlpi_phnum && self_n < MAX_SELF; j++) {
				const ElfW(Phdr) *q = &info->dlpi_phdr[j];
				if (q->p_type == PT_LOAD && (q->p_flags & PF_X)) {
					self_range[self_n].lo = info->dlpi_addr + q->p_vaddr;
					self_range[self_n].hi = self_range[self_n].lo + q->p_memsz;
					self_n++;
				}
			}
			return 1;
		}
	}
	return 0;
}

void tlm__stack_self_init(void)
{
	if (self_n == 0) {
		dl_iterate_phdr(find_self, (void *)(uintptr_t)&tlm__stack_self_init);
		if (self_n > 0) {
			tlm__self_lo = self_range[0].lo;
			tlm__self_len = self_range[0].hi - self_range[0].lo;
			tlm__self_more = self_n > 1;
		}
	}
}

/* the first executable range, for stack_cache.c's inline test (stack.h) */
uint64_t tlm__self_lo, tlm__self_len;
bool tlm__self_more;

bool tlm__in_self(uint64_t ip)
{
	for (int i = 0; i < self_n; i++)
		if (ip >= self_range[i].lo && ip < self_range[i].hi)
			return true;
	return false;
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
	for (; i < n && d < max; i++)
		ips[d++] = (uint64_t)(uintptr_t)buf[i];
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
