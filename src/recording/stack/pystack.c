/* SPDX-License-Identifier: MIT */
/*
 * pystack.c - Python frames of the calling thread, read in the hook.
 *
 * Why no GIL and no interpreter call: the hook may run with an allocator
 * mutex held, so taking the GIL could deadlock; the thread reading its own
 * frame chain is the only one that can change it, so the walk is stable
 * while we are in the hook. Facts and offsets: ../shared notes, summarised in
 * docs/recording.md ("Python stacks").
 *
 * Set-up (once, first event after Py_IsInitialized): the interpreter's
 * symbols are looked up with dlsym(RTLD_DEFAULT), else in a loaded libpython
 * (RTLD_LOCAL), the version picks an offset table (3.13: _Py_DebugOffsets,
 * checked by its cookie and version), and the first frame seen is checked
 * against PyCode_Type / PyUnicode_Type / PyBytes_Type. Anything unexpected:
 * no Python stacks for the rest of the run, said once.
 *
 * Per capture: the top frame is read from the thread state, the chain is
 * walked (at most 256 hops, pointers checked for alignment and range, each
 * code object's type checked, the interpreter's own entry and __init__ shim
 * frames skipped, a stack past 64 frames cut with a marker frame, see
 * pystack.h), and each code object is looked up in a
 * per-thread cache keyed by its address and validated by its filename,
 * qualname and line-table pointers; the line comes from a per-thread cache
 * keyed by (decoded code, instruction offset), decoded by pyline.c. A miss decodes strings (copied)
 * or the line table once; a hop read as the last walk's reuses its entry
 * and line (struct hop). The (native stack, frames) pair is interned to a
 * per-thread id; a new one is sent to the writer as a definition with the
 * strings inline.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "recording/config.h"
#include "recording/log.h"
#include "recording/realsym.h"
#include "recording/stack/pystack.h"
#include "recording/stack/stack.h"
#include "recording/stack/pystack_int.h"
#include "tlm/event.h"

static _Atomic int validated;       /* 0 unknown, 1 checked, -1 failed */

/* ---- per-thread cache -------------------------------------------------------- */

#define NCODE 1024u    /* open addressing; reset at half full */
#define NLINE 4096u    /* direct mapped */
#define KEY_ARENA (64u * 1024u)
#define STR_ARENA (256u * 1024u)
#define SCRATCH (TLM__PY_MAX_FRAMES * (8u + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX))

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
struct code_sig {
	uint64_t file, name, lines;
	uint64_t flen, llen;       /* the file name's length (characters), the line table's (bytes) */
	uint64_t ftail, lhead, ltail;
	uint32_t ftail_off;        /* where ftail is read, from file */
	int32_t first;
};

struct code_ent {
	uint64_t code;        /* key */
	uint64_t seen;        /* tlm__py_code_deaths when last found to be this code */
	struct code_sig sig;
	uint32_t serial;      /* 0 = empty */
	uint32_t soff;        /* strings in the arena: file then name */
	uint16_t flen, nlen;
};
struct line_ent {
	uint32_t serial;
	int32_t off;
	int32_t line;
};
struct mstack {
	uint64_t hash;
	uint32_t id, n, off; /* keys in the key arena */
};

/* One hop of the last walk, as read. A hop that reads the same code object
 * as the last walk's hop at the same depth, with the same signature (the
 * code cache's own validation, kept here so the cache entry is not read
 * again), is that code; with the same instruction word as well, its
 * interned key (serial, line) holds: the block allocations and frees one
 * Python line makes come one after another from one chain, and the next
 * line's differ in the innermost frame's word only. The frame's own address
 * does not matter: the key is a function of the code and the offset. A walk
 * equal to the last one at every hop reuses its interned id as well. The
 * signature (the code cache's own validation) is kept apart: a walk after
 * which no code object died does not read it (pycache.deaths). */
#define MEMO_HOPS 96u
struct hop {
	uint64_t code, raw;  /* the code object; the instruction word as read (offset, or pointer) */
	uint64_t key;        /* serial << 32 | line */
	uint32_t ci;         /* index into code[]; UINT32_MAX: a hop the walk skipped */
};

