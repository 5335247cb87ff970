/* SPDX-License-Identifier: MIT */
/* json_in.c - the strict, bounded JSON reader, see json_in.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/input.h"
#include "encoders/json_in.h"

struct parser {
	const unsigned char *p, *end, *start;
	size_t values;
	char *err;
	size_t errlen;
	bool failed;
};

static void fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct parser *ps, const char *fmt, ...)
{
	if (ps->failed)
		return;
	ps->failed = true;
	char what[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "offset %zu: %s", (size_t)(ps->p - ps->start), what);
}

static void ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static void free_value(struct tlm_jv *v)
{
	if (v->type == TLM_JV_STR) {
		free(v->s);
	} else if (v->type == TLM_JV_ARR || v->type == TLM_JV_OBJ) {
		for (size_t i = 0; i < v->n; i++) {
			free_value(&v->items[i]);
			if (v->keys)
				free(v->keys[i]);
		}
		free(v->items);
		free(v->keys);
	}
	memset(v, 0, sizeof *v);
}

void tlm_json_free(struct tlm_jv *v)
{
	if (!v)
		return;
	free_value(v);
	free(v);
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n)) {
		fail(ps, "invalid literal");
		return false;
	}
	ps->p += n;
	return true;
}

static int hex4(const unsigned char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int c = p[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Length of a valid UTF-8 sequence at p (2..4), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0], need, lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if ((size_t)(end - p) <= need)
		return 0;
	for (unsigned i = 1; i <= need; i++) {
		unsigned b = p[i];
		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return need + 1;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at ps->p (on the opening quote). The decoded text is never
 * longer than the source, so one allocation of the source length does. */
static char *string(struct parser *ps, size_t *len)
{
	const unsigned char *q = ++ps->p;
	while (q < ps->end && *q != '"')
		q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
	if (q >= ps->end) {
		fail(ps, "unterminated string");
		return NULL;
	}
	char *out = malloc((size_t)(q - ps->p) + 1), *o = out;
	if (!out) {
		fail(ps, "out of memory");
		return NULL;
	}
	while (*ps->p != '"') {
		unsigned c = *ps->p;
		if (c < 0x20) {
			fail(ps, "control character in a string");
			goto bad;
		}
		if (c >= 0x80) {
			size_t k = utf8_len(ps->p, ps->end);
			if (!k) {
				fail(ps, "invalid UTF-8 in a string");
				goto bad;
			}
			memcpy(o, ps->p, k);
			o += k;
			ps->p += k;
			continue;
		}
		if (c != '\\') {
			*o++ = (char)c;
			ps->p++;
			continue;
		}
		ps->p++;
		switch (*ps->p) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			int cp = ps->end - ps->p > 4 ? hex4(ps->p + 1) : -1;
			if (cp < 0) {
				fail(ps, "bad \\u escape");
				goto bad;
			}
			ps->p += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				fail(ps, "lone low surrogate");
				goto bad;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				int lo = ps->end - ps->p > 6 && ps->p[1] == '\\' && ps->p[2] == 'u' ? hex4(ps->p + 3) : -1;
				if (lo < 0xdc00 || lo > 0xdfff) {
					fail(ps, "lone high surrogate");
					goto bad;
				}
				ps->p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			/* the escape took >= 6 source bytes for <= 4 output bytes */
			o += put_utf8(o, (unsigned)cp);
			break;
		}
		default:
			fail(ps, "bad escape");
			goto bad;
		}
		ps->p++;
	}
	ps->p++; /* closing quote */
	*o = 0;
	*len = (size_t)(o - out);
	return out;
bad:
	free(out);
	return NULL;
}

