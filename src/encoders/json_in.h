/* SPDX-License-Identifier: MIT */
/*
 * json_in.h - a small, strict, bounded JSON reader (RFC 8259), for `tlm diff`
 * (which reads `tlm report --format json` files) and the export tests.
 *
 * Strict: exactly one value surrounded by optional whitespace; no comments,
 * trailing commas, leading zeros, NaN, single quotes or raw control
 * characters; strings must be valid UTF-8 and \u escapes must pair their
 * surrogates; an object must not repeat a key. Anything else is an error
 * with its byte offset.
 *
 * Bounded: nesting depth (TLM_JSON_MAX_DEPTH), the number of values
 * (TLM_JSON_MAX_VALUES) and the input size (the caller's, see
 * tlm_json_read_file) are limited, so hostile input costs at most a known
 * amount of memory and stack.
 *
 * Integers are exact: an integer that fits in 64 bits (unsigned, or signed
 * when negative) is kept as such, not as a double.
 */
#ifndef TLM_DIFF_JSON_IN_H
#define TLM_DIFF_JSON_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLM_JSON_MAX_DEPTH 64
#define TLM_JSON_MAX_VALUES (8u << 20)

enum tlm_jv_type { TLM_JV_NULL, TLM_JV_BOOL, TLM_JV_NUM, TLM_JV_STR, TLM_JV_ARR, TLM_JV_OBJ };

struct tlm_jv {
	int type;            /* enum tlm_jv_type */
	bool b;              /* BOOL */
	bool is_int, neg;    /* NUM: an integer with magnitude u (neg: negative) */
	uint64_t u;
	double d;            /* NUM: the value as a double (always set) */
	char *s;             /* STR: decoded UTF-8, NUL-terminated (len excludes it) */
	size_t len;
	size_t n;            /* ARR/OBJ: number of items */
	struct tlm_jv *items;
	char **keys;         /* OBJ: keys[i] names items[i] */
};

/* Parses len bytes. NULL on error, with err = "offset N: what". */
struct tlm_jv *tlm_json_parse(const char *buf, size_t len, char *err, size_t errlen);
void tlm_json_free(struct tlm_jv *v);
/* Reads a whole file of at most max bytes. NULL with err on failure. */
char *tlm_json_read_file(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* Accessors; all accept NULL and the wrong type (they then fail). */
const struct tlm_jv *tlm_jv_get(const struct tlm_jv *obj, const char *key);
const struct tlm_jv *tlm_jv_at(const struct tlm_jv *arr, size_t i);
bool tlm_jv_u64(const struct tlm_jv *v, uint64_t *out);   /* a non-negative integer */
bool tlm_jv_i64(const struct tlm_jv *v, int64_t *out);
bool tlm_jv_num(const struct tlm_jv *v, double *out);
const char *tlm_jv_str(const struct tlm_jv *v);            /* NULL unless STR */
size_t tlm_jv_len(const struct tlm_jv *v);                 /* items of ARR/OBJ, else 0 */

#endif
