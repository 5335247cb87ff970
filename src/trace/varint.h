/* SPDX-License-Identifier: MIT */
/*
 * varint.h - LEB128 varints, zigzag and little-endian fixed-width helpers.
 *
 * Contract: put functions write at most TLM__VARINT_MAX bytes and return the
 * new end; get functions never read at or past `end`, reject encodings longer
 * than 10 bytes or overflowing 64 bits, and return NULL on any error. All
 * arithmetic is unsigned so no input can trigger undefined behaviour.
 */
#ifndef TLM_TRACE_VARINT_H
#define TLM_TRACE_VARINT_H

#include <stdint.h>
#include <string.h>

#define TLM__VARINT_MAX 10

static inline uint8_t *tlm__put_uv(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline const uint8_t *tlm__get_uv(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	/* One-byte values dominate (tags, small ids), so test them first. */
	if (__builtin_expect(p < end && *p < 0x80, 1)) {
		*v = *p;
		return p + 1;
	}
	uint64_t r = 0;
	for (unsigned s = 0; s <= 63; s += 7) {
		if (p >= end)
			return NULL;
		uint8_t b = *p++;
		if (s == 63 && b > 1) /* 10th byte holds only bit 63 */
			return NULL;
		r |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

/* Zigzag maps small signed values (as a wrapped uint64 difference) to small
 * unsigned ones: 0,-1,1,-2 -> 0,1,2,3. */
static inline uint64_t tlm__zz(uint64_t d)
{
	return (d << 1) ^ (0 - (d >> 63));
}

static inline uint64_t tlm__unzz(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

/* Arithmetic shift right of a two's complement value held in a uint64. */
static inline uint64_t tlm__sar(uint64_t d, unsigned s)
{
	return s ? (d >> s) | ((0 - (d >> 63)) << (64 - s)) : d;
}

static inline void tlm__put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void tlm__put_u64(uint8_t *p, uint64_t v)
{
	tlm__put_u32(p, (uint32_t)v);
	tlm__put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t tlm__get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tlm__get_u64(const uint8_t *p)
{
	return (uint64_t)tlm__get_u32(p) | (uint64_t)tlm__get_u32(p + 4) << 32;
}

#endif
