/* SPDX-License-Identifier: MIT */
/*
 * pickle_out.c - a pickle writer, protocol 2 (pickle_out.h). Opcodes are
 * those of CPython's Lib/pickletools.py: PROTO, EMPTY_DICT/EMPTY_LIST with
 * MARK ... SETITEMS/APPENDS (in batches of 1000 items, as CPython writes
 * them), MARK ... TUPLE, BININT1/BININT2/BININT/LONG1, BINFLOAT,
 * BINUNICODE, NEWTRUE/NEWFALSE, NONE, BINPUT/LONG_BINPUT, BINGET/LONG_BINGET.
 */
#include <stdlib.h>
#include <string.h>

#include "encoders/pickle_out.h"

#define BATCH 1000
#define INTERN_MAX 4096 /* longer strings are written each time */

static void put(struct tlm__pk *p, const void *b, size_t n)
{
	if (!p->err && n && fwrite(b, 1, n, p->f) != n)
		p->err = true;
}

static void op(struct tlm__pk *p, char c)
{
	put(p, &c, 1);
}

static void le32(struct tlm__pk *p, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};
	put(p, b, 4);
}

/* One more complete item in the innermost container. */
static void done(struct tlm__pk *p)
{
	if (!p->depth)
		return;
	int d = p->depth - 1;
	p->items[d]++;
	if (p->type[d] == 'l' && p->items[d] == BATCH) {
		put(p, "e(", 2);
		p->items[d] = 0;
	} else if (p->type[d] == 'd' && p->items[d] == 2 * BATCH) {
		put(p, "u(", 2);
		p->items[d] = 0;
	}
}

void tlm__pk_begin(struct tlm__pk *p, FILE *f)
{
	memset(p, 0, sizeof *p);
	p->f = f;
	put(p, "\x80\x02", 2);
}

int tlm__pk_finish(struct tlm__pk *p)
{
	if (p->depth)
		p->err = true;
	op(p, '.');
	for (size_t i = 0; p->str && i <= p->mask; i++)
		free(p->str[i].s);
	free(p->str);
	p->str = NULL;
	return p->err ? -1 : 0;
}

static void open_c(struct tlm__pk *p, char type, const char *ops)
{
	if (p->depth == TLM__PK_DEPTH) {
		p->err = true;
		return;
	}
	put(p, ops, strlen(ops));
	p->type[p->depth] = type;
	p->items[p->depth++] = 0;
}

void tlm__pk_dict(struct tlm__pk *p) { open_c(p, 'd', "}("); }
void tlm__pk_list(struct tlm__pk *p) { open_c(p, 'l', "]("); }
void tlm__pk_tuple(struct tlm__pk *p) { open_c(p, 't', "("); }

/* PUT: names the object on top of the stack. Written before the object
 * counts as an item, so never after a batch's MARK. */
static uint32_t emit_put(struct tlm__pk *p)
{
	uint32_t id = p->memo++;
	if (id < 256) {
		unsigned char b[2] = {'q', (unsigned char)id};
		put(p, b, 2);
	} else {
		op(p, 'r');
		le32(p, id);
	}
	return id;
}

static void close_c(struct tlm__pk *p)
{
	if (!p->depth) {
		p->err = true;
		return;
	}
	char t = p->type[--p->depth];
	if (t == 'd' && p->items[p->depth] % 2)
		p->err = true; /* a key without its value */
	op(p, t == 'd' ? 'u' : t == 'l' ? 'e' : 't');
}

void tlm__pk_end(struct tlm__pk *p)
{
	close_c(p);
	done(p);
}

uint32_t tlm__pk_end_memo(struct tlm__pk *p)
{
	close_c(p);
	uint32_t id = emit_put(p);
	done(p);
	return id;
}

void tlm__pk_uint(struct tlm__pk *p, uint64_t v)
{
	if (v <= 0x7fffffffu) {
		tlm__pk_int(p, (int64_t)v);
		return;
	}
	unsigned char b[11] = {0x8a, 0};
	size_t n = 0;
	for (uint64_t x = v; x; x >>= 8)
		b[2 + n++] = (unsigned char)x;
	if (b[1 + n] & 0x80)
		b[2 + n++] = 0; /* positive: the top bit must be clear */
	b[1] = (unsigned char)n;
	put(p, b, 2 + n);
	done(p);
}

