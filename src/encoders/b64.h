/* SPDX-License-Identifier: MIT */
/*
 * b64.h - base64 of a stream of unsigned LEB128 varints, the compact form
 * in which the HTML pages embed their data (the active-memory timeline,
 * the job's merged timeline). Internal.
 */
#ifndef TLM_REPORT_B64_H
#define TLM_REPORT_B64_H

#include <stdint.h>
#include <stdio.h>

struct tlm__b64 {
	FILE *f;
	unsigned char b[3];
	int n;
};

void tlm__b64_byte(struct tlm__b64 *w, unsigned char c);
void tlm__b64_varint(struct tlm__b64 *w, uint64_t v);
/* zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... */
void tlm__b64_svarint(struct tlm__b64 *w, int64_t v);
void tlm__b64_end(struct tlm__b64 *w); /* the last bytes and the padding */

#endif