struct pycache {
	uint32_t gen_native;   /* native intern generation the merged ids were made under */
	/* the last walk (memo_hops 0: none usable) and, per kind of native id
	 * (0: none, as a block free's; else an allocation's), the merged id that
	 * walk was last interned to */
	uint32_t memo_hops, memo_epoch;
	uint64_t memo_ts;
	/* tlm__py_code_deaths as the current walk read it at its start, and as
	 * the last walk did: no code object died between them when equal (and
	 * counted), so the last walk's codes are those at their addresses now */
	uint64_t deaths, memo_deaths;
	/* bumped when a code entry is replaced (a new code object at a freed
	 * one's address): the hops of earlier walks may name the old entry */
	uint32_t code_epoch;
	uint32_t memo_sid[2], memo_id[2];
	struct hop hop[MEMO_HOPS];
	struct code_sig hop_sig[MEMO_HOPS]; /* each hop's code's signature, as in its entry */
	uint32_t next_serial, ncode, next_id, key_used, str_used;
	struct code_ent code[NCODE];
	struct line_ent line[NLINE];
	struct mstack ms[2 * TLM__PY_STACKS];
	uint64_t keys[KEY_ARENA];
	char str[STR_ARENA];
	/* the pending definition */
	uint32_t pend_id, pend_native, pend_n, pend_bytes;
	uint8_t scratch[SCRATCH];
	/* the current capture: each frame's key as interned (its code's serial
	 * and its line), taken while the walk has the code entry at hand */
	struct {
		uint64_t key;  /* serial << 32 | line */
		uint32_t ci;   /* index into code[] */
	} fr[TLM__PY_MAX_FRAMES];
};

static void reset(struct pycache *c)
{
	memset(c->code, 0, sizeof c->code);
	memset(c->line, 0, sizeof c->line);
	memset(c->ms, 0, sizeof c->ms);
	c->memo_hops = 0;
	c->memo_id[0] = c->memo_id[1] = 0;
	c->ncode = c->key_used = c->str_used = 0;
	c->next_id = 1;
}

void tlm__py_forget(struct tlm__ring *r)
{
	if (r->py)
		reset(r->py);
}

