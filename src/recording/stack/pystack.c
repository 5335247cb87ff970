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
 * code object's type checked unless it is the last walk's at that hop and
 * no code object died since, the interpreter's own entry and __init__ shim
 * frames skipped, a stack past 64 frames cut with a marker frame, see
 * pystack.h), and each code object is looked up in the thread's code cache
 * (pycode.h: strings copied once, lines decoded once by pyline.c, a code
 * found again checked to be the same one), after the thread's memo of
 * (code, instruction word) -> key, trie node and ids (pymemo.h), which
 * costs a frame that changed one cache line. A hop read as the last walk's
 * reuses its entry and line (struct hop); while no code object has died
 * (PyCode_Type's dealloc counts them, pysetup.c) such a hop costs two
 * loads and two compares. The frames are interned as a trie path
 * (pytrie.h) from the outermost frame in, so a walk that differs from the
 * last in its inner hops only interns those; (path, native stack) gets a
 * per-thread id, and a new one is sent to the writer as a definition with
 * the strings inline.
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
#include "recording/stack/pycode.h"
#include "recording/stack/pymemo.h"
#include "recording/stack/pytrie.h"
#include "tlm/event.h"

TLM_HOT static _Atomic int validated;       /* 0 unknown, 1 checked, -1 failed */

/* ---- per-thread cache -------------------------------------------------------- */

#define SCRATCH (TLM__PY_MAX_FRAMES * (8u + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX))

/* One hop of the last walk, as read. A hop that reads the same code object
 * as the last walk's hop at the same depth is that code when no code object
 * died since that walk (pycache.memo_deaths), or else when it has the
 * signature of the code's cache entry (the cache's own validation); with the same instruction word as well, its
 * interned key (serial, line) holds: the block allocations and frees one
 * Python line makes come one after another from one chain, and the next
 * line's differ in the innermost frame's word only. The frame's own address
 * does not matter: the key is a function of the code and the offset. A walk
 * equal to the last one at every hop reuses its interned id as well, and
 * one equal beyond its first hops reuses the trie node of those beyond
 * (pytrie.h): interning costs a probe per changed frame, not per frame.
 * Every hop of a walk is kept (it stops at MEMO_HOPS). */
#define MEMO_HOPS 256u
struct hop {
	uint64_t code, raw;  /* the code object; the instruction word as read (offset, or pointer) */
	uint64_t key;        /* serial << 32 | line */
	uint32_t ci;         /* index into code[]; UINT32_MAX: a hop the walk skipped */
	uint32_t node;       /* the trie node of the frames from this hop outward (pycache.nodes_ok) */
};

struct pycache {
	uint32_t gen_native;   /* native intern generation the merged ids were made under */
	/* the last walk (memo_hops 0: none usable) and, per kind of native id
	 * (0: none, as a block free's; else an allocation's), the merged id that
	 * walk was last interned to */
	uint32_t memo_hops, memo_epoch;
	uint64_t memo_ts;
	/* tlm__py_code_deaths as the last walk read it at its start: no code
	 * object died since when codes.deaths, the current walk's, is the same
	 * (and counted), so the last walk's codes are those at their addresses
	 * now. memo_epoch: codes.epoch then (an entry replaced since: the hops
	 * may name the old one) */
	uint64_t memo_deaths;
	uint32_t memo_sid[2], memo_id[2];
	/* the hops' nodes hold for the last walk (it was interned whole, not cut);
	 * the walk's outermost hop that differs from the one before it (-1: none) */
	bool nodes_ok, aligned;
	int32_t diff_hi;
	struct hop hop[MEMO_HOPS];
	struct tlm__pycodes codes;
	struct tlm__pytrie trie;
	/* the pending definition */
	uint32_t pend_id, pend_native, pend_n, pend_bytes;
	uint32_t gen; /* bumped by reset(): the memo's entries from before do not hold */
	uint8_t scratch[SCRATCH];
	struct tlm__pymemo_ent memo[TLM__PYMEMO_SLOTS];
};

static void reset(struct pycache *c)
{
	tlm__pycodes_reset(&c->codes);
	tlm__pytrie_reset(&c->trie);
	c->memo_hops = 0;
	c->memo_id[0] = c->memo_id[1] = 0;
	c->nodes_ok = false;
	c->gen++;
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
	_Static_assert(sizeof(struct pycache) < (1200u << 10), "the docs say 1.2 MiB");
	/* a zeroed mapping is what reset() makes (pycode.h, pytrie.h, pymemo.h),
	 * without touching, and so committing, all of its 1.2 MiB */
	r->py = c;
	return c;
}

/* A frame the interpreter made for itself, not the user's code: the C-stack
 * entry frame under every C->Python call (3.12-3.13, owner 3) and the __init__
 * shim of specialised class calls (3.13: its code carries CO_NO_MONITORING_EVENTS).
 * Showing either would split one allocation line into several sites. */
static inline bool cstack_frame(uint64_t f)
{
	return tlm__pyo.skip_cstack && tlm__py_rd8(f, tlm__pyo.f_owner) == 3;
}
static inline bool interp_frame(uint64_t f, uint64_t code)
{
	if (cstack_frame(f))
		return true;
	return tlm__pyo.shim_flags && tlm__py_is_type(code, tlm__py_code_type) && (tlm__py_rd32(code, tlm__pyo.co_flags) & tlm__pyo.shim_flags);
}

/* The memo's entry of a frame read as (code, raw) (pymemo.h) when its key
 * and code entry hold: the code there is the one the entry was made for
 * (no code object died since) and the tables were not reset. Such a frame
 * is the user's: only those are memoised, and whether a code is a shim is
 * the code's own. */
static inline const struct tlm__pymemo_ent *memo_hit(const struct pycache *c, uint64_t code, uint64_t raw)
{
	const struct tlm__pymemo_ent *e = &c->memo[tlm__pymemo_slot(code, raw)];
	return e->code == code && e->raw == raw && e->gen == c->gen && e->deaths == c->codes.deaths && tlm__py_deaths_on ? e : NULL;
}

/* A user frame looked up afresh: its entry, made again (without the death
 * count, an entry would never hold). */
static inline void memo_put(struct pycache *c, uint64_t code, uint64_t raw, uint64_t key, uint32_t ci)
{
	if (tlm__py_deaths_on)
		c->memo[tlm__pymemo_slot(code, raw)] = (struct tlm__pymemo_ent){
			.code = code, .raw = raw, .key = key, .deaths = c->codes.deaths, .ci = ci, .gen = c->gen};
}

/* The memo's entry of hop h's frame when it holds h's key (the trie node
 * and ids it keeps are of that key). */
static inline struct tlm__pymemo_ent *memo_of(struct pycache *c, const struct hop *h)
{
	struct tlm__pymemo_ent *e = &c->memo[tlm__pymemo_slot(h->code, h->raw)];
	return e->code == h->code && e->raw == h->raw && e->key == h->key && e->gen == c->gen ? e : NULL;
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
 * into hop i, and *n counted up if it is the user's code. Returns false when the code cache is full (the caller resets
 * and retries). Out of line: the walk's loop keeps its registers for the
 * usual hop. */
static __attribute__((noinline)) bool new_hop(struct pycache *c, uint32_t i, uint64_t f, uint64_t code, uint64_t raw, int *n)
{
	struct hop e = {.code = code, .raw = raw, .ci = UINT32_MAX};
	const struct tlm__pymemo_ent *m;
	if (!cstack_frame(f) && (m = memo_hit(c, code, raw)) != NULL) {
		e = (struct hop){code, raw, m->key, m->ci, 0};
		++*n;
	} else if (!interp_frame(f, code) && tlm__py_is_type(code, tlm__py_code_type)) {
		uint32_t ci = tlm__pycode_lookup(&c->codes, code);
		if (ci == UINT32_MAX)
			return false;
		if (ci != UINT32_MAX - 1) {
			const struct tlm__code_ent *ce = &c->codes.code[ci];
			int32_t line = tlm__pycode_line(&c->codes, ce, instr_off(raw, code, tlm__pyo.instr_kind));
			e = (struct hop){code, raw, (uint64_t)ce->serial << 32 | (uint32_t)line, ci, 0};
			memo_put(c, code, raw, e.key, ci);
			++*n;
		}
	}
	c->hop[i] = e;
	c->diff_hi = (int32_t)i;
	return true;
}

struct frame_off {
	uint64_t back, code, instr, mask; /* mask: the instruction word's bits */
};

/* In a walk after which no code object died (walk): from hop i on (up to
 * end, which is at most TLM__PY_MAX_FRAMES), the hops that read as the last
 * walk's, code and instruction word, each a user frame. Returns how many;
 * *fp becomes the frame after them. Its own function, so that the loop's
 * values stay in registers (inside walk, GCC spilled them). */
static __attribute__((noinline)) uint32_t same_hops(const struct pycache *c, uint32_t i, uint32_t end, uint64_t *fp,
						    const struct frame_off *o)
{
	const uint64_t back = o->back, ocode = o->code, instr = o->instr, mask = o->mask;
	const struct hop *h = &c->hop[i], *hend = &c->hop[end];
	uint64_t f = *fp;
	while (h < hend && tlm__py_ptr_ok(f)) {
		if (tlm__py_rd64(f, (uint32_t)ocode) != h->code || (tlm__py_rd64(f, (uint32_t)instr) & mask) != h->raw ||
		    h->ci == UINT32_MAX)
			break;
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
	c->diff_hi = (int32_t)(h - c->hop);
	h->raw = raw;
	const struct tlm__pymemo_ent *m = memo_hit(c, code, raw);
	if (m) {
		h->key = m->key;
		return;
	}
	int32_t line = tlm__pycode_line(&c->codes, &c->codes.code[h->ci], instr_off(raw, code, tlm__pyo.instr_kind));
	h->key = (h->key & 0xffffffff00000000ull) | (uint32_t)line;
	memo_put(c, code, raw, h->key, h->ci);
}

/* The thread's frames into c->hop; returns how many are the user's (-1:
 * cache full, reset and retry). *cut: the chain went on past
 * TLM__PY_MAX_FRAMES user frames; then the count is one less, room for the
 * marker frame. *same: every hop read as the last walk's (struct hop), so
 * its frames and ids hold. c->aligned: as many hops as the last walk, neither
 * cut, so the hops past c->diff_hi are the last walk's. */
static int walk(struct pycache *c, uint64_t ts, bool *cut, bool *same)
{
	/* the offsets as locals: the stores below (uint32_t, int32_t) may alias
	 * the global's fields as far as the compiler knows, and it would read
	 * them again at every hop */
	const uint32_t o_back = tlm__pyo.f_back, o_code = tlm__pyo.f_code, o_instr = tlm__pyo.f_instr;
	const uint32_t o_file = tlm__pyo.co_file, o_name = tlm__pyo.co_name, o_lines = tlm__pyo.co_lines;
	/* the instruction word, read as 8 bytes: 3.8-3.10's is an int, and the 4
	 * bytes after it are the frame's too */
	const uint64_t mask = tlm__pyo.instr_kind == 2 ? UINT64_MAX : UINT32_MAX;
	*cut = false;
	c->codes.deaths = atomic_load_explicit(&tlm__py_code_deaths, memory_order_acquire);
	/* no code object died since the last walk: a hop's code there is this one */
	const bool alive = tlm__py_deaths_on && c->codes.deaths == c->memo_deaths;
	uint32_t known = c->memo_ts == ts && c->memo_epoch == c->codes.epoch ? c->memo_hops : 0;
	uint32_t lim = known < MEMO_HOPS ? known : MEMO_HOPS; /* hops with a usable memo */
	bool all = known != 0;
	uint64_t f = top_frame(ts);
	int n = 0;
	uint32_t hops = 0;
	c->diff_hi = -1;
	if (alive) {
		/* the usual walk: the last one's codes, hop for hop, each of them
		 * alive since; only the instruction words are compared (n <= hops
		 * stays under TLM__PY_MAX_FRAMES here) */
		const uint32_t fast = lim < TLM__PY_MAX_FRAMES ? lim : TLM__PY_MAX_FRAMES;
		const struct frame_off fo = {o_back, o_code, o_instr, mask};
		while (hops < fast && tlm__py_ptr_ok(f)) {
			uint32_t k = same_hops(c, hops, fast, &f, &fo);
			hops += k;
			n += (int)k;
			if (hops >= fast || !tlm__py_ptr_ok(f))
				break;
			struct hop *h = &c->hop[hops];
			uint64_t code = tlm__py_rd64(f, o_code), raw = tlm__py_rd64(f, o_instr) & mask;
			all = false;
			if (code == h->code && h->ci != UINT32_MAX) { /* the same code at another line */
				new_line(c, h, code, raw);
				n++;
			} else if ((n = other_hop(c, hops, f, code, raw, n)) < 0) {
				return -1;
			}
			f = tlm__py_rd64(f, o_back);
			hops++;
		}
	}
	for (; hops < MEMO_HOPS && tlm__py_ptr_ok(f) && n < (int)TLM__PY_MAX_FRAMES; hops++, f = tlm__py_rd64(f, o_back)) {
		uint64_t code = tlm__py_rd64(f, o_code);
		uint64_t raw = tlm__py_rd64(f, o_instr) & mask;
		struct hop *h = &c->hop[hops];
		if (hops < lim && h->code == code) {
			if (TLM_LIKELY(h->ci != UINT32_MAX)) {
				if (TLM_LIKELY(alive || (tlm__py_is_type(code, tlm__py_code_type) &&
					       tlm__code_sig_same(code, tlm__py_rd64(code, o_file), tlm__py_rd64(code, o_name), tlm__py_rd64(code, o_lines), &c->codes.code[h->ci].sig)))) {
					if (TLM_UNLIKELY(raw != h->raw)) {
						all = false;
						new_line(c, h, code, raw);
					}
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
		for (uint32_t hop = hops; hop < MEMO_HOPS && tlm__py_ptr_ok(f); hop++, f = tlm__py_rd64(f, o_back)) {
			uint64_t code = tlm__py_rd64(f, o_code);
			if (!interp_frame(f, code) && tlm__py_is_type(code, tlm__py_code_type)) {
				*cut = true;
				break;
			}
		}
	c->aligned = known != 0 && hops == known && !*cut && !tlm__py_ptr_ok(f);
	*same = all && c->aligned;
	c->memo_ts = ts;
	c->memo_hops = hops;
	c->memo_epoch = c->codes.epoch;
	c->memo_deaths = c->codes.deaths;
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

/* The definition of a new merged id: the walk's n user frames (innermost
 * first) and the marker when cut, within the ring's budget. */
static void define(struct pycache *c, uint32_t id, int n, bool cut, uint32_t native_sid)
{
	uint32_t budget = (tlm__cfg.ring_slots / 4) * 64u;
	if (budget > SCRATCH)
		budget = SCRATCH;
	uint32_t bytes = 0, nf = 0;
	for (const struct hop *h = c->hop; nf < (uint32_t)n; h++) {
		if (h->ci == UINT32_MAX)
			continue;
		const struct tlm__code_ent *e = &c->codes.code[h->ci];
		uint32_t need = 8u + e->flen + e->nlen;
		if (bytes + need > budget)
			break;
		uint8_t *p = c->scratch + bytes;
		int32_t line = (int32_t)(uint32_t)h->key;
		memcpy(p, &line, 4);
		memcpy(p + 4, &e->flen, 2);
		memcpy(p + 6, &e->nlen, 2);
		memcpy(p + 8, c->codes.str + e->soff, (size_t)e->flen + e->nlen);
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
	c->pend_id = id;
	c->pend_native = native_sid;
	c->pend_n = nf;
	c->pend_bytes = bytes;
}

/* The merged id of the walk's n user frames (+ the cut marker) under
 * native_sid: the trie path from the outermost frame in, then the leaf
 * (pytrie.h). A walk aligned with the last one starts from the node past its
 * outermost changed hop. 0: a table is full (the caller resets). */
static uint32_t intern(struct pycache *c, int n, bool cut, uint32_t native_sid, bool *fresh)
{
	uint32_t node = 0;
	int32_t i;
	if (cut) { /* kept: the innermost n user frames under the marker */
		c->nodes_ok = false;
		int k = 0;
		for (i = 0; k < n; i++)
			k += c->hop[i].ci != UINT32_MAX;
		i--;
		if (!(node = tlm__pytrie_child(&c->trie, 0, UINT64_MAX)))
			return 0;
	} else if (c->nodes_ok && c->aligned) {
		i = c->diff_hi;
		node = (uint32_t)i + 1 < c->memo_hops ? c->hop[i + 1].node : 0;
	} else {
		i = (int32_t)c->memo_hops - 1;
	}
	c->nodes_ok = false;
	for (; i >= 0; i--) {
		struct hop *h = &c->hop[i];
		if (h->ci != UINT32_MAX) {
			struct tlm__pymemo_ent *e = memo_of(c, h);
			if (e && e->parent == node && e->node) {
				node = e->node;
			} else {
				uint32_t parent = node;
				if (!(node = tlm__pytrie_child(&c->trie, node, h->key)))
					return 0;
				if (e)
					*e = (struct tlm__pymemo_ent){e->code, e->raw, e->key, e->deaths, e->ci, e->gen, parent, node, 0, 0, 0, 0};
			}
		}
		h->node = node;
	}
	c->nodes_ok = !cut;
	/* the merged id: from the innermost frame's memo when it made this node */
	const struct hop *in = c->hop;
	while (in->ci == UINT32_MAX)
		in++;
	struct tlm__pymemo_ent *e = memo_of(c, in);
	if (e && e->node != node)
		e = NULL;
	*fresh = false;
	if (e && !native_sid && e->id0)
		return e->id0;
	if (e && native_sid && e->native1 == native_sid && e->id1)
		return e->id1;
	uint32_t id = tlm__pytrie_leaf(&c->trie, node, native_sid, fresh);
	if (id && *fresh)
		define(c, id, n, cut, native_sid);
	if (id && e) {
		if (native_sid) {
			e->native1 = native_sid;
			e->id1 = id;
		} else {
			e->id0 = id;
		}
	}
	return id;
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
	if (n <= 0) {
		c->nodes_ok = false; /* the hops changed, their nodes were not made */
		return 0;
	}
	uint32_t id = intern(c, n, cut, native_sid, fresh);
	if (!id) { /* a table is full */
		reset(c);
		if ((n = walk(c, ts, &cut, &same)) <= 0 || !(id = intern(c, n, cut, native_sid, fresh)))
			return 0;
	}
	c->memo_sid[mk] = native_sid;
	c->memo_id[mk] = id;
	if (*fresh)
		*def_slots = 1 + (c->pend_bytes + 63) / 64;
	return id | TLM__PY_ID_BIT;
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

