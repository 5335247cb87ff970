/* SPDX-License-Identifier: MIT */
/*
 * pyline.c - the line of an instruction from a code object's line table, as
 * CPython 3.8-3.13 lay it out (co_lnotab <= 3.9, 3.10's co_linetable, the
 * 3.11+ location table). Reads only the bytes object's memory: called in the
 * hook without the GIL (pywalk.c), each result cached by the caller.
 */
#include "recording/stack/pystack.h"

int32_t tlm__py_decode_line(int kind, uint64_t lines, int32_t first, int64_t off)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)(lines + 32); /* PyBytesObject data */
	uint64_t n = *(const volatile uint64_t *)(uintptr_t)(lines + 16);     /* ob_size */
	if (n > (1u << 24))
		return 0;
	const uint8_t *end = p + n;
	int32_t line = first;
	if (kind == 0) { /* co_lnotab: (addr incr, signed line incr) pairs */
		int64_t addr = 0;
		for (; p + 1 < end; p += 2) {
			addr += p[0];
			if (addr > off)
				break;
			line += (int8_t)p[1];
		}
		return line;
	}
	if (kind == 1) { /* 3.10: (byte length, line delta | -128 = none) */
		int64_t start, stop = 0;
		int32_t cur = -1;
		for (; p + 1 < end; p += 2) {
			start = stop;
			stop += p[0];
			if ((int8_t)p[1] == -128)
				cur = -1;
			else
				cur = (line += (int8_t)p[1]);
			if (start <= off && off < stop)
				return cur < 0 ? 0 : cur;
		}
		return 0;
	}
	/* 3.11+ location table */
	int64_t addr = 0;
	while (p < end) {
		uint8_t b = *p++;
		if (!(b & 0x80))
			return 0; /* lost sync */
		unsigned code = (b >> 3) & 15;
		int64_t len = (b & 7) + 1;
		int32_t delta = 0;
		bool none = false;
		if (code == 15) {
			none = true;
		} else if (code == 14 || code == 13) {
			uint32_t v = 0, sh = 0;
			uint8_t x;
			do {
				if (p >= end)
					return 0;
				x = *p++;
				v |= (uint32_t)(x & 63) << sh;
				sh += 6;
			} while ((x & 64) && sh < 32);
			delta = (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
			if (code == 14) /* end line, column, end column */
				for (int k = 0; k < 3; k++)
					do {
						if (p >= end)
							return 0;
						x = *p++;
					} while (x & 64);
		} else if (code >= 10) {
			delta = (int32_t)code - 10;
			p += 2;
		} else {
			p += 1;
		}
		line += delta;
		if (addr <= off && off < addr + len)
			return none ? 0 : line;
		addr += len;
	}
	return 0;
}

