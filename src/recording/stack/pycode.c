/* SPDX-License-Identifier: MIT */
/*
 * pycode.c - the code objects a thread's Python walks meet (pycode.h): read
 * from the interpreter's memory without the GIL, as the walk is
 * (pywalk.c), each once.
 */
#include <string.h>

#include "recording/stack/pycode.h"

void tlm__pycodes_reset(struct tlm__pycodes *c)
{
	memset(c->code, 0, sizeof c->code);
	memset(c->line, 0, sizeof c->line);
	c->ncode = c->str_used = 0; /* serials go on: 0 is skipped where they are given */
}

/* A str object copied as UTF-8 (truncated to max bytes); false if not a compact str. */
static bool copy_str(uint64_t s, char *out, uint32_t max, uint16_t *len)
{
	if (!tlm__py_is_type(s, tlm__py_unicode_type))
		return false;
	uint64_t n = tlm__py_rd64(s, 16);
	uint32_t st = tlm__py_rd32(s, 32);
	unsigned kind = (st >> 2) & 7, compact = (st >> 5) & 1, ascii = (st >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || n > (1u << 20))
		return false;
	const uint8_t *d = (const uint8_t *)(uintptr_t)(s + (ascii ? tlm__pyo.uni_ascii : tlm__pyo.uni_compact));
	uint32_t o = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t ch = kind == 1 ? d[i] : kind == 2 ? ((const uint16_t *)d)[i] : ((const uint32_t *)d)[i];
		uint8_t b[4];
		uint32_t k;
		if (ch < 0x80) {
			b[0] = (uint8_t)ch;
			k = 1;
		} else if (ch < 0x800) {
			b[0] = (uint8_t)(0xc0 | ch >> 6);
			b[1] = (uint8_t)(0x80 | (ch & 63));
			k = 2;
		} else if (ch < 0x10000) {
			b[0] = (uint8_t)(0xe0 | ch >> 12);
			b[1] = (uint8_t)(0x80 | ((ch >> 6) & 63));
			b[2] = (uint8_t)(0x80 | (ch & 63));
			k = 3;
		} else {
			b[0] = (uint8_t)(0xf0 | (ch >> 18 & 7));
			b[1] = (uint8_t)(0x80 | ((ch >> 12) & 63));
			b[2] = (uint8_t)(0x80 | ((ch >> 6) & 63));
			b[3] = (uint8_t)(0x80 | (ch & 63));
			k = 4;
		}
		if (o + k > max)
			break;
		memcpy(out + o, b, k);
		o += k;
	}
	*len = (uint16_t)o;
	return true;
}

/* The signature of a code object whose file and name are compact str
 * objects and whose line table is a bytes object (checked by the caller). */
static void sig_read(uint64_t code, uint64_t file, uint64_t name, uint64_t lines, struct tlm__code_sig *g)
{
	uint64_t n = tlm__py_rd64(file, 16);
	uint32_t st = tlm__py_rd32(file, 32);
	uint64_t data = file + ((st >> 6) & 1 ? tlm__pyo.uni_ascii : tlm__pyo.uni_compact);
	uint64_t at = tlm__py_tail_at(data, n * ((st >> 2) & 7));
	uint64_t ln = tlm__py_rd64(lines, 16); /* PyBytesObject: ob_size at 16, ob_sval at 32 */
	*g = (struct tlm__code_sig){
		.file = file,
		.name = name,
		.lines = lines,
		.flen = n,
		.llen = ln,
		.ftail = tlm__py_rd64u(at, 0),
		.lhead = tlm__py_rd64(lines, 32),
		.ltail = tlm__py_rd64u(tlm__py_tail_at(lines + 32, ln), 0),
		.ftail_off = (uint32_t)(at - file),
		.first = (int32_t)tlm__py_rd32(code, tlm__pyo.co_first),
	};
}

uint32_t tlm__pycode_lookup(struct tlm__pycodes *c, uint64_t code)
{
	uint64_t file = tlm__py_rd64(code, tlm__pyo.co_file), name = tlm__py_rd64(code, tlm__pyo.co_name), lines = tlm__py_rd64(code, tlm__pyo.co_lines);
	uint32_t h = (uint32_t)((code >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (TLM__PY_NCODE - 1);
	for (uint32_t i = h;; i = (i + 1) & (TLM__PY_NCODE - 1)) {
		struct tlm__code_ent *e = &c->code[i];
		if (!e->serial) {
			h = i;
			break;
		}
		if (e->code == code) {
			if (TLM_LIKELY(tlm__py_deaths_on && e->seen == c->deaths))
				return i;
			if (TLM_LIKELY(tlm__code_sig_same(code, file, name, lines, &e->sig))) {
				e->seen = c->deaths;
				return i;
			}
			h = i; /* a new code object at a freed one's address: decode again */
			c->epoch++;
			break;
		}
	}
	if (c->ncode * 2 >= TLM__PY_NCODE || c->str_used + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX > TLM__PY_STR_ARENA)
		return UINT32_MAX; /* full: the caller resets and retries */
	/* a hit's objects are its live code's, as the entry's were when read */
	if (!tlm__py_is_type(file, tlm__py_unicode_type) || !(tlm__py_rd32(file, 32) >> 5 & 1) ||
	    !tlm__py_is_type(name, tlm__py_unicode_type) || !tlm__py_is_type(lines, tlm__py_bytes_type))
		return UINT32_MAX - 1; /* not a compact str (copy_str refuses it too), or not bytes */
	struct tlm__code_ent e = {.code = code, .seen = c->deaths};
	sig_read(code, file, name, lines, &e.sig);
	e.soff = c->str_used;
	if (!copy_str(file, c->str + e.soff, TLM__PY_FILE_MAX, &e.flen) ||
	    !copy_str(name, c->str + e.soff + e.flen, TLM__PY_NAME_MAX, &e.nlen))
		return UINT32_MAX - 1;
	e.serial = c->next_serial++;
	if (!e.serial)
		e.serial = c->next_serial++;
	c->str_used += e.flen + e.nlen;
	if (!c->code[h].serial)
		c->ncode++;
	c->code[h] = e;
	return h;
}

int32_t tlm__pycode_line(struct tlm__pycodes *c, const struct tlm__code_ent *e, int64_t off)
{
	if (off < 0 || off > (1 << 28))
		return 0;
	uint32_t h = (uint32_t)((e->serial * 0x9e3779b1u) ^ (uint32_t)off * 0x85ebca6bu) & (TLM__PY_NLINE - 1);
	struct tlm__line_ent *l = &c->line[h];
	if (l->serial == e->serial && l->off == off)
		return l->line;
	int32_t line = tlm__py_decode_line(tlm__pyo.table_kind, e->sig.lines, e->sig.first, off);
	*l = (struct tlm__line_ent){e->serial, (int32_t)off, line};
	return line;
}
