/* SPDX-License-Identifier: MIT */
/*
 * live_map.c - the allocations live right now, keyed by (namespace, address).
 *
 * Open addressing with linear probing and backward-shift deletion: no
 * tombstones, so a long alloc/free churn never degrades lookups and the table
 * only grows with the live set (load factor kept under 1/2).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"

static inline size_t slot_of(const struct tlm__live_map *m, uint8_t ns, uint64_t addr)
{
	/* Addresses are aligned to 256 B .. 2 MiB: the multiply spreads the high
	 * bits, the shift keeps them. */
	uint64_t h = (addr ^ ((uint64_t)ns << 56)) * 0x9E3779B97F4A7C15ULL;
	h ^= h >> 29;
	return (size_t)h & m->mask;
}

int tlm__live_init(struct tlm__live_map *m)
{
	m->mask = 1023;
	m->count = 0;
	m->slot = calloc(m->mask + 1, sizeof *m->slot);
	return m->slot ? 0 : -1;
}

void tlm__live_fini(struct tlm__live_map *m)
{
	free(m->slot);
	m->slot = NULL;
}

struct tlm__live *tlm__live_find(struct tlm__live_map *m, uint8_t ns, uint64_t addr)
{
	for (size_t i = slot_of(m, ns, addr);; i = (i + 1) & m->mask) {
		struct tlm__live *e = &m->slot[i];
		if (e->ns == TLM__NS_EMPTY)
			return NULL;
		if (e->addr == addr && e->ns == ns)
			return e;
	}
}

static struct tlm__live *place(struct tlm__live_map *m, const struct tlm__live *e)
{
	size_t i = slot_of(m, e->ns, e->addr);
	while (m->slot[i].ns != TLM__NS_EMPTY)
		i = (i + 1) & m->mask;
	m->slot[i] = *e;
	return &m->slot[i];
}

static int grow(struct tlm__live_map *m)
{
	struct tlm__live *old = m->slot;
	size_t ocap = m->mask + 1;
	struct tlm__live *n = calloc(ocap * 2, sizeof *n);
	if (!n)
		return -1;
	m->slot = n;
	m->mask = ocap * 2 - 1;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].ns != TLM__NS_EMPTY)
			place(m, &old[i]);
	free(old);
	return 0;
}

struct tlm__live *tlm__live_put(struct tlm__live_map *m, const struct tlm__live *e)
{
	if ((m->count + 1) * 2 > m->mask + 1 && grow(m))
		return NULL;
	m->count++;
	return place(m, e);
}

void tlm__live_del(struct tlm__live_map *m, struct tlm__live *e)
{
	size_t i = (size_t)(e - m->slot);
	/* Backward shift: move later members of the probe run into the hole
	 * when their home slot does not lie cyclically in (hole, j]. */
	for (size_t j = (i + 1) & m->mask;; j = (j + 1) & m->mask) {
		struct tlm__live *x = &m->slot[j];
		if (x->ns == TLM__NS_EMPTY)
			break;
		size_t home = slot_of(m, x->ns, x->addr);
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slot[i] = *x;
			i = j;
		}
	}
	m->slot[i].ns = TLM__NS_EMPTY;
	m->count--;
}
