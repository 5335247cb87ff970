/* SPDX-License-Identifier: MIT */
/*
 * pywalk.c - the walk of the calling thread's Python frame chain (pywalk.h).
 *
 * The top frame is read from the thread state, the chain is walked (at most
 * 256 hops, pointers checked for alignment and range, each code object's
 * type checked unless it is the last walk's at that hop and no code object
 * died since, the interpreter's own entry and __init__ shim frames skipped,
 * a stack past 64 frames cut with a marker frame, see pystack.h), and each
 * code object is looked up in the thread's code cache (pycode.h: strings
 * copied once, lines decoded once by pyline.c, a code found again checked
 * to be the same one), after the thread's memo of (code, instruction word)
 * -> key, trie node and ids (pymemo.h), which costs a frame that changed
 * one cache line. A hop read as the last walk's reuses its entry and line
 * (struct hop); while no code object has died (PyCode_Type's dealloc counts
 * them, pysetup.c) such a hop costs two loads and two compares. A walk a
 * few calls deeper or shallower than the last finds the last walk's frames
 * at other hops: it moves them to where they are now (realign) and goes on
 * comparing.
 */
#include <stdatomic.h>
#include <string.h>

#include "recording/stack/pywalk.h"

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
	if (!tlm__py_cstack_frame(f) && (m = memo_hit(c, code, raw)) != NULL) {
		e = (struct hop){code, raw, m->key, m->ci, 0};
		++*n;
	} else if (!tlm__py_interp_frame(f, code) && tlm__py_is_type(code, tlm__py_code_type)) {
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
static __attribute__((noinline)) uint32_t same_hops(struct pycache *c, uint32_t i, uint32_t end, uint64_t *fp,
						    const struct frame_off *o)
{
	const uint64_t back = o->back, ocode = o->code, instr = o->instr, mask = o->mask;
	const struct hop *h = &c->hop[i], *hend = &c->hop[end];
	uint64_t *hf = &c->hop_f[i]; /* where each hop's frame stands now (realign) */
	uint64_t f = *fp;
	while (h < hend && tlm__py_ptr_ok(f)) {
		if (tlm__py_rd64(f, (uint32_t)ocode) != h->code || (tlm__py_rd64(f, (uint32_t)instr) & mask) != h->raw ||
		    h->ci == UINT32_MAX)
			break;
		*hf++ = f;
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
	if (c->hop[i].code == code && c->hop[i].ci == UINT32_MAX && (tlm__py_interp_frame(f, code) || !tlm__py_is_type(code, tlm__py_code_type)))
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

/* Hop i reads frame f, whose code is not the last walk's there (nor its
 * frame). When f, or one of the REALIGN_AHEAD frames outward of it, is a
 * frame the last walk read (same address and code) at another hop j (the
 * allocation is made a few calls deeper or shallower than the last), the
 * last walk's hops from j on move to where that frame stands now, so that
 * the walk goes on comparing the frames outward of it with theirs rather
 * than looking each up anew (a memo line each, cold after the framework's
 * work). The look ahead comes before the walk writes hop i: a deeper walk
 * would overwrite the very hops it is to find. Only which hops are
 * compared changes: each is still compared, code and instruction word, and
 * the hops before the moved ones count as changed (diff_hi). Returns the
 * last walk's hop count as moved, 0 when none of those frames is among its
 * hops. */
#define REALIGN_AHEAD 24u
static __attribute__((noinline)) uint32_t realign(struct pycache *c, uint32_t i, uint64_t f, uint32_t lim,
						  const struct frame_off *o)
{
	/* Frames outward sit lower in the interpreter's frame stack (3.11+),
	 * in the last walk's hops as along the chain: one merged pass over
	 * both. Where frames are not so ordered (heap frames before 3.11, a
	 * new chunk of the frame stack), one may be missed: it is looked up
	 * anew, as before. */
	uint32_t j = 0;
	for (uint32_t k = 0; k <= REALIGN_AHEAD && tlm__py_ptr_ok(f); k++, f = tlm__py_rd64(f, (uint32_t)o->back)) {
		while (j < lim && c->hop_f[j] > f)
			j++;
		if (j >= lim)
			return 0;
		if (c->hop_f[j] != f || c->hop[j].code != tlm__py_rd64(f, (uint32_t)o->code))
			continue;
		uint32_t to = i + k, n = lim - j;
		if (j == to || to + n > TLM__PY_MEMO_HOPS)
			return 0;
		memmove(&c->hop[to], &c->hop[j], n * sizeof c->hop[0]);
		memmove(&c->hop_f[to], &c->hop_f[j], n * sizeof c->hop_f[0]);
		if (c->diff_hi < (int32_t)to - 1)
			c->diff_hi = (int32_t)to - 1;
		return to + n;
	}
	return 0;
}

int tlm__py_walk(struct pycache *c, uint64_t ts, bool *cut, bool *same)
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
	uint32_t lim = known < TLM__PY_MEMO_HOPS ? known : TLM__PY_MEMO_HOPS; /* hops with a usable memo */
	bool all = known != 0;
	uint64_t f = top_frame(ts);
	int n = 0;
	uint32_t hops = 0;
	c->diff_hi = -1;
	if (alive) {
		/* the usual walk: the last one's codes, hop for hop, each of them
		 * alive since; only the instruction words are compared (n <= hops
		 * stays under TLM__PY_MAX_FRAMES here) */
		uint32_t fast = lim < TLM__PY_MAX_FRAMES ? lim : TLM__PY_MAX_FRAMES;
		bool tried = false; /* realign: once a walk */
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
			uint32_t m;
			if (code == h->code && h->ci != UINT32_MAX) { /* the same code at another line */
				new_line(c, h, code, raw);
				n++;
			} else if (!tried && c->hop_f[hops] != f) { /* (the same frame: a sibling call, no shift) */
				tried = true;
				if ((m = realign(c, hops, f, lim, &fo)) != 0) {
					known = lim = m;
					fast = lim < TLM__PY_MAX_FRAMES ? lim : TLM__PY_MAX_FRAMES;
				}
				continue; /* hop again: compared with what stands there now */
			} else if ((n = other_hop(c, hops, f, code, raw, n)) < 0) {
				return -1;
			}
			c->hop_f[hops] = f; /* after realign's test, which reads the last walk's */
			f = tlm__py_rd64(f, o_back);
			hops++;
		}
	}
	for (; hops < TLM__PY_MEMO_HOPS && tlm__py_ptr_ok(f) && n < (int)TLM__PY_MAX_FRAMES; hops++, f = tlm__py_rd64(f, o_back)) {
		uint64_t code = tlm__py_rd64(f, o_code);
		uint64_t raw = tlm__py_rd64(f, o_instr) & mask;
		struct hop *h = &c->hop[hops];
		c->hop_f[hops] = f;
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
			} else if (tlm__py_interp_frame(f, code) || !tlm__py_is_type(code, tlm__py_code_type)) {
				continue; /* skipped then and now: an interpreter frame, or no code */
			}
		}
		all = false;
		if (!new_hop(c, hops, f, code, raw, &n))
			return -1;
	}
	if (n == (int)TLM__PY_MAX_FRAMES) /* one more user frame? then it is cut */
		for (uint32_t hop = hops; hop < TLM__PY_MEMO_HOPS && tlm__py_ptr_ok(f); hop++, f = tlm__py_rd64(f, o_back)) {
			uint64_t code = tlm__py_rd64(f, o_code);
			if (!tlm__py_interp_frame(f, code) && tlm__py_is_type(code, tlm__py_code_type)) {
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