static bool number(struct parser *ps, struct tlm_jv *v)
{
	const unsigned char *s = ps->p, *p = s;
	bool neg = false, is_int = true;
	if (p < ps->end && *p == '-')
		neg = true, p++;
	if (p >= ps->end || *p < '0' || *p > '9') {
		fail(ps, "invalid number");
		return false;
	}
	if (*p == '0' && p + 1 < ps->end && p[1] >= '0' && p[1] <= '9') {
		fail(ps, "leading zero");
		return false;
	}
	uint64_t u = 0;
	bool over = false;
	for (; p < ps->end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = *p - '0';
		if (u > (UINT64_MAX - d) / 10)
			over = true;
		else
			u = u * 10 + d;
	}
	if (p < ps->end && *p == '.') {
		is_int = false;
		if (++p >= ps->end || *p < '0' || *p > '9') {
			fail(ps, "digit expected after '.'");
			return false;
		}
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < ps->end && (*p == 'e' || *p == 'E')) {
		is_int = false;
		p++;
		if (p < ps->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= ps->end || *p < '0' || *p > '9') {
			fail(ps, "digit expected in exponent");
			return false;
		}
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	char buf[64];
	size_t n = (size_t)(p - s);
	if (n < sizeof buf) {
		memcpy(buf, s, n);
		buf[n] = 0;
		v->d = strtod(buf, NULL);
	} else { /* absurdly long: the value is still a double */
		char *t = strndup((const char *)s, n);
		if (!t) {
			fail(ps, "out of memory");
			return false;
		}
		v->d = strtod(t, NULL);
		free(t);
	}
	v->type = TLM_JV_NUM;
	v->is_int = is_int && !over && (!neg || u <= (uint64_t)INT64_MAX + 1);
	v->neg = neg && u != 0;
	v->u = v->is_int ? u : 0;
	ps->p = p;
	return true;
}

static bool value(struct parser *ps, struct tlm_jv *v, int depth);

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool container(struct parser *ps, struct tlm_jv *v, int depth, bool obj)
{
	v->type = obj ? TLM_JV_OBJ : TLM_JV_ARR;
	if (depth >= TLM_JSON_MAX_DEPTH) {
		fail(ps, "nested deeper than %d", TLM_JSON_MAX_DEPTH);
		return false;
	}
	ps->p++;
	ws(ps);
	size_t cap = 0;
	char close = obj ? '}' : ']';
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return true;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 8;
			struct tlm_jv *it = realloc(v->items, cap * sizeof *it);
			char **k = obj ? realloc(v->keys, cap * sizeof *k) : NULL;
			if (it)
				v->items = it;
			if (k)
				v->keys = k;
			if (!it || (obj && !k)) {
				fail(ps, "out of memory");
				return false;
			}
		}
		struct tlm_jv *it = &v->items[v->n];
		memset(it, 0, sizeof *it);
		if (obj) {
			ws(ps);
			if (ps->p >= ps->end || *ps->p != '"') {
				fail(ps, "object key expected");
				return false;
			}
			size_t kl;
			char *key = string(ps, &kl);
			if (!key)
				return false;
			if (strlen(key) != kl) {
				free(key);
				fail(ps, "NUL in an object key");
				return false;
			}
			v->keys[v->n] = key;
			v->n++; /* owned from here on (the value is still null) */
			ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				fail(ps, "':' expected");
				return false;
			}
			ps->p++;
			if (!value(ps, it, depth + 1))
				return false;
		} else {
			v->n++;
			if (!value(ps, it, depth + 1))
				return false;
		}
		ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			ws(ps);
			if (ps->p < ps->end && *ps->p == close) {
				fail(ps, "trailing comma");
				return false;
			}
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			break;
		}
		fail(ps, "',' or '%c' expected", close);
		return false;
	}
	if (obj && v->n > 1) { /* duplicate keys: sort a copy, O(n log n) */
		char **k = malloc(v->n * sizeof *k);
		if (!k) {
			fail(ps, "out of memory");
			return false;
		}
		memcpy(k, v->keys, v->n * sizeof *k);
		qsort(k, v->n, sizeof *k, key_cmp);
		for (size_t i = 1; i < v->n; i++)
			if (!strcmp(k[i - 1], k[i])) {
				free(k);
				fail(ps, "duplicate key in an object");
				return false;
			}
		free(k);
	}
	return true;
}

