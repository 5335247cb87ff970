/* SPDX-License-Identifier: MIT */
/* sym_cache.c - open-addressing map from ip to a run of frames in one array. */
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_cache.h"
#include "common/grow.h"

struct entry {
	uint64_t ip;
	uint32_t first, n; /* n = 0: empty slot */
};

struct tlm__symcache {
	struct entry *tab;
	size_t nslots, count; /* nslots is a power of two */
	struct tlm_frame *frames;
	size_t nframes, capframes;
};

static size_t slot_of(uint64_t ip, size_t mask)
{
	ip ^= ip >> 33; /* addresses differ in their low bits: mix them up */
	ip *= 0xff51afd7ed558ccdull;
	ip ^= ip >> 33;
	return (size_t)ip & mask;
}

struct tlm__symcache *tlm__symcache_new(void)
{
	struct tlm__symcache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->nslots = 1024;
	c->tab = calloc(c->nslots, sizeof *c->tab);
	if (!c->tab) {
		free(c);
		return NULL;
	}
	return c;
}

void tlm__symcache_free(struct tlm__symcache *c)
{
	if (!c)
		return;
	free(c->tab);
	free(c->frames);
	free(c);
}

const struct tlm_frame *tlm__symcache_get(const struct tlm__symcache *c, uint64_t ip, size_t *n)
{
	size_t mask = c->nslots - 1;
	for (size_t i = slot_of(ip, mask);; i = (i + 1) & mask) {
		const struct entry *e = &c->tab[i];
		if (!e->n)
			return NULL;
		if (e->ip == ip) {
			*n = e->n;
			return &c->frames[e->first];
		}
	}
}

static int grow_tab(struct tlm__symcache *c)
{
	size_t n = c->nslots * 2, mask = n - 1;
	struct entry *t = calloc(n, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < c->nslots; i++) {
		if (!c->tab[i].n)
			continue;
		size_t j = slot_of(c->tab[i].ip, mask);
		while (t[j].n)
			j = (j + 1) & mask;
		t[j] = c->tab[i];
	}
	free(c->tab);
	c->tab = t;
	c->nslots = n;
	return 0;
}

int tlm__symcache_put(struct tlm__symcache *c, uint64_t ip, const struct tlm_frame *f, size_t n)
{
	if (!n || n > UINT32_MAX || c->nframes + n > UINT32_MAX)
		return -1;
	if ((c->count + 1) * 2 > c->nslots && grow_tab(c) < 0)
		return -1;
	if (c->nframes + n > c->capframes && tlm__grow(&c->frames, &c->capframes, c->nframes + n, sizeof *c->frames, 4096))
		return -1;

	memcpy(&c->frames[c->nframes], f, n * sizeof *f);
	size_t mask = c->nslots - 1, i = slot_of(ip, mask);
	while (c->tab[i].n && c->tab[i].ip != ip)
		i = (i + 1) & mask;
	if (!c->tab[i].n)
		c->count++;
	c->tab[i] = (struct entry){.ip = ip, .first = (uint32_t)c->nframes, .n = (uint32_t)n};
	c->nframes += n;
	return 0;
}

void tlm__symcache_clear(struct tlm__symcache *c)
{
	memset(c->tab, 0, c->nslots * sizeof *c->tab);
	c->count = 0;
	c->nframes = 0;
}
