/* SPDX-License-Identifier: MIT */
/*
 * settings.c - PYTORCH_CUDA_ALLOC_CONF, read as PyTorch reads it: tokens
 * split at ',', ':', '[' and ']', spaces dropped; keys max_split_size_mb
 * (>= 20), max_non_split_rounding_mb (>= 20), garbage_collection_threshold
 * (0 < t < 1), roundup_power2_divisions (N, or [MB:N,...,>:N] per power-of-two
 * interval from 1 MiB), expandable_segments:True|False, backend, and the keys
 * that do not change placement (release_lock_on_cudamalloc, pinned_*).
 * per_process_memory_fraction stands for torch.cuda.set_per_process_memory_fraction.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif.h"

#define MiB (1ull << 20)
#define MAXTOK 256

void tlm_wi_defaults(struct tlm_wi_settings *s)
{
	memset(s, 0, sizeof *s);
	s->max_split = UINT64_MAX;
	s->max_nonsplit_round = 20 * MiB;
}

struct toks {
	char t[MAXTOK][64];
	size_t n;
};

static int lex(const char *spec, struct toks *k)
{
	char buf[64];
	size_t b = 0;
	k->n = 0;
	for (const char *p = spec;; p++) {
		bool sep = *p == ',' || *p == ':' || *p == '[' || *p == ']' || !*p;
		if (sep && b) {
			if (k->n == MAXTOK)
				return -1;
			buf[b] = 0;
			snprintf(k->t[k->n++], sizeof k->t[0], "%s", buf);
			b = 0;
		}
		if (!*p)
			break;
		if (sep) {
			if (k->n == MAXTOK)
				return -1;
			k->t[k->n][0] = *p;
			k->t[k->n++][1] = 0;
		} else if (*p != ' ') {
			if (b + 1 >= sizeof buf)
				return -1;
			buf[b++] = *p;
		}
	}
	return 0;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int u64_of(const char *s, uint64_t *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end)
		return -1;
	*v = x;
	return 0;
}

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return -1;                          \
	} while (0)

static int tok_is(const struct toks *k, size_t i, const char *s)
{
	return i < k->n && !strcmp(k->t[i], s);
}

static int parse_divs(struct tlm_wi_settings *s, const struct toks *k, size_t *pi, char *err, size_t errlen)
{
	size_t i = *pi;
	uint64_t v;
	if (!tok_is(k, i, "[")) {
		if (i >= k->n || u64_of(k->t[i], &v) || !is_pow2(v))
			FAIL("roundup_power2_divisions: expected a power of 2 or a [MB:N,...] list");
		for (size_t j = 0; j < TLM_WI_DIVS; j++)
			s->div[j] = (uint32_t)v;
		*pi = i;
		return 0;
	}
	bool first = true;
	size_t last = 0;
	for (i++; i < k->n && !tok_is(k, i, "]"); i++) {
		const char *key = k->t[i];
		if (!tok_is(k, i + 1, ":") || i + 2 >= k->n || u64_of(k->t[i + 2], &v) || (v && !is_pow2(v)))
			FAIL("roundup_power2_divisions: expected MB:N with N a power of 2 or 0");
		i += 2;
		if (!strcmp(key, ">")) {
			/* the intervals after the last one named (that one keeps
			 * its value: the 2.15 wheel rounds 65 MiB with [64:4,>:8]
			 * to 80 MiB, not 72) */
			for (size_t j = last + 1; j < TLM_WI_DIVS; j++)
				s->div[j] = (uint32_t)v;
		} else {
			uint64_t mb;
			if (u64_of(key, &mb) || !is_pow2(mb))
				FAIL("roundup_power2_divisions: interval '%s' is not a power of 2", key);
			size_t idx = (size_t)(63 - __builtin_clzll(mb));
			if (idx >= TLM_WI_DIVS)
				idx = TLM_WI_DIVS - 1;
			if (first) {
				for (size_t j = 0; j < idx; j++)
					s->div[j] = (uint32_t)v;
				first = false;
			}
			s->div[idx] = (uint32_t)v;
			last = idx;
		}
		if (!tok_is(k, i + 1, "]")) {
			if (!tok_is(k, i + 1, ","))
				FAIL("roundup_power2_divisions: expected ',' or ']'");
			i++;
		}
	}
	if (!tok_is(k, i, "]"))
		FAIL("roundup_power2_divisions: missing ']'");
	*pi = i;
	return 0;
}

static int parse_bool(const struct toks *k, size_t i, bool *b, const char *key, char *err, size_t errlen)
{
	if (tok_is(k, i, "True"))
		*b = true;
	else if (tok_is(k, i, "False"))
		*b = false;
	else
		FAIL("%s: expected True or False", key);
	return 0;
}