static struct pycache *cache_of(struct tlm__ring *r)
{
	if (TLM_LIKELY(r->py != NULL))
		return r->py;
	void *m = mmap(NULL, sizeof(struct pycache), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct pycache *c = m;
	c->next_serial = 1;
	reset(c);
	r->py = c;
	return c;
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

/* The 8 bytes ending n bytes into data, or the first 8 when n is shorter:
 * then they run past the string or table into its allocation (a str's or
 * bytes' data starts 32 or more bytes into a block of at least data + n + 1
 * bytes rounded up to 16), bytes that do not change while it lives. */
static inline uint64_t tail_at(uint64_t data, uint64_t n)
{
	return data + (n >= 8 ? n : 8) - 8;
}

/* The signature of a code object whose file and name are compact str
 * objects and whose line table is a bytes object (checked by the caller). */
static void sig_read(uint64_t code, uint64_t file, uint64_t name, uint64_t lines, struct code_sig *g)
{
	uint64_t n = tlm__py_rd64(file, 16);
	uint32_t st = tlm__py_rd32(file, 32);
	uint64_t data = file + ((st >> 6) & 1 ? tlm__pyo.uni_ascii : tlm__pyo.uni_compact);
	uint64_t at = tail_at(data, n * ((st >> 2) & 7));
	uint64_t ln = tlm__py_rd64(lines, 16); /* PyBytesObject: ob_size at 16, ob_sval at 32 */
	*g = (struct code_sig){
		.file = file,
		.name = name,
		.lines = lines,
		.flen = n,
		.llen = ln,
		.ftail = tlm__py_rd64u(at, 0),
		.lhead = tlm__py_rd64(lines, 32),
		.ltail = tlm__py_rd64u(tail_at(lines + 32, ln), 0),
		.ftail_off = (uint32_t)(at - file),
		.first = (int32_t)tlm__py_rd32(code, tlm__pyo.co_first),
	};
}

/* Whether a code object with these objects has signature g; the lengths
 * first, so the tails are read only where g's were: inside objects as long
 * (a file name of as many characters but wider ones is longer still; of
 * narrower ones, in the same allocation's size class, or past a malloc'd
 * one's end in the heap, never unmapped). */
static inline bool sig_same(uint64_t code, uint64_t file, uint64_t name, uint64_t lines, const struct code_sig *g)
{
	return file == g->file && lines == g->lines && name == g->name && tlm__py_rd64(file, 16) == g->flen &&
	       tlm__py_rd64(lines, 16) == g->llen && (int32_t)tlm__py_rd32(code, tlm__pyo.co_first) == g->first &&
	       tlm__py_rd64u(file, g->ftail_off) == g->ftail && tlm__py_rd64(lines, 32) == g->lhead &&
	       tlm__py_rd64u(tail_at(lines + 32, g->llen), 0) == g->ltail;
}

/* The cache entry of a code object, decoded on a miss; UINT32_MAX if unusable. */
static uint32_t code_lookup(struct pycache *c, uint64_t code)
{
	uint64_t file = tlm__py_rd64(code, tlm__pyo.co_file), name = tlm__py_rd64(code, tlm__pyo.co_name), lines = tlm__py_rd64(code, tlm__pyo.co_lines);
	uint32_t h = (uint32_t)((code >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (NCODE - 1);
	for (uint32_t i = h;; i = (i + 1) & (NCODE - 1)) {
		struct code_ent *e = &c->code[i];
		if (!e->serial) {
			h = i;
			break;
		}
		if (e->code == code) {
			if (TLM_LIKELY(tlm__py_deaths_on && e->seen == c->deaths))
				return i;
			if (TLM_LIKELY(sig_same(code, file, name, lines, &e->sig))) {
				e->seen = c->deaths;
				return i;
			}
			h = i; /* a new code object at a freed one's address: decode again */
			c->code_epoch++;
			break;
		}
	}
	if (c->ncode * 2 >= NCODE || c->str_used + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX > STR_ARENA)
		return UINT32_MAX; /* full: the caller resets and retries */
	/* a hit's objects are its live code's, as the entry's were when read */
	if (!tlm__py_is_type(file, tlm__py_unicode_type) || !(tlm__py_rd32(file, 32) >> 5 & 1) ||
	    !tlm__py_is_type(name, tlm__py_unicode_type) || !tlm__py_is_type(lines, tlm__py_bytes_type))
		return UINT32_MAX - 1; /* not a compact str (copy_str refuses it too), or not bytes */
	struct code_ent e = {.code = code, .seen = c->deaths};
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

static int32_t line_of(struct pycache *c, const struct code_ent *e, int64_t off)
{
	if (off < 0 || off > (1 << 28))
		return 0;
	uint32_t h = (uint32_t)((e->serial * 0x9e3779b1u) ^ (uint32_t)off * 0x85ebca6bu) & (NLINE - 1);
	struct line_ent *l = &c->line[h];
	if (l->serial == e->serial && l->off == off)
		return l->line;
	int32_t line = tlm__py_decode_line(tlm__pyo.table_kind, e->sig.lines, e->sig.first, off);
	*l = (struct line_ent){e->serial, (int32_t)off, line};
	return line;
}

/* A frame the interpreter made for itself, not the user's code: the C-stack
 * entry frame under every C->Python call (3.12-3.13, owner 3) and the __init__
 * shim of specialised class calls (3.13: its code carries CO_NO_MONITORING_EVENTS).
 * Showing either would split one allocation line into several sites. */
static inline bool interp_frame(uint64_t f, uint64_t code)
{
	if (tlm__pyo.skip_cstack && tlm__py_rd8(f, tlm__pyo.f_owner) == 3)
		return true;
	return tlm__pyo.shim_flags && tlm__py_is_type(code, tlm__py_code_type) && (tlm__py_rd32(code, tlm__pyo.co_flags) & tlm__pyo.shim_flags);
}

static inline uint64_t top_frame(uint64_t ts)
{
	uint64_t f = tlm__py_rd64(ts, tlm__pyo.ts_frame);
	if (tlm__pyo.cframe_cur >= 0)
		f = tlm__py_ptr_ok(f) ? tlm__py_rd64(f, (uint32_t)tlm__pyo.cframe_cur) : 0;
	return f;
}

/* The instruction offset of a frame's instruction word as read: an offset
 * (3.8-3.10) or a pointer into the code's bytecode (3.11+). The walk
 * compares the word as read and turns it into an offset only when it
 * differs from the last walk's. */
static inline int64_t instr_off(uint64_t raw, uint64_t code, int kind)
{
	if (kind == 0)
		return (int32_t)(uint32_t)raw;
	if (kind == 1)
		return (int64_t)(int32_t)(uint32_t)raw * 2;
	/* a shift, not / 2: GCC emitted a 64-bit idiv for it (9 % of the walk's perf samples on GPT-2) */
	return (int64_t)(raw - (code + tlm__pyo.co_code)) >> 1;
}

/* A hop the last walk did not read so (or skipped): the frame read afresh
 * into hop i (when kept: i < MEMO_HOPS) and, if it is the user's code, into
 * c->fr[*n]. Returns false when the code cache is full (the caller resets
 * and retries). Out of line: the walk's loop keeps its registers for the
 * usual hop. */
static __attribute__((noinline)) bool new_hop(struct pycache *c, uint32_t i, uint64_t f, uint64_t code, uint64_t raw, int *n)
{
	struct hop e = {.code = code, .raw = raw, .ci = UINT32_MAX};
	if (!interp_frame(f, code) && tlm__py_is_type(code, tlm__py_code_type)) {
		uint32_t ci = code_lookup(c, code);
		if (ci == UINT32_MAX)
			return false;
		if (ci != UINT32_MAX - 1) {
			const struct code_ent *ce = &c->code[ci];
			int32_t line = line_of(c, ce, instr_off(raw, code, tlm__pyo.instr_kind));
			e = (struct hop){code, raw, (uint64_t)ce->serial << 32 | (uint32_t)line, ci};
			if (i < MEMO_HOPS)
				c->hop_sig[i] = ce->sig;
			c->fr[*n].key = e.key;
			c->fr[*n].ci = ci;
			++*n;
		}
	}
	if (i < MEMO_HOPS)
		c->hop[i] = e;
	return true;
}

struct frame_off {
	uint64_t back, code, instr, mask; /* mask: the instruction word's bits */
};

/* In a walk after which no code object died (walk): from hop i on (up to
 * end, which is at most TLM__PY_MAX_FRAMES), the hops that read as the last
 * walk's, code and instruction word, their keys into c->fr from n on.
 * Returns how many; *fp becomes the frame after them. Its own function, so
 * that the loop's values stay in registers (inside walk, GCC spilled them). */
static __attribute__((noinline)) uint32_t same_hops(struct pycache *c, uint32_t i, uint32_t end, int n, uint64_t *fp,
						    const struct frame_off *o)
{
	const uint64_t back = o->back, ocode = o->code, instr = o->instr, mask = o->mask;
	const struct hop *h = &c->hop[i], *hend = &c->hop[end];
	__typeof__(&c->fr[0]) out = &c->fr[n];
	uint64_t f = *fp;
	while (h < hend && tlm__py_ptr_ok(f)) {
		if (tlm__py_rd64(f, (uint32_t)ocode) != h->code || (tlm__py_rd64(f, (uint32_t)instr) & mask) != h->raw ||
		    h->ci == UINT32_MAX)
			break;
		out->key = h->key;
		out->ci = h->ci;
		out++;
		h++;
		f = tlm__py_rd64(f, (uint32_t)back);
	}
	*fp = f;
	return (uint32_t)(h - &c->hop[i]);
}

/* In a walk after which no code object died (walk), hop i, whose code is
 * not the last walk's there, or which that walk skipped: the count of
 * frames after it (n before it), -1 when the code cache is full. */
static __attribute__((noinline)) int other_hop(struct pycache *c, uint32_t i, uint64_t f, uint64_t code, uint64_t raw, int n)
{
	if (c->hop[i].code == code && c->hop[i].ci == UINT32_MAX && (interp_frame(f, code) || !tlm__py_is_type(code, tlm__py_code_type)))
		return n; /* skipped then and now */
	return new_hop(c, i, f, code, raw, &n) ? n : -1;
}

/* A hop read as the last walk's but for its instruction word: its line anew. */
static __attribute__((noinline)) void new_line(struct pycache *c, struct hop *h, uint64_t code, uint64_t raw)
{
	h->raw = raw;
	int32_t line = line_of(c, &c->code[h->ci], instr_off(raw, code, tlm__pyo.instr_kind));
	h->key = (h->key & 0xffffffff00000000ull) | (uint32_t)line;
}

/* The thread's frames into c->fr; returns their count (-1: cache full, reset
 * and retry). *cut: the chain went on past TLM__PY_MAX_FRAMES real frames;
 * then the count is one less, room for the marker frame. *same: every hop
 * read as the last walk's (struct hop), so its frames and ids hold. */
static int walk(struct pycache *c, uint64_t ts, bool *cut, bool *same)
{
	/* the offsets as locals: the stores below (uint32_t, int32_t) may alias
	 * the global's fields as far as the compiler knows, and it would read
	 * them again at every hop */
	const uint32_t o_back = tlm__pyo.f_back, o_code = tlm__pyo.f_code, o_instr = tlm__pyo.f_instr;
	const uint32_t o_file = tlm__pyo.co_file, o_name = tlm__pyo.co_name, o_lines = tlm__pyo.co_lines;
	const bool wide = tlm__pyo.instr_kind == 2;
	*cut = false;
	c->deaths = atomic_load_explicit(&tlm__py_code_deaths, memory_order_acquire);
	/* no code object died since the last walk: a hop's code there is this one */
	const bool alive = tlm__py_deaths_on && c->deaths == c->memo_deaths;
	uint32_t known = c->memo_ts == ts && c->memo_epoch == c->code_epoch ? c->memo_hops : 0;
	uint32_t lim = known < MEMO_HOPS ? known : MEMO_HOPS; /* hops with a usable memo */
	bool all = known != 0;
	uint64_t f = top_frame(ts);
	int n = 0;
	uint32_t hops = 0;
	if (alive) {
		/* the usual walk: the last one's codes, hop for hop, each of them
		 * alive since; only the instruction words are compared (n <= hops
		 * stays under TLM__PY_MAX_FRAMES here) */
		const uint32_t fast = lim < TLM__PY_MAX_FRAMES ? lim : TLM__PY_MAX_FRAMES;
		/* 3.8-3.10's word is an int: the 4 bytes after it are the frame's too */
		const uint64_t mask = wide ? UINT64_MAX : UINT32_MAX;
		const struct frame_off fo = {o_back, o_code, o_instr, mask};
		while (hops < fast && tlm__py_ptr_ok(f)) {
			uint32_t k = same_hops(c, hops, fast, n, &f, &fo);
			hops += k;
			n += (int)k;
			if (hops >= fast || !tlm__py_ptr_ok(f))
				break;
			struct hop *h = &c->hop[hops];
			uint64_t code = tlm__py_rd64(f, o_code), raw = tlm__py_rd64(f, o_instr) & mask;
			all = false;
			if (code == h->code && h->ci != UINT32_MAX) { /* the same code at another line */
				new_line(c, h, code, raw);
				c->fr[n].key = h->key;
				c->fr[n].ci = h->ci;
				n++;
			} else if ((n = other_hop(c, hops, f, code, raw, n)) < 0) {
				return -1;
			}
			f = tlm__py_rd64(f, o_back);
			hops++;
		}
	}
	for (; hops < 256 && tlm__py_ptr_ok(f) && n < (int)TLM__PY_MAX_FRAMES; hops++, f = tlm__py_rd64(f, o_back)) {
		uint64_t code = tlm__py_rd64(f, o_code);
		uint64_t raw = wide ? tlm__py_rd64(f, o_instr) : tlm__py_rd32(f, o_instr);
		struct hop *h = hops < MEMO_HOPS ? &c->hop[hops] : NULL;
		if (hops < lim && h->code == code) { /* lim <= MEMO_HOPS: h is set */
			if (TLM_LIKELY(h->ci != UINT32_MAX)) {
				if (TLM_LIKELY(alive || (tlm__py_is_type(code, tlm__py_code_type) &&
					       sig_same(code, tlm__py_rd64(code, o_file), tlm__py_rd64(code, o_name), tlm__py_rd64(code, o_lines), &c->hop_sig[hops])))) {
					if (TLM_UNLIKELY(raw != h->raw)) {
						all = false;
						new_line(c, h, code, raw);
					}
					c->fr[n].key = h->key;
					c->fr[n].ci = h->ci;
					n++;
					continue;
				}
			} else if (interp_frame(f, code) || !tlm__py_is_type(code, tlm__py_code_type)) {
				continue; /* skipped then and now: an interpreter frame, or no code */
			}
		}
		all = false;
		if (!new_hop(c, hops, f, code, raw, &n))
			return -1;
	}
	if (n == (int)TLM__PY_MAX_FRAMES) /* one more user frame? then it is cut */
		for (int hop = 0; hop < 256 && tlm__py_ptr_ok(f); hop++, f = tlm__py_rd64(f, o_back)) {
			uint64_t code = tlm__py_rd64(f, o_code);
			if (!interp_frame(f, code) && tlm__py_is_type(code, tlm__py_code_type)) {
				*cut = true;
				break;
			}
		}
	*same = all && hops == known && !*cut && !tlm__py_ptr_ok(f);
	c->memo_ts = ts;
	c->memo_hops = hops; /* past MEMO_HOPS: those hops are not kept, and never "same" */
	c->memo_epoch = c->code_epoch;
	c->memo_deaths = c->deaths;
	if (!*same)
		c->memo_id[0] = c->memo_id[1] = 0;
	return *cut ? n - 1 : n;
}

/* One-time check of the offsets on a real frame: code, str and bytes types. */
static bool validate(uint64_t ts)
{
	uint64_t f = tlm__py_rd64(ts, tlm__pyo.ts_frame);
	if (tlm__pyo.cframe_cur >= 0)
		f = tlm__py_ptr_ok(f) ? tlm__py_rd64(f, (uint32_t)tlm__pyo.cframe_cur) : 0;
	for (int hop = 0; hop < 8 && tlm__py_ptr_ok(f); hop++, f = tlm__py_rd64(f, tlm__pyo.f_back)) {
		uint64_t code = tlm__py_rd64(f, tlm__pyo.f_code);
		if (interp_frame(f, code))
			continue;
		int v;
		if (tlm__py_is_type(code, tlm__py_code_type) && tlm__py_is_type(tlm__py_rd64(code, tlm__pyo.co_file), tlm__py_unicode_type) &&
		    tlm__py_is_type(tlm__py_rd64(code, tlm__pyo.co_name), tlm__py_unicode_type) && tlm__py_is_type(tlm__py_rd64(code, tlm__pyo.co_lines), tlm__py_bytes_type))
			v = 1;
		else
			v = -1;
		atomic_store(&validated, v);
		if (v > 0)
			tlm__stack_interp_on(); /* Python frames stand for the interpreter's own now */
		if (v < 0)
			tlm__log("Python 3.%d: the frame layout check failed (not a code object where one was "
				 "expected); native stacks only",
				 tlm__pyo.minor);
		return v > 0;
	}
	return false; /* no frame to check yet */
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

void tlm__py_ready(void)
{
	if (TLM_LIKELY(atomic_load_explicit(&validated, memory_order_relaxed) != 0) || !tlm__py_on())
		return;
	uint64_t ts = (uint64_t)(uintptr_t)tlm__py_gil_get();
	if (tlm__py_ptr_ok(ts))
		(void)validate(ts);
}

uint32_t tlm__py_get(struct tlm__ring *r, uint32_t native_sid, uint32_t native_gen, bool *fresh, uint32_t *def_slots)
{
	*fresh = false;
	*def_slots = 0;
	if (!tlm__py_on())
		return 0;
	uint64_t ts = (uint64_t)(uintptr_t)tlm__py_gil_get();
	if (!tlm__py_ptr_ok(ts))
		return 0;
	int v = atomic_load_explicit(&validated, memory_order_relaxed);
	if (TLM_UNLIKELY(v <= 0)) {
		if (v < 0 || !validate(ts))
			return 0;
	}
	struct pycache *c = cache_of(r);
	if (!c)
		return 0;
	if (c->gen_native != native_gen) { /* native ids were reassigned: ours refer to them */
		reset(c);
		c->gen_native = native_gen;
	}
	bool cut, same;
	unsigned mk = native_sid != 0;
	int n = walk(c, ts, &cut, &same);
	if (n < 0) {
		reset(c);
		n = walk(c, ts, &cut, &same);
	}
	if (same && c->memo_id[mk] && c->memo_sid[mk] == native_sid)
		return c->memo_id[mk] | TLM__PY_ID_BIT; /* the last walk's, interned already */
	if (n <= 0)
		return 0;
	/* intern (native sid, (serial, line)...); a cut stack has one key more */
	uint64_t h = mix(0xcbf29ce484222325ull, native_sid);
	for (int i = 0; i < n; i++)
		h = mix(h, c->fr[i].key);
	if (cut)
		h = mix(h, UINT64_MAX);
	uint32_t mask = 2 * TLM__PY_STACKS - 1, j = (uint32_t)(h >> 20) & mask;
	for (; c->ms[j].id; j = (j + 1) & mask) {
		struct mstack *m = &c->ms[j];
		if (m->hash != h || m->n != (uint32_t)n + 1 + cut || c->keys[m->off] != native_sid)
			continue;
		int i = 0;
		for (; i < n; i++)
			if (c->keys[m->off + 1 + i] != c->fr[i].key)
				break;
		if (i == n && (!cut || c->keys[m->off + 1 + n] == UINT64_MAX)) {
			c->memo_sid[mk] = native_sid;
			c->memo_id[mk] = m->id;
			return m->id | TLM__PY_ID_BIT;
		}
	}
	if (c->next_id >= TLM__PY_STACKS || c->key_used + (uint32_t)n + 2 > KEY_ARENA) {
		reset(c);
		return tlm__py_get(r, native_sid, native_gen, fresh, def_slots);
	}
	/* new: build the definition payload (innermost first) within the ring's budget */
	uint32_t budget = (tlm__cfg.ring_slots / 4) * 64u;
	if (budget > SCRATCH)
		budget = SCRATCH;
	uint32_t bytes = 0, nf = 0;
	for (int i = 0; i < n; i++) {
		const struct code_ent *e = &c->code[c->fr[i].ci];
		uint32_t need = 8u + e->flen + e->nlen;
		if (bytes + need > budget)
			break;
		uint8_t *p = c->scratch + bytes;
		int32_t line = (int32_t)(uint32_t)c->fr[i].key;
		memcpy(p, &line, 4);
		memcpy(p + 4, &e->flen, 2);
		memcpy(p + 6, &e->nlen, 2);
		memcpy(p + 8, c->str + e->soff, (size_t)e->flen + e->nlen);
		bytes += need;
		nf++;
	}
	if (cut && nf == (uint32_t)n && bytes + 8 <= budget) { /* the marker: cut here */
		int32_t line = TLM__PY_CUT_LINE;
		memset(c->scratch + bytes, 0, 8);
		memcpy(c->scratch + bytes, &line, 4);
		bytes += 8;
		nf++;
	}
	struct mstack *m = &c->ms[j];
	m->hash = h;
	m->id = c->next_id++;
	m->n = (uint32_t)n + 1 + cut;
	m->off = c->key_used;
	c->keys[c->key_used++] = native_sid;
	for (int i = 0; i < n; i++)
		c->keys[c->key_used++] = c->fr[i].key;
	if (cut)
		c->keys[c->key_used++] = UINT64_MAX;
	c->memo_sid[mk] = native_sid;
	c->memo_id[mk] = m->id;
	c->pend_id = m->id;
	c->pend_native = native_sid;
	c->pend_n = nf;
	c->pend_bytes = bytes;
	*fresh = true;
	*def_slots = 1 + (bytes + 63) / 64;
	return m->id | TLM__PY_ID_BIT;
}

uint64_t tlm__py_write_def(struct tlm__ring *r, uint64_t head)
{
	struct pycache *c = r->py;
	struct tlm__slot *s = &r->slots[head & r->mask];
	memset(s, 0, sizeof *s);
	s->type = TLM__SLOT_PYSTACK;
	s->aux = c->pend_id;
	s->stream = c->pend_native;
	s->size = c->pend_n;
	s->addr = c->pend_bytes;
	head++;
	for (uint32_t o = 0; o < c->pend_bytes; o += 64, head++) {
		uint32_t k = c->pend_bytes - o < 64 ? c->pend_bytes - o : 64;
		memcpy(&r->slots[head & r->mask], c->scratch + o, k);
	}
	return head;
}

