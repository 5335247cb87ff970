// SPDX-License-Identifier: MIT
/*
 * The integrity check's hash: MD2 (RFC 1319) written byte-at-a-time, and
 * HMAC over it. See sim_integrity.h for what is hashed.
 */
#include <string.h>

#include "sim_integrity.h"

/* RFC 1319's substitution table (digits of pi). */
static const uint8_t S[256] = {
	41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,
	243, 192, 199, 115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212,
	224, 22,  103, 66,  111, 24,  138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160,
	251, 245, 142, 187, 47,  238, 122, 169, 104, 121, 145, 21,  178, 7,   63,  148, 194, 16,  137,
	11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,  53,  62,  204, 231, 191, 247, 151,
	3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,  170, 198, 79,  184,
	56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,  100,
	113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246,
	28,  70,  97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249,
	206, 186, 197, 234, 38,  44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129,
	77,  82,  106, 220, 55,  200, 108, 193, 171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120,
	136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254, 59,  0,   29,  57,  242, 239, 183, 14,
	102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,  80,  180, 143, 237, 31,
	26,  219, 153, 141, 51,  159, 17,  131, 20,
};

const uint8_t sim_integrity_key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
				       0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};

void sim_md2_byte(struct sim_md2 *m, uint8_t b)
{
	unsigned j = m->n;
	m->x[16 + j] = b;
	m->x[32 + j] = m->x[j] ^ b;
	m->last = m->sum[j] ^= S[b ^ m->last];
	m->n = (uint8_t)((j + 1) & 15);
	if (m->n)
		return;
	/* A whole block: 18 rounds over the 48-byte buffer. */
	unsigned t = 0;
	for (unsigned r = 0; r < 18; r++) {
		for (unsigned k = 0; k < 48; k++)
			t = m->x[k] ^= S[t];
		t = (t + r) & 0xff;
	}
}

void sim_md2_update(struct sim_md2 *m, const void *buf, size_t n, uint8_t mask)
{
	const uint8_t *p = buf;
	for (size_t i = 0; i < n; i++)
		sim_md2_byte(m, p[i] ^ mask);
}

void sim_md2_final(struct sim_md2 *m, uint8_t out[16])
{
	uint8_t pad = (uint8_t)(16 - m->n), sum[16];
	for (unsigned i = 0; i < pad; i++)
		sim_md2_byte(m, pad);
	memcpy(sum, m->sum, 16);
	sim_md2_update(m, sum, 16, 0);
	memcpy(out, m->x, 16);
}

void sim_integrity_compute(const struct sim_integrity_header *h, const struct sim_integrity_device *devs,
			   int ndev, uint64_t out[2])
{
	struct sim_md2 m;
	uint8_t inner[16], digest[16];
	switch (h->version % 10) {
	case 0:
		out[0] = 0x3341181C03CB675Cull, out[1] = 0x8ED383AA1F4CD1E8ull;
		return;
	case 1:
		out[0] = 0x1841181C03CB675Cull, out[1] = 0x8ED383AA1F4CD1E8ull;
		return;
	}
	memset(&m, 0, sizeof(m));
	sim_md2_update(&m, sim_integrity_key, 16, 0x36);
	sim_md2_update(&m, h, sizeof(*h), 0);
	for (int i = 0; i < ndev; i++)
		sim_md2_update(&m, &devs[i], sizeof(devs[i]), 0);
	sim_md2_final(&m, inner);
	memset(&m, 0, sizeof(m));
	sim_md2_update(&m, sim_integrity_key, 16, 0x5c);
	sim_md2_update(&m, inner, 16, 0);
	sim_md2_final(&m, digest);
	memcpy(out, digest, 16);
}
