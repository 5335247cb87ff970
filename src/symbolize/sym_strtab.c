/* SPDX-License-Identifier: MIT */
/* sym_strtab.c - string interning: an open-addressing set over an arena. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_strtab.h"

/* Strings live in chunks that never move or shrink: the pointers handed out
 * must stay valid while the table grows. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct slot {
	uint64_t hash; /* 0 = empty */
	const char *str;
	size_t len;
};

struct tlm__strtab {
	struct chunk *chunks;
	struct slot *slots;
	size_t nslots, count; /* nslots is a power of two */
};

#define CHUNK_BYTES (64u * 1024u)

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a: names are short */
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

struct tlm__strtab *tlm__strtab_new(void)
{
	struct tlm__strtab *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->nslots = 256;
	t->slots = calloc(t->nslots, sizeof *t->slots);
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void tlm__strtab_free(struct tlm__strtab *t)
{
	if (!t)
		return;
	for (struct chunk *c = t->chunks, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(t->slots);
	free(t);
}

static char *arena_copy(struct tlm__strtab *t, const char *s, size_t len)
{
	struct chunk *c = t->chunks;
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > CHUNK_BYTES ? len + 1 : CHUNK_BYTES;
		c = malloc(sizeof *c + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		/* A huge string gets a chunk of its own behind the current one, so
		 * the current chunk's free space is not abandoned. */
		if (t->chunks && size > CHUNK_BYTES) {
			c->next = t->chunks->next;
			t->chunks->next = c;
		} else {
			c->next = t->chunks;
			t->chunks = c;
		}
	}
	char *p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = 0;
	c->used += len + 1;
	return p;
}

static int grow(struct tlm__strtab *t)
{
	size_t n = t->nslots * 2;
	struct slot *ns = calloc(n, sizeof *ns);
	if (!ns)
		return -1;
	for (size_t i = 0; i < t->nslots; i++) {
		struct slot *o = &t->slots[i];
		if (!o->hash)
			continue;
		size_t j = o->hash & (n - 1);
		while (ns[j].hash)
			j = (j + 1) & (n - 1);
		ns[j] = *o;
	}
	free(t->slots);
	t->slots = ns;
	t->nslots = n;
	return 0;
}

const char *tlm__strtab_intern(struct tlm__strtab *t, const char *s, size_t len)
{
	if (!t || !s)
		return NULL;
	uint64_t h = hash_bytes(s, len);
	size_t mask = t->nslots - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct slot *sl = &t->slots[i];
		if (!sl->hash)
			break;
		if (sl->hash == h && sl->len == len && !memcmp(sl->str, s, len))
			return sl->str;
	}
	/* Keep the load under 1/2 so probes stay short. */
	if ((t->count + 1) * 2 > t->nslots && grow(t) < 0)
		return NULL;
	char *p = arena_copy(t, s, len);
	if (!p)
		return NULL;
	mask = t->nslots - 1;
	size_t i = h & mask;
	while (t->slots[i].hash)
		i = (i + 1) & mask;
	t->slots[i] = (struct slot){.hash = h, .str = p, .len = len};
	t->count++;
	return p;
}

const char *tlm__strtab_intern_str(struct tlm__strtab *t, const char *s)
{
	return s ? tlm__strtab_intern(t, s, strlen(s)) : NULL;
}
