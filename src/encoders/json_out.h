/* SPDX-License-Identifier: MIT */
/*
 * json_out.h - a minimal streaming JSON writer: it places commas and colons
 * itself and escapes every string so that any bytes (hostile paths, function
 * names) come out as well-formed JSON: quotes, backslashes and control
 * characters escaped, invalid UTF-8 replaced by U+FFFD, and <, >, &, U+2028,
 * U+2029 escaped so the output can be embedded in HTML or JavaScript.
 * Output is compact (one line).
 */
#ifndef TLM_REPORT_JSON_OUT_H
#define TLM_REPORT_JSON_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TLM__JSON_DEPTH 32

struct tlm__json {
	FILE *f;
	int depth;
	bool need_comma[TLM__JSON_DEPTH];
	bool after_key;
};

void tlm__json_init(struct tlm__json *j, FILE *f);
void tlm__json_obj(struct tlm__json *j);      /* { */
void tlm__json_obj_end(struct tlm__json *j);  /* } */
void tlm__json_arr(struct tlm__json *j);      /* [ */
void tlm__json_arr_end(struct tlm__json *j);  /* ] */
void tlm__json_key(struct tlm__json *j, const char *key);
void tlm__json_str(struct tlm__json *j, const char *s);   /* NULL -> null */
void tlm__json_strn(struct tlm__json *j, const char *s, size_t n);
void tlm__json_u64(struct tlm__json *j, uint64_t v);
void tlm__json_i64(struct tlm__json *j, int64_t v);
/* Fixed decimals; NaN and infinities -> null. */
void tlm__json_dbl(struct tlm__json *j, double v, int decimals);
void tlm__json_bool(struct tlm__json *j, bool v);
void tlm__json_null(struct tlm__json *j);
/* A key and its integer value. */
void tlm__json_ku(struct tlm__json *j, const char *key, uint64_t v);
void tlm__json_ki(struct tlm__json *j, const char *key, int64_t v);
/* Length of the valid UTF-8 sequence at s (1..4 bytes; 0 when invalid, with
 * *bad = the length of the maximal invalid subpart, to replace by one
 * U+FFFD). s[0] must be >= 0x80. Shared with the HTML and folded outputs. */
size_t tlm__utf8_seq(const unsigned char *s, size_t n, size_t *bad);
/* Escapes n bytes of s as the body of a JSON string (no quotes). */
void tlm__json_escape(FILE *f, const char *s, size_t n);

#endif
