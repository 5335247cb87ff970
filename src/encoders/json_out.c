/* SPDX-License-Identifier: MIT */
/* json_out.c - the JSON writer and string escaping, see json_out.h. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "encoders/json_out.h"

void tlm__json_init(struct tlm__json *j, FILE *f)
{
	memset(j, 0, sizeof *j);
	j->f = f;
}

/* Before a value: a comma unless it is the first in its container or follows
 * a key. */
static void value(struct tlm__json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0 && j->depth <= TLM__JSON_DEPTH) {
		if (j->need_comma[j->depth - 1])
			fputc(',', j->f);
		j->need_comma[j->depth - 1] = true;
	}
}

static void open_(struct tlm__json *j, char c)
{
	value(j);
	fputc(c, j->f);
	if (j->depth < TLM__JSON_DEPTH)
		j->need_comma[j->depth] = false;
	j->depth++;
}

static void close_(struct tlm__json *j, char c)
{
	fputc(c, j->f);
	j->depth--;
}

void tlm__json_obj(struct tlm__json *j) { open_(j, '{'); }
void tlm__json_obj_end(struct tlm__json *j) { close_(j, '}'); }
void tlm__json_arr(struct tlm__json *j) { open_(j, '['); }
void tlm__json_arr_end(struct tlm__json *j) { close_(j, ']'); }

void tlm__json_key(struct tlm__json *j, const char *key)
{
	value(j);
	fputc('"', j->f);
	tlm__json_escape(j->f, key, strlen(key));
	fputs("\":", j->f);
	j->after_key = true;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid; *bad
 * gets the length of the maximal invalid subpart to replace by one U+FFFD. */
size_t tlm__utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned c = s[0];
	size_t need;
	unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i <= need; i++) {
		unsigned b = i < n ? s[i] : 0;
		unsigned l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
		if (i >= n || b < l || b > h) {
			*bad = i;
			return 0;
		}
	}
	return need + 1;
}

void tlm__json_escape(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t bad = 1, k = tlm__utf8_seq(s + i, n - i, &bad);
			if (!k) {
				fputs("\\ufffd", f);
				i += bad;
			} else if (k == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
				/* a C1 control (0x9b is CSI to some terminals): escaped, so
				 * that the JSON on a terminal is inert and still exact */
				fprintf(f, "\\u%04x", s[i + 1]);
				i += 2;
			} else if (k == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
				fputs(s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", f);
				i += 3;
			} else {
				fwrite(s + i, 1, k, f);
				i += k;
			}
			continue;
		}
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '<': fputs("\\u003c", f); break;
		case '>': fputs("\\u003e", f); break;
		case '&': fputs("\\u0026", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc((int)c, f);
		}
		i++;
	}
}

void tlm__json_strn(struct tlm__json *j, const char *s, size_t n)
{
	value(j);
	fputc('"', j->f);
	tlm__json_escape(j->f, s, n);
	fputc('"', j->f);
}

void tlm__json_str(struct tlm__json *j, const char *s)
{
	if (!s)
		tlm__json_null(j);
	else
		tlm__json_strn(j, s, strlen(s));
}

void tlm__json_u64(struct tlm__json *j, uint64_t v)
{
	value(j);
	fprintf(j->f, "%" PRIu64, v);
}

void tlm__json_i64(struct tlm__json *j, int64_t v)
{
	value(j);
	fprintf(j->f, "%" PRId64, v);
}

void tlm__json_dbl(struct tlm__json *j, double v, int decimals)
{
	if (!isfinite(v)) {
		tlm__json_null(j);
		return;
	}
	value(j);
	if (v == 0)
		v = 0; /* no "-0.000" */
	fprintf(j->f, "%.*f", decimals, v);
}

void tlm__json_bool(struct tlm__json *j, bool v)
{
	value(j);
	fputs(v ? "true" : "false", j->f);
}

void tlm__json_null(struct tlm__json *j)
{
	value(j);
	fputs("null", j->f);
}

void tlm__json_ku(struct tlm__json *j, const char *key, uint64_t v)
{
	tlm__json_key(j, key);
	tlm__json_u64(j, v);
}

void tlm__json_ki(struct tlm__json *j, const char *key, int64_t v)
{
	tlm__json_key(j, key);
	tlm__json_i64(j, v);
}
