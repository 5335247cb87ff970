/* SPDX-License-Identifier: MIT */
/*
 * pickle_check.c - writes, with src/encoders/pickle_out.c, a pickle of the
 * values the writer must get exactly right; check_pickle.py loads it with
 * Python's pickle and compares it with the values it expects.
 *   pickle_check OUT.pickle
 */
#include <stdint.h>
#include <stdio.h>

#include "encoders/pickle_out.h"

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "wb") : NULL;
	if (!f) {
		fprintf(stderr, "usage: pickle_check OUT.pickle\n");
		return 2;
	}
	struct tlm__pk p;
	tlm__pk_begin(&p, f);
	tlm__pk_dict(&p);
	tlm__pk_str(&p, "ints");
	tlm__pk_list(&p);
	static const int64_t iv[] = {0, 1, 255, 256, 65535, 65536, -1, -128, -129, -32768, INT32_MAX,
				     (int64_t)INT32_MAX + 1, INT32_MIN, (int64_t)INT32_MIN - 1, INT64_MAX, INT64_MIN,
				     0x7fffffffffll, -0x800000000ll};
	for (size_t i = 0; i < sizeof iv / sizeof *iv; i++)
		tlm__pk_int(&p, iv[i]);
	tlm__pk_end(&p);
	tlm__pk_str(&p, "uints");
	tlm__pk_list(&p);
	static const uint64_t uv[] = {0, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x7f0012345678ull,
				      0x8000000000000000ull, UINT64_MAX};
	for (size_t i = 0; i < sizeof uv / sizeof *uv; i++)
		tlm__pk_uint(&p, uv[i]);
	tlm__pk_end(&p);
	tlm__pk_str(&p, "strs");
	tlm__pk_list(&p);
	tlm__pk_str(&p, "");
	tlm__pk_str(&p, "plain");
	tlm__pk_str(&p, "caf\xc3\xa9 \xe2\x86\x90 \xf0\x9f\x98\x80");  /* valid UTF-8 */
	tlm__pk_str(&p, "bad\xff byte");                             /* invalid byte */
	tlm__pk_str(&p, "cut \xe2\x86");                             /* truncated sequence */
	tlm__pk_str(&p, "surrogate \xed\xa0\x80");                    /* an encoded surrogate */
	tlm__pk_str(&p, "overlong \xc0\xaf");
	tlm__pk_str(&p, "plain");                                     /* interned: fetched from the memo */
	tlm__pk_end(&p);
	tlm__pk_str(&p, "many");
	tlm__pk_list(&p); /* past one batch of 1000 */
	for (int i = 0; i < 2500; i++)
		tlm__pk_int(&p, i);
	tlm__pk_end(&p);
	tlm__pk_str(&p, "shared");
	tlm__pk_list(&p);
	tlm__pk_list(&p);
	tlm__pk_int(&p, 7);
	uint32_t id = tlm__pk_end_memo(&p);
	for (int i = 0; i < 1200; i++) /* memo gets across batch boundaries */
		tlm__pk_get(&p, id);
	tlm__pk_end(&p);
	tlm__pk_str(&p, "misc");
	tlm__pk_tuple(&p);
	tlm__pk_bool(&p, true);
	tlm__pk_bool(&p, false);
	tlm__pk_none(&p);
	tlm__pk_float(&p, 0.1);
	tlm__pk_tuple(&p);
	tlm__pk_end(&p);
	tlm__pk_end(&p);
	tlm__pk_end(&p);
	int rc = tlm__pk_finish(&p);
	return rc || fclose(f) ? 1 : 0;
}
