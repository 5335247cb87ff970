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
 * Per capture: the frames are walked (pywalk.c) and interned as a trie
 * path (pytrie.h) from the outermost frame in, so a walk that differs from
 * the last in its inner hops only interns those; (path, native stack) gets
 * a per-thread id, and a new one is sent to the writer as a definition with
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
#include "recording/stack/pywalk.h"
#include "recording/stack/stack.h"
#include "tlm/event.h"

TLM_HOT static _Atomic int validated;       /* 0 unknown, 1 checked, -1 failed */

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

/* One-time check of the offsets on a real frame: code, str and bytes types. */
static bool validate(uint64_t ts)
{
	uint64_t f = tlm__py_rd64(ts, tlm__pyo.ts_frame);
	if (tlm__pyo.cframe_cur >= 0)
		f = tlm__py_ptr_ok(f) ? tlm__py_rd64(f, (uint32_t)tlm__pyo.cframe_cur) : 0;
	for (int hop = 0; hop < 8 && tlm__py_ptr_ok(f); hop++, f = tlm__py_rd64(f, tlm__pyo.f_back)) {
		uint64_t code = tlm__py_rd64(f, tlm__pyo.f_code);
		if (tlm__py_interp_frame(f, code))
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
	if (budget > TLM__PY_SCRATCH)
		budget = TLM__PY_SCRATCH;
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
			struct tlm__pymemo_ent *e = tlm__py_memo_of(c, h);
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
	struct tlm__pymemo_ent *e = tlm__py_memo_of(c, in);
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

uint32_t tlm__py_get(struct tlm__ring *r, uint32_t native_sid, uint32_t native_gen, bool *fresh, uint32_t *def_slots,
		     uint64_t *ts_out)
{
	*fresh = false;
	*def_slots = 0;
	if (!tlm__py_on())
		return 0;
	uint64_t ts = (uint64_t)(uintptr_t)tlm__py_gil_get();
	*ts_out = tlm__py_ptr_ok(ts) ? ts : 0;
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
	int n = tlm__py_walk(c, ts, &cut, &same);
	if (n < 0) {
		reset(c);
		n = tlm__py_walk(c, ts, &cut, &same);
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
		if ((n = tlm__py_walk(c, ts, &cut, &same)) <= 0 || !(id = intern(c, n, cut, native_sid, fresh)))
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

