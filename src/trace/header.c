/* SPDX-License-Identifier: MIT */
/* header.c - file header encode/decode, see header.h and docs/trace-format.md. */
#include "header.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format.h"
#include "varint.h"

#define FIXED_FIELDS 36u /* flags, pid, ppid, realtime, monotonic, clock_id, stack_depth */

/* How many of h's arguments fit the reader's limits, and their total length. */
static uint32_t kept_args(const struct tlm_trace_header *h, size_t *bytes)
{
	uint32_t n = 0;
	size_t total = 0;
	for (; n < h->argc && n < TLM__MAX_ARGC; n++) {
		size_t l = h->argv && h->argv[n] ? strlen(h->argv[n]) : 0;
		if (total + l > TLM__MAX_ARGV_BYTES)
			break;
		total += l;
	}
	*bytes = total;
	return n;
}

size_t tlm__header_size(const struct tlm_trace_header *h)
{
	size_t argb;
	uint32_t argc = kept_args(h, &argb);
	return TLM__HDR_FIXED + FIXED_FIELDS + 4 + strnlen(h->host, sizeof h->host - 1) + 4 +
	       strnlen(h->exe, sizeof h->exe - 1) + 4 +
	       strnlen(h->tlm_version, sizeof h->tlm_version - 1) + 4 + (size_t)argc * 4 + argb + 4;
}

static uint8_t *put_str(uint8_t *p, const char *s, size_t n)
{
	tlm__put_u32(p, (uint32_t)n);
	memcpy(p + 4, s, n);
	return p + 4 + n;
}

void tlm__header_encode(const struct tlm_trace_header *h, uint8_t *buf)
{
	size_t total = tlm__header_size(h), argb;
	uint32_t argc = kept_args(h, &argb);
	uint8_t *p = buf;

	memcpy(p, TLM_TRACE_MAGIC, 8);
	tlm__put_u32(p + 8, TLM_TRACE_VERSION);
	tlm__put_u32(p + 12, (uint32_t)(total - TLM__HDR_FIXED - 4));
	p += TLM__HDR_FIXED;
	tlm__put_u32(p, h->flags);
	tlm__put_u32(p + 4, h->pid);
	tlm__put_u32(p + 8, h->ppid);
	tlm__put_u64(p + 12, h->start_realtime_ns);
	tlm__put_u64(p + 20, h->start_monotonic_ns);
	tlm__put_u32(p + 28, h->clock_id);
	tlm__put_u32(p + 32, h->stack_depth);
	p += FIXED_FIELDS;
	p = put_str(p, h->host, strnlen(h->host, sizeof h->host - 1));
	p = put_str(p, h->exe, strnlen(h->exe, sizeof h->exe - 1));
	p = put_str(p, h->tlm_version, strnlen(h->tlm_version, sizeof h->tlm_version - 1));
	tlm__put_u32(p, argc);
	p += 4;
	for (uint32_t i = 0; i < argc; i++) {
		const char *a = h->argv && h->argv[i] ? h->argv[i] : "";
		p = put_str(p, a, strlen(a));
	}
	tlm__put_u32(p, (uint32_t)crc32(0, buf, (uInt)(p - buf)));
}

struct cur {
	const uint8_t *p, *end, *start;
	char *err;
	size_t errlen;
};

static int fail(struct cur *c, const char *what)
{
	snprintf(c->err, c->errlen, "bad header at offset %zu: %s",
		 (size_t)(c->p - c->start) + TLM__HDR_FIXED, what);
	return -1;
}

static int get_str(struct cur *c, char *dst, size_t cap, const char *name)
{
	char what[64];
	if (c->end - c->p < 4)
		return fail(c, "fields end early");
	uint32_t n = tlm__get_u32(c->p);
	if (n >= cap) {
		snprintf(what, sizeof what, "%s length %u exceeds %zu", name, n, cap - 1);
		return fail(c, what);
	}
	if ((size_t)(c->end - c->p - 4) < n)
		return fail(c, "fields end early");
	memcpy(dst, c->p + 4, n);
	dst[n] = 0;
	c->p += 4 + n;
	return 0;
}

int tlm__header_decode(const uint8_t *p, uint32_t len, struct tlm_trace_header *h,
		       char *err, size_t errlen)
{
	struct cur c = {p, p + len, p, err, errlen};

	memset(h, 0, sizeof *h);
	h->version = TLM_TRACE_VERSION;
	if (len < FIXED_FIELDS)
		return fail(&c, "fields end early");
	h->flags = tlm__get_u32(p);
	h->pid = tlm__get_u32(p + 4);
	h->ppid = tlm__get_u32(p + 8);
	h->start_realtime_ns = tlm__get_u64(p + 12);
	h->start_monotonic_ns = tlm__get_u64(p + 20);
	h->clock_id = tlm__get_u32(p + 28);
	h->stack_depth = tlm__get_u32(p + 32);
	c.p += FIXED_FIELDS;
	if (get_str(&c, h->host, sizeof h->host, "host") ||
	    get_str(&c, h->exe, sizeof h->exe, "exe") ||
	    get_str(&c, h->tlm_version, sizeof h->tlm_version, "tlm version"))
		return -1;
	if (c.end - c.p < 4)
		return fail(&c, "fields end early");
	uint32_t argc = tlm__get_u32(c.p);
	if (argc > TLM__MAX_ARGC)
		return fail(&c, "argc exceeds 4096");
	c.p += 4;

	/* First pass bounds every length, so the single allocation is exact. */
	size_t total = 0;
	const uint8_t *q = c.p;
	for (uint32_t i = 0; i < argc; i++) {
		if (c.end - q < 4)
			return fail(&c, "argv ends early");
		uint32_t n = tlm__get_u32(q);
		if (n > TLM__MAX_ARGV_BYTES || total + n > TLM__MAX_ARGV_BYTES)
			return fail(&c, "argv exceeds 1 MiB");
		if ((size_t)(c.end - q - 4) < n)
			return fail(&c, "argv ends early");
		total += n;
		q += 4 + n;
	}
	size_t ptrs = ((size_t)argc + 1) * sizeof(char *);
	char **argv = malloc(ptrs + total + argc);
	if (!argv) {
		snprintf(err, errlen, "out of memory reading the header");
		return -1;
	}
	char *s = (char *)argv + ptrs;
	for (uint32_t i = 0; i < argc; i++) {
		uint32_t n = tlm__get_u32(c.p);
		memcpy(s, c.p + 4, n);
		s[n] = 0;
		argv[i] = s;
		s += n + 1;
		c.p += 4 + n;
	}
	argv[argc] = NULL;
	h->argc = argc;
	h->argv = argv;
	/* Bytes after argv are fields of a later minor revision: ignored. */
	return 0;
}
