/* SPDX-License-Identifier: MIT */
/* b64.c - base64 of varints (b64.h). */
#include <string.h>

#include "encoders/b64.h"

static void quad(struct tlm__b64 *w, int n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char o[4] = {tab[w->b[0] >> 2], tab[((w->b[0] & 3) << 4) | (w->b[1] >> 4)],
		     tab[((w->b[1] & 15) << 2) | (w->b[2] >> 6)], tab[w->b[2] & 63]};
	if (n < 3)
		o[3] = '=';
	if (n < 2)
		o[2] = '=';
	fwrite(o, 1, 4, w->f);
	w->n = 0;
}

void tlm__b64_byte(struct tlm__b64 *w, unsigned char c)
{
	w->b[w->n++] = c;
	if (w->n == 3)
		quad(w, 3);
}

void tlm__b64_end(struct tlm__b64 *w)
{
	if (!w->n)
		return;
	int n = w->n;
	memset(w->b + n, 0, (size_t)(3 - n));
	quad(w, n);
}

void tlm__b64_varint(struct tlm__b64 *w, uint64_t v)
{
	while (v >= 0x80) {
		tlm__b64_byte(w, (unsigned char)(v | 0x80));
		v >>= 7;
	}
	tlm__b64_byte(w, (unsigned char)v);
}

void tlm__b64_svarint(struct tlm__b64 *w, int64_t v)
{
	tlm__b64_varint(w, v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1);
}