static bool value(struct parser *ps, struct tlm_jv *v, int depth)
{
	ws(ps);
	if (++ps->values > TLM_JSON_MAX_VALUES) {
		fail(ps, "more than %u values", TLM_JSON_MAX_VALUES);
		return false;
	}
	if (ps->p >= ps->end) {
		fail(ps, "value expected");
		return false;
	}
	switch (*ps->p) {
	case '{': return container(ps, v, depth, true);
	case '[': return container(ps, v, depth, false);
	case '"':
		v->s = string(ps, &v->len);
		if (!v->s)
			return false;
		v->type = TLM_JV_STR;
		return true;
	case 't': v->type = TLM_JV_BOOL; v->b = true; return literal(ps, "true");
	case 'f': v->type = TLM_JV_BOOL; return literal(ps, "false");
	case 'n': v->type = TLM_JV_NULL; return literal(ps, "null");
	default: return number(ps, v);
	}
}

struct tlm_jv *tlm_json_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	struct parser ps = {(const unsigned char *)buf, (const unsigned char *)buf + len,
			    (const unsigned char *)buf, 0, err, errlen, false};
	struct tlm_jv *v = calloc(1, sizeof *v);
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (value(&ps, v, 0)) {
		ws(&ps);
		if (ps.p != ps.end)
			fail(&ps, "trailing data after the value");
	}
	if (ps.failed) {
		tlm_json_free(v);
		return NULL;
	}
	return v;
}

char *tlm_json_read_file(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	/* read once, to its end: a pipe will do; a device or a directory will not */
	FILE *f = tlm_input_fopen(path, TLM_INPUT_PIPE, err, errlen);
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			if (cap >= max) {
				snprintf(err, errlen, "larger than %zu bytes", max);
				goto bad;
			}
			cap = cap * 2 > max ? max : cap * 2;
			char *b = realloc(buf, cap);
			if (!b)
				break;
			buf = b;
		}
		size_t k = fread(buf + n, 1, cap - n, f);
		n += k;
		if (k == 0) {
			if (ferror(f)) {
				snprintf(err, errlen, "read error");
				goto bad;
			}
			fclose(f);
			*len = n;
			return buf;
		}
	}
	snprintf(err, errlen, "out of memory");
bad:
	free(buf);
	fclose(f);
	return NULL;
}

const struct tlm_jv *tlm_jv_get(const struct tlm_jv *obj, const char *key)
{
	if (!obj || obj->type != TLM_JV_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

const struct tlm_jv *tlm_jv_at(const struct tlm_jv *arr, size_t i)
{
	if (!arr || arr->type != TLM_JV_ARR || i >= arr->n)
		return NULL;
	return &arr->items[i];
}

bool tlm_jv_u64(const struct tlm_jv *v, uint64_t *out)
{
	if (!v || v->type != TLM_JV_NUM || !v->is_int || v->neg)
		return false;
	*out = v->u;
	return true;
}

bool tlm_jv_i64(const struct tlm_jv *v, int64_t *out)
{
	if (!v || v->type != TLM_JV_NUM || !v->is_int)
		return false;
	if (v->neg) {
		*out = v->u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v->u;
		return true;
	}
	if (v->u > INT64_MAX)
		return false;
	*out = (int64_t)v->u;
	return true;
}

bool tlm_jv_num(const struct tlm_jv *v, double *out)
{
	if (!v || v->type != TLM_JV_NUM || !isfinite(v->d))
		return false;
	*out = v->d;
	return true;
}

const char *tlm_jv_str(const struct tlm_jv *v)
{
	return v && v->type == TLM_JV_STR ? v->s : NULL;
}

size_t tlm_jv_len(const struct tlm_jv *v)
{
	return v && (v->type == TLM_JV_ARR || v->type == TLM_JV_OBJ) ? v->n : 0;
}
