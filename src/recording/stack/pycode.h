/* SPDX-License-Identifier: MIT */
/*
 * pycode.h - a thread's cache of the code objects its Python walks meet
 * (pywalk.c): each one's file and name copied out of the interpreter once,
 * its signature, and the lines of its instruction offsets.
 *
 * Contract: tlm__pycode_lookup() finds a live code object's entry, or
 * decodes one, without an interpreter call or an allocation; an entry found
 * again is checked to be the same code (unless no code object died since it
 * was last found: tlm__py_code_deaths, deaths below), and one that is not
 * is decoded anew and bumps epoch, so that whatever holds an entry's index
 * from before knows. Each entry has a serial, never reused; (serial, line)
 * names a frame. Full tables: the caller resets (tlm__pycodes_reset) and
 * starts over.
 */
#ifndef TLM_PYCODE_H
#define TLM_PYCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/stack/pystack.h"
#include "recording/stack/pystack_int.h"

#define TLM__PY_NCODE 1024u    /* open addressing; reset at half full */
#define TLM__PY_NLINE 4096u    /* direct mapped */
#define TLM__PY_STR_ARENA (256u * 1024u)

/* What a code's entry is decoded from, as read from the code object: its
 * file, name and line table objects (the table is read again on a line
 * cache miss), and what tells a new object at a freed one's address from
 * the old: the file name's and line table's lengths, the file name's last 8
 * bytes, the line table's first and last 8, the first line. Addresses alone
 * do not: code compiled again and again (exec, torch.fx, dataclasses) gets
 * its file, name and line table at the freed ones' addresses too
 * (tests/python/regen.py: 76-79 of 80 rounds), and CPython leaves the file
 * name's hash unset (3.8-3.12) and the table's too (3.8-3.9), so the
 * contents are read. Not the whole content: two codes at one address whose
 * three objects share their addresses and all of these but differ inside
 * the file name or the line table would still be taken one for the other.
 * Compared field by field, each a load and a compare (a hash of them cost
 * twice as much on the walk). */
struct tlm__code_sig {
	uint64_t file, name, lines;
	uint64_t flen, llen;       /* the file name's length (characters), the line table's (bytes) */
	uint64_t ftail, lhead, ltail;
	uint32_t ftail_off;        /* where ftail is read, from file */
	int32_t first;
};

struct tlm__code_ent {
	uint64_t code;        /* key */
	uint64_t seen;        /* tlm__py_code_deaths when last found to be this code */
	struct tlm__code_sig sig;
	uint32_t serial;      /* 0 = empty */
	uint32_t soff;        /* strings in the arena: file then name */
	uint16_t flen, nlen;
};
struct tlm__line_ent {
	uint32_t serial;
	int32_t off;
	int32_t line;
};

struct tlm__pycodes {
	uint64_t deaths;       /* tlm__py_code_deaths as the current walk read it */
	uint32_t epoch;        /* bumped when an entry is replaced by another code */
	uint32_t next_serial, ncode, str_used;
	struct tlm__code_ent code[TLM__PY_NCODE];
	struct tlm__line_ent line[TLM__PY_NLINE];
	char str[TLM__PY_STR_ARENA];
};

/* Empties the tables (serials go on counting). A zeroed struct is empty too. */
void tlm__pycodes_reset(struct tlm__pycodes *c) TLM_HIDDEN;

/* The entry of a live code object (its type checked by the caller), decoded
 * on a miss; UINT32_MAX when the tables are full, UINT32_MAX - 1 when the
 * code cannot be decoded (its file or name not a compact str, its lines not
 * bytes). */
uint32_t tlm__pycode_lookup(struct tlm__pycodes *c, uint64_t code) TLM_HIDDEN;

/* The line of instruction offset off in entry e (0: none). */
int32_t tlm__pycode_line(struct tlm__pycodes *c, const struct tlm__code_ent *e, int64_t off) TLM_HIDDEN;

/* The 8 bytes ending n bytes into data, or the first 8 when n is shorter:
 * then they run past the string or table into its allocation (a str's or
 * bytes' data starts 32 or more bytes into a block of at least data + n + 1
 * bytes rounded up to 16), bytes that do not change while it lives. */
static inline uint64_t tlm__py_tail_at(uint64_t data, uint64_t n)
{
	return data + (n >= 8 ? n : 8) - 8;
}

/* Whether a code object with these objects has signature g; the lengths
 * first, so the tails are read only where g's were: inside objects as long
 * (a file name of as many characters but wider ones is longer still; of
 * narrower ones, in the same allocation's size class, or past a malloc'd
 * one's end in the heap, never unmapped). */
static inline bool tlm__code_sig_same(uint64_t code, uint64_t file, uint64_t name, uint64_t lines, const struct tlm__code_sig *g)
{
	return file == g->file && lines == g->lines && name == g->name && tlm__py_rd64(file, 16) == g->flen &&
	       tlm__py_rd64(lines, 16) == g->llen && (int32_t)tlm__py_rd32(code, tlm__pyo.co_first) == g->first &&
	       tlm__py_rd64u(file, g->ftail_off) == g->ftail && tlm__py_rd64(lines, 32) == g->lhead &&
	       tlm__py_rd64u(tlm__py_tail_at(lines + 32, g->llen), 0) == g->ltail;
}

#endif