int tlm_wi_parse(struct tlm_wi_settings *s, const char *spec, char *err, size_t errlen)
{
	struct toks *k = malloc(sizeof *k);
	if (!k)
		FAIL("out of memory");
	int rc = -1;
	if (lex(spec, k)) {
		snprintf(err, errlen, "allocator settings too long");
		goto out;
	}
	for (size_t i = 0; i < k->n; i++) {
		const char *key = k->t[i];
		uint64_t v;
		bool b;
		if (!tok_is(k, i + 1, ":") || i + 2 >= k->n) {
			snprintf(err, errlen, "allocator setting '%s': expected KEY:VALUE", key);
			goto out;
		}
		i += 2;
		const char *val = k->t[i];
		if (!strcmp(key, "max_split_size_mb") || !strcmp(key, "max_non_split_rounding_mb")) {
			if (u64_of(val, &v) || v < 20) {
				snprintf(err, errlen, "%s: expected a whole number of MiB >= 20, got '%s'", key, val);
				goto out;
			}
			uint64_t bytes = v > UINT64_MAX / MiB ? UINT64_MAX / MiB * MiB : v * MiB;
			if (key[4] == 's')
				s->max_split = bytes;
			else
				s->max_nonsplit_round = bytes;
		} else if (!strcmp(key, "garbage_collection_threshold") || !strcmp(key, "per_process_memory_fraction")) {
			char *end;
			double d = strtod(val, &end);
			bool gc = key[0] == 'g';
			if (*end || !isfinite(d) || d <= 0 || (gc ? d >= 1.0 : d > 1.0)) {
				snprintf(err, errlen, "%s: expected a number in (0, 1%s, got '%s'", key, gc ? ")" : "]", val);
				goto out;
			}
			*(gc ? &s->gc_threshold : &s->fraction) = d;
		} else if (!strcmp(key, "roundup_power2_divisions")) {
			if (parse_divs(s, k, &i, err, errlen))
				goto out;
		} else if (!strcmp(key, "expandable_segments")) {
			if (parse_bool(k, i, &s->expandable, key, err, errlen))
				goto out;
		} else if (!strcmp(key, "backend")) {
			if (strcmp(val, "native") && strcmp(val, "cudaMallocAsync")) {
				snprintf(err, errlen, "backend: expected native or cudaMallocAsync, got '%s'", val);
				goto out;
			}
			s->async_backend = val[0] == 'c';
		} else if (!strcmp(key, "release_lock_on_cudamalloc") || !strcmp(key, "pinned_use_cuda_host_register") ||
			   !strcmp(key, "pinned_use_background_threads")) {
			if (parse_bool(k, i, &b, key, err, errlen))
				goto out;
		} else if (!strcmp(key, "pinned_num_register_threads") || !strcmp(key, "pinned_reserve_segment_size_mb")) {
			if (u64_of(val, &v)) {
				snprintf(err, errlen, "%s: expected a number, got '%s'", key, val);
				goto out;
			}
		} else {
			snprintf(err, errlen, "unrecognized allocator setting '%s'", key);
			goto out;
		}
		if (i + 1 < k->n) {
			if (!tok_is(k, i + 1, ",")) {
				snprintf(err, errlen, "allocator settings: expected ',' after '%s'", key);
				goto out;
			}
			i++;
		}
	}
	rc = 0;
out:
	free(k);
	return rc;
}

static void add(char *buf, size_t len, size_t *at, const char *fmt, double a, unsigned long long b)
{
	if (*at >= len)
		return;
	int n = *at ? snprintf(buf + *at, len - *at, ",") : 0;
	if (n > 0)
		*at += (size_t)n;
	if (*at >= len)
		return;
	n = strchr(fmt, 'g') ? snprintf(buf + *at, len - *at, fmt, a) : snprintf(buf + *at, len - *at, fmt, b);
	if (n > 0)
		*at += (size_t)n;
}

void tlm_wi_format(const struct tlm_wi_settings *s, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	if (s->async_backend)
		add(buf, len, &at, "backend:cudaMallocAsync", 0, 0);
	if (s->expandable)
		add(buf, len, &at, "expandable_segments:True", 0, 0);
	if (s->max_split != UINT64_MAX)
		add(buf, len, &at, "max_split_size_mb:%llu", 0, (unsigned long long)(s->max_split / MiB));
	if (s->max_nonsplit_round != 20 * MiB)
		add(buf, len, &at, "max_non_split_rounding_mb:%llu", 0,
		    (unsigned long long)(s->max_nonsplit_round / MiB));
	if (s->gc_threshold > 0)
		add(buf, len, &at, "garbage_collection_threshold:%g", s->gc_threshold, 0);
	if (s->fraction > 0)
		add(buf, len, &at, "per_process_memory_fraction:%g", s->fraction, 0);
	bool same = true, any = false;
	for (size_t j = 0; j < TLM_WI_DIVS; j++) {
		same &= s->div[j] == s->div[0];
		any |= s->div[j] != 0;
	}
	if (any && same) {
		add(buf, len, &at, "roundup_power2_divisions:%llu", 0, s->div[0]);
	} else if (any) {
		add(buf, len, &at, "roundup_power2_divisions:[", 0, 0);
		for (size_t j = 0; j < TLM_WI_DIVS && at < len; j++) {
			int n = j + 1 < TLM_WI_DIVS ? snprintf(buf + at, len - at, "%llu:%u,", 1ull << j, s->div[j])
						 : snprintf(buf + at, len - at, ">:%u]", s->div[j]);
			if (n > 0)
				at += (size_t)n;
		}
	}
}