void tlm__pk_int(struct tlm__pk *p, int64_t v)
{
	if (v >= 0 && v < 256) {
		unsigned char b[2] = {'K', (unsigned char)v};
		put(p, b, 2);
	} else if (v >= 0 && v < 65536) {
		unsigned char b[3] = {'M', (unsigned char)v, (unsigned char)(v >> 8)};
		put(p, b, 3);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		op(p, 'J');
		le32(p, (uint32_t)(int32_t)v);
	} else {
		/* LONG1: little-endian two's complement, as few bytes as keep the sign */
		unsigned char b[10] = {0x8a, 8};
		uint64_t u = (uint64_t)v;
		for (int i = 0; i < 8; i++)
			b[2 + i] = (unsigned char)(u >> (8 * i));
		size_t n = 8;
		while (n > 1 && ((b[1 + n] == 0 && !(b[n] & 0x80)) || (b[1 + n] == 0xff && (b[n] & 0x80))))
			n--;
		b[1] = (unsigned char)n;
		put(p, b, 2 + n);
	}
	done(p);
}

void tlm__pk_bool(struct tlm__pk *p, bool v)
{
	op(p, v ? '\x88' : '\x89');
	done(p);
}

void tlm__pk_none(struct tlm__pk *p)
{
	op(p, 'N');
	done(p);
}

void tlm__pk_float(struct tlm__pk *p, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	unsigned char b[9] = {'G'};
	for (int i = 0; i < 8; i++)
		b[1 + i] = (unsigned char)(u >> (56 - 8 * i));
	put(p, b, 9);
	done(p);
}

void tlm__pk_get(struct tlm__pk *p, uint32_t id)
{
	if (id < 256) {
		unsigned char b[2] = {'h', (unsigned char)id};
		put(p, b, 2);
	} else {
		op(p, 'j');
		le32(p, id);
	}
	done(p);
}

/* Length of a valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (c == 0xe0 && s[1] < 0xa0)
		return 0; /* overlong */
	if (c == 0xed && s[1] >= 0xa0)
		return 0; /* a surrogate: Python's str refuses it */
	if (c == 0xf0 && s[1] < 0x90)
		return 0;
	if (c == 0xf4 && s[1] >= 0x90)
		return 0; /* past U+10FFFF */
	return len;
}

static void write_str(struct tlm__pk *p, const unsigned char *s, size_t n)
{
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len(s + i, n - i);
		out += l ? l : 3;
		i += l ? l : 1;
	}
	op(p, 'X');
	le32(p, (uint32_t)out);
	size_t run = 0; /* valid bytes not yet written */
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len(s + i, n - i);
		if (l) {
			run += l;
			i += l;
			continue;
		}
		put(p, s + i - run, run);
		run = 0;
		put(p, "\xef\xbf\xbd", 3);
		i++;
	}
	put(p, s + n - run, run);
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h | 1; /* 0 marks an empty slot */
}

static int intern_grow(struct tlm__pk *p)
{
	size_t cap = p->str ? (p->mask + 1) * 2 : 256;
	struct tlm__pk_str *n = calloc(cap, sizeof *n);
	if (!n)
		return -1;
	for (size_t i = 0; p->str && i <= p->mask; i++) {
		if (!p->str[i].h)
			continue;
		size_t j = p->str[i].h & (cap - 1);
		while (n[j].h)
			j = (j + 1) & (cap - 1);
		n[j] = p->str[i];
	}
	free(p->str);
	p->str = n;
	p->mask = cap - 1;
	return 0;
}

void tlm__pk_strn(struct tlm__pk *p, const char *s, size_t n)
{
	if (n > 0xffffffffu / 4) /* BINUNICODE's length is 32 bits */
		n = 0xffffffffu / 4;
	if (n > INTERN_MAX) {
		write_str(p, (const unsigned char *)s, n);
		done(p);
		return;
	}
	uint64_t h = fnv(s, n);
	if (p->str) {
		for (size_t j = h & p->mask; p->str[j].h; j = (j + 1) & p->mask) {
			const struct tlm__pk_str *e = &p->str[j];
			if (e->h == h && e->len == n && !memcmp(e->s, s, n)) {
				tlm__pk_get(p, e->memo);
				return;
			}
		}
	}
	write_str(p, (const unsigned char *)s, n);
	if ((!p->str || (p->nstr + 1) * 2 > p->mask + 1) && intern_grow(p)) {
		done(p); /* not interned: written each time from now on */
		return;
	}
	char *copy = malloc(n + 1);
	if (!copy) {
		done(p);
		return;
	}
	memcpy(copy, s, n);
	copy[n] = 0;
	uint32_t id = emit_put(p);
	size_t j = h & p->mask;
	while (p->str[j].h)
		j = (j + 1) & p->mask;
	p->str[j] = (struct tlm__pk_str){h, id, (uint32_t)n, copy};
	p->nstr++;
	done(p);
}

void tlm__pk_str(struct tlm__pk *p, const char *s)
{
	tlm__pk_strn(p, s ? s : "", s ? strlen(s) : 0);
}
