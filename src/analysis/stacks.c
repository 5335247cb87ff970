/* SPDX-License-Identifier: MIT */
/*
 * stacks.c - stack id -> return addresses, kept for the whole trace (stack
 * records are written once and events refer to them by id). Memory grows with
 * distinct stacks only; addresses live in one pool.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "common/grow.h"

static const struct tlm__key *key_of(const void *ctx, uint32_t v)
{
	const struct tlm__stacks *s = ctx;
	return &s->ent[v].key;
}

int tlm__stacks_init(struct tlm__stacks *s)
{
	memset(s, 0, sizeof *s);
	return tlm__index_init(&s->idx, key_of, s);
}

void tlm__stacks_fini(struct tlm__stacks *s)
{
	tlm__index_fini(&s->idx);
	free(s->ent);
	free(s->ip);
	memset(s, 0, sizeof *s);
}

int tlm__stacks_add(struct tlm__stacks *s, uint32_t id, const uint64_t *ip, uint32_t depth)
{
	if (tlm__grow(&s->ip, &s->capip, s->nip + depth, sizeof *s->ip, 64))
		return -1;
	if (depth) /* a depth-0 stack may come with no array at all */
		memcpy(s->ip + s->nip, ip, depth * sizeof *ip);
	struct tlm__key k = {id, 0, 0};
	uint32_t v = tlm__index_get(&s->idx, &k);
	if (v != UINT32_MAX) {
		/* A redefinition (not written by tlm, but readable): the latest wins. */
		s->ent[v].off = s->nip;
		s->ent[v].depth = depth;
		s->nip += depth;
		return 0;
	}
	if (tlm__grow(&s->ent, &s->cap, s->n + 1, sizeof *s->ent, 64))
		return -1;
	s->ent[s->n] = (struct tlm__stack_ent){k, s->nip, depth};
	if (tlm__index_add(&s->idx, &k, (uint32_t)s->n))
		return -1;
	s->n++;
	s->nip += depth;
	return 0;
}

const uint64_t *tlm__stacks_get(const struct tlm__stacks *s, uint32_t id, uint32_t *depth)
{
	struct tlm__key k = {id, 0, 0};
	uint32_t v = id ? tlm__index_get(&s->idx, &k) : UINT32_MAX;
	if (v == UINT32_MAX) {
		*depth = 0;
		return NULL;
	}
	*depth = s->ent[v].depth;
	return s->ip + s->ent[v].off;
}
