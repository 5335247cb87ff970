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
 * or the line table once. The (native stack, frames) pair is interned to a
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
#include "tlm/event.h"

/* ---- offsets ------------------------------------------------------------- */

struct pyoff {
	int minor;
	uint32_t ts_frame;     /* tstate -> frame (3.8-3.10, 3.13) or cframe (3.11-3.12) */
	int cframe_cur;        /* -1: none; else cframe -> current frame */
	uint32_t f_back, f_code, f_instr, f_owner;
	int instr_kind;        /* 0: int lasti in bytes, 1: int lasti in code units, 2: instr pointer */
	bool skip_cstack;      /* owner == 3: C-stack shim frame (3.12-3.13) */
	uint32_t co_file, co_name, co_lines, co_first, co_code;
	uint32_t co_flags, shim_flags; /* code flags marking interpreter shims (3.13+); 0: none */
	int table_kind;        /* 0: co_lnotab, 1: 3.10 co_linetable, 2: 3.11+ location table */
	uint32_t uni_ascii, uni_compact; /* data offsets of compact ascii / non-ascii strings */
	uint32_t gc_collecting;/* from interp (tstate+16), or from _PyRuntime when gc_in_runtime */
	bool gc_in_runtime;
	uint32_t rt_finalizing;/* _PyRuntime + this: _finalizing (a pointer) */
};

static const struct pyoff table[] = {
	{8, 24, -1, 24, 32, 104, 0, 0, false, 104, 112, 120, 40, 0, 0, 0, 0, 48, 72, 544, true, 16},
	{9, 24, -1, 24, 32, 104, 0, 0, false, 104, 112, 120, 40, 0, 0, 0, 0, 48, 72, 816, false, 16},
	{10, 24, -1, 24, 32, 96, 0, 1, false, 104, 112, 120, 40, 0, 0, 0, 1, 48, 72, 816, false, 16},
	{11, 56, 8, 48, 32, 56, 69, 2, false, 112, 128, 136, 72, 184, 0, 0, 2, 48, 72, 848, false, 24},
	{12, 56, 0, 8, 0, 56, 70, 2, true, 112, 128, 136, 68, 192, 0, 0, 2, 40, 56, 312, false, 24},
	/* 3.13: co_flags @48 (co_firstlineno - 20, checked in setup_313); CO_NO_MONITORING_EVENTS
	 * 0x2000000 is set only on the interpreter's own shim code, _Py_InitCleanup: the frame
	 * CALL_ALLOC_AND_ENTER_INIT pushes between a specialised class call and __init__ */
	{13, 72, -1, 8, 0, 56, 70, 2, true, 112, 128, 136, 68, 200, 48, 0x2000000, 2, 40, 56, 7600, false, 608},
};

static struct pyoff O;
static void *(*gil_get)(void);      /* PyGILState_GetThisThreadState */
static void *(*holder_get)(void);   /* thread state holding the GIL (see free flags) */
static const void *code_type, *unicode_type, *bytes_type;
static const char *runtime;         /* _PyRuntime */
/* 0 = not set up, 1 = setting up, 2 = on, 3 = off for good */
static _Atomic int py_state;
static _Atomic int validated;       /* 0 unknown, 1 checked, -1 failed */

/* ---- safe-ish reads --------------------------------------------------------- */

static inline bool ptr_ok(uint64_t p)
{
	return p >= 4096 && !(p & 7) && p < (1ull << 47);
}
static inline uint64_t rd64(uint64_t p, uint32_t off)
{
	return *(const volatile uint64_t *)(uintptr_t)(p + off);
}
static inline uint32_t rd32(uint64_t p, uint32_t off)
{
	return *(const volatile uint32_t *)(uintptr_t)(p + off);
}
static inline uint8_t rd8(uint64_t p, uint32_t off)
{
	return *(const volatile uint8_t *)(uintptr_t)(p + off);
}
static inline bool is_type(uint64_t obj, const void *type)
{
	return ptr_ok(obj) && rd64(obj, 8) == (uint64_t)(uintptr_t)type;
}

/* ---- set-up ------------------------------------------------------------------ */

static void *pysym(const char *name)
{
	tlm__resolve_dlsym();
	void *p = tlm__real_dlsym ? tlm__real_dlsym(RTLD_DEFAULT, name) : NULL;
	return p ? p : tlm__loaded_sym("libpython", name);
}

static bool setup_313(void)
{
	/* _Py_DebugOffsets at the start of _PyRuntime: cookie, version, then offsets */
	if (memcmp(runtime, "xdebugpy", 8))
		return false;
	uint64_t ver;
	memcpy(&ver, runtime + 8, 8);
	if ((ver >> 16) != 0x030d)
		return false;
#define DO(pos) ((uint32_t)*(const uint64_t *)(const void *)(runtime + (pos)))
	O.ts_frame = DO(184);
	O.f_back = DO(232);
	O.f_code = DO(240);
	O.f_instr = DO(248);
	O.f_owner = DO(264);
	O.co_file = DO(280);
	O.co_name = DO(296);
	O.co_lines = DO(304);
	O.co_first = DO(312);
	O.co_code = DO(344);
	uint32_t ascii = DO(560);
#undef DO
	if (ascii != 40 || O.co_first > 4096 || O.ts_frame > 4096)
		return false;
	/* co_flags is not among the debug offsets: it sits five ints before co_firstlineno
	 * (co_flags, argcount, posonlyargcount, kwonlyargcount, stacksize, firstlineno) */
	O.co_flags = O.co_first - 20;
	return true;
}

/* Returns 2 (on), 3 (off for good) or 0 (not yet: interpreter not initialised). */
static int setup(void)
{
	if (tlm__cfg.python_off)
		return 3;
	gil_get = (void *(*)(void))pysym("PyGILState_GetThisThreadState");
	int (*inited)(void) = (int (*)(void))pysym("Py_IsInitialized");
	if (!gil_get || !inited)
		return 3; /* not a Python process (now); native stacks only */
	if (!inited())
		return 0;
	const char *(*getver)(void) = (const char *(*)(void))pysym("Py_GetVersion");
	code_type = pysym("PyCode_Type");
	unicode_type = pysym("PyUnicode_Type");
	bytes_type = pysym("PyBytes_Type");
	runtime = pysym("_PyRuntime");
	int major = 0, minor = 0;
	if (getver)
		(void)sscanf(getver(), "%d.%d", &major, &minor);
	if (!code_type || !unicode_type || !bytes_type || !runtime || major != 3) {
		tlm__log("Python %d.%d: interpreter symbols not found; native stacks only", major, minor);
		return 3;
	}
	bool found = false;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].minor == minor) {
			O = table[i];
			found = true;
		}
	if (!found || (minor == 13 && !setup_313())) {
		tlm__log("Python 3.%d is not supported for Python stacks (3.8 to 3.13 are); native stacks only",
			 minor);
		return 3;
	}
	holder_get = (void *(*)(void))pysym(minor >= 13 ? "PyThreadState_GetUnchecked"
							: "_PyThreadState_UncheckedGet");
	return 2;
}

static bool py_on(void)
{
	int s = atomic_load_explicit(&py_state, memory_order_acquire);
	if (TLM_LIKELY(s == 2))
		return true;
	if (s != 0)
		return false;
	int expect = 0;
	if (!atomic_compare_exchange_strong(&py_state, &expect, 1))
		return false; /* another thread sets up: this event goes without */
	s = setup();
	atomic_store_explicit(&py_state, s, memory_order_release);
	return s == 2;
}

/* ---- per-thread cache -------------------------------------------------------- */

#define NCODE 1024u    /* open addressing; reset at half full */
#define NLINE 4096u    /* direct mapped */
#define KEY_ARENA (64u * 1024u)
#define STR_ARENA (256u * 1024u)
#define SCRATCH (TLM__PY_MAX_FRAMES * (8u + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX))

struct code_ent {
	uint64_t code, file, name, lines; /* key and validation (addresses only, never dereferenced later) */
	uint32_t serial;                  /* 0 = empty */
	uint32_t soff;                    /* strings in the arena: file then name */
	uint16_t flen, nlen;
	int32_t first;
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

struct pycache {
	uint32_t gen_native;   /* native intern generation the merged ids were made under */
	uint32_t next_serial, ncode, next_id, key_used, str_used;
	struct code_ent code[NCODE];
	struct line_ent line[NLINE];
	struct mstack ms[2 * TLM__PY_STACKS];
	uint64_t keys[KEY_ARENA];
	char str[STR_ARENA];
	/* the pending definition */
	uint32_t pend_id, pend_native, pend_n, pend_bytes;
	uint8_t scratch[SCRATCH];
	/* the current capture */
	struct {
		uint32_t ci;   /* index into code[] */
		int32_t line;
	} fr[TLM__PY_MAX_FRAMES];
};

static void reset(struct pycache *c)
{
	memset(c->code, 0, sizeof c->code);
	memset(c->line, 0, sizeof c->line);
	memset(c->ms, 0, sizeof c->ms);
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
	if (!is_type(s, unicode_type))
		return false;
	uint64_t n = rd64(s, 16);
	uint32_t st = rd32(s, 32);
	unsigned kind = (st >> 2) & 7, compact = (st >> 5) & 1, ascii = (st >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || n > (1u << 20))
		return false;
	const uint8_t *d = (const uint8_t *)(uintptr_t)(s + (ascii ? O.uni_ascii : O.uni_compact));
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

/* The cache entry of a code object, decoded on a miss; UINT32_MAX if unusable. */
static uint32_t code_lookup(struct pycache *c, uint64_t code)
{
	uint64_t file = rd64(code, O.co_file), name = rd64(code, O.co_name), lines = rd64(code, O.co_lines);
	uint32_t h = (uint32_t)((code >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (NCODE - 1);
	for (uint32_t i = h;; i = (i + 1) & (NCODE - 1)) {
		struct code_ent *e = &c->code[i];
		if (!e->serial) {
			h = i;
			break;
		}
		if (e->code == code) {
			if (TLM_LIKELY(e->file == file && e->name == name && e->lines == lines))
				return i;
			h = i; /* a new code object at a freed one's address: decode again */
			break;
		}
	}
	if (c->ncode * 2 >= NCODE || c->str_used + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX > STR_ARENA)
		return UINT32_MAX; /* full: the caller resets and retries */
	if (!is_type(lines, bytes_type))
		return UINT32_MAX - 1;
	struct code_ent e = {.code = code, .file = file, .name = name, .lines = lines};
	e.soff = c->str_used;
	if (!copy_str(file, c->str + e.soff, TLM__PY_FILE_MAX, &e.flen) ||
	    !copy_str(name, c->str + e.soff + e.flen, TLM__PY_NAME_MAX, &e.nlen))
		return UINT32_MAX - 1;
	e.first = (int32_t)rd32(code, O.co_first);
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
	int32_t line = tlm__py_decode_line(O.table_kind, e->lines, e->first, off);
	*l = (struct line_ent){e->serial, (int32_t)off, line};
	return line;
}

/* A frame the interpreter made for itself, not the user's code: the C-stack
 * entry frame under every C->Python call (3.12-3.13, owner 3) and the __init__
 * shim of specialised class calls (3.13: its code carries CO_NO_MONITORING_EVENTS).
 * Showing either would split one allocation line into several sites. */
static inline bool interp_frame(uint64_t f, uint64_t code)
{
	if (O.skip_cstack && rd8(f, O.f_owner) == 3)
		return true;
	return O.shim_flags && is_type(code, code_type) && (rd32(code, O.co_flags) & O.shim_flags);
}

/* The thread's frames into c->fr; returns their count (-1: cache full, reset
 * and retry). *cut: the chain went on past TLM__PY_MAX_FRAMES real frames;
 * then the count is one less, room for the marker frame. */
static int walk(struct pycache *c, uint64_t ts, bool *cut)
{
	*cut = false;
	uint64_t f = rd64(ts, O.ts_frame);
	if (O.cframe_cur >= 0)
		f = ptr_ok(f) ? rd64(f, (uint32_t)O.cframe_cur) : 0;
	int n = 0;
	for (int hop = 0; hop < 256 && ptr_ok(f) && n < (int)TLM__PY_MAX_FRAMES; hop++, f = rd64(f, O.f_back)) {
		uint64_t code = rd64(f, O.f_code);
		if (interp_frame(f, code) || !is_type(code, code_type))
			continue;
		uint32_t ci = code_lookup(c, code);
		if (ci == UINT32_MAX)
			return -1;
		if (ci == UINT32_MAX - 1)
			continue;
		int64_t off;
		if (O.instr_kind == 0)
			off = (int32_t)rd32(f, O.f_instr);
		else if (O.instr_kind == 1)
			off = (int64_t)(int32_t)rd32(f, O.f_instr) * 2;
		else
			off = ((int64_t)rd64(f, O.f_instr) - (int64_t)(code + O.co_code)) / 2;
		c->fr[n].ci = ci;
		c->fr[n].line = line_of(c, &c->code[ci], off);
		n++;
	}
	if (n == (int)TLM__PY_MAX_FRAMES) /* one more user frame? then it is cut */
		for (int hop = 0; hop < 256 && ptr_ok(f); hop++, f = rd64(f, O.f_back)) {
			uint64_t code = rd64(f, O.f_code);
			if (!interp_frame(f, code) && is_type(code, code_type)) {
				*cut = true;
				return n - 1;
			}
		}
	return n;
}

/* One-time check of the offsets on a real frame: code, str and bytes types. */
static bool validate(uint64_t ts)
{
	uint64_t f = rd64(ts, O.ts_frame);
	if (O.cframe_cur >= 0)
		f = ptr_ok(f) ? rd64(f, (uint32_t)O.cframe_cur) : 0;
	for (int hop = 0; hop < 8 && ptr_ok(f); hop++, f = rd64(f, O.f_back)) {
		uint64_t code = rd64(f, O.f_code);
		if (interp_frame(f, code))
			continue;
		int v;
		if (is_type(code, code_type) && is_type(rd64(code, O.co_file), unicode_type) &&
		    is_type(rd64(code, O.co_name), unicode_type) && is_type(rd64(code, O.co_lines), bytes_type))
			v = 1;
		else
			v = -1;
		atomic_store(&validated, v);
		if (v < 0)
			tlm__log("Python 3.%d: the frame layout check failed (not a code object where one was "
				 "expected); native stacks only",
				 O.minor);
		return v > 0;
	}
	return false; /* no frame to check yet */
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

uint32_t tlm__py_get(struct tlm__ring *r, uint32_t native_sid, uint32_t native_gen, bool *fresh, uint32_t *def_slots)
{
	*fresh = false;
	*def_slots = 0;
	if (!py_on())
		return 0;
	uint64_t ts = (uint64_t)(uintptr_t)gil_get();
	if (!ptr_ok(ts))
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
	bool cut;
	int n = walk(c, ts, &cut);
	if (n < 0) {
		reset(c);
		n = walk(c, ts, &cut);
	}
	if (n <= 0)
		return 0;
	/* intern (native sid, (serial, line)...); a cut stack has one key more */
	uint64_t h = mix(0xcbf29ce484222325ull, native_sid);
	for (int i = 0; i < n; i++)
		h = mix(h, (uint64_t)c->code[c->fr[i].ci].serial << 32 | (uint32_t)c->fr[i].line);
	if (cut)
		h = mix(h, UINT64_MAX);
	uint32_t mask = 2 * TLM__PY_STACKS - 1, j = (uint32_t)(h >> 20) & mask;
	for (; c->ms[j].id; j = (j + 1) & mask) {
		struct mstack *m = &c->ms[j];
		if (m->hash != h || m->n != (uint32_t)n + 1 + cut || c->keys[m->off] != native_sid)
			continue;
		int i = 0;
		for (; i < n; i++)
			if (c->keys[m->off + 1 + i] !=
			    ((uint64_t)c->code[c->fr[i].ci].serial << 32 | (uint32_t)c->fr[i].line))
				break;
		if (i == n && (!cut || c->keys[m->off + 1 + n] == UINT64_MAX))
			return m->id | TLM__PY_ID_BIT;
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
		int32_t line = c->fr[i].line;
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
		c->keys[c->key_used++] = (uint64_t)c->code[c->fr[i].ci].serial << 32 | (uint32_t)c->fr[i].line;
	if (cut)
		c->keys[c->key_used++] = UINT64_MAX;
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

/* ---- free flags ---------------------------------------------------------------- */

uint16_t tlm__py_free_flags(void)
{
	if (atomic_load_explicit(&py_state, memory_order_acquire) != 2)
		return 0;
	uint16_t fl = 0;
	if (rd64((uint64_t)(uintptr_t)runtime, O.rt_finalizing))
		fl |= TLM_EVF_FINALIZING;
	uint64_t ts = (uint64_t)(uintptr_t)gil_get();
	if (!ptr_ok(ts))
		return fl;
	uint64_t interp = rd64(ts, 16);
	if (!ptr_ok(interp))
		return fl;
	uint64_t base = O.gc_in_runtime ? (uint64_t)(uintptr_t)runtime : interp;
	if (!rd32(base, O.gc_collecting))
		return fl;
	/* collecting is per interpreter: require that this thread holds the GIL, or
	 * that nobody does (it released it for the call we are in, as ctypes does) */
	void *holder = holder_get ? holder_get() : NULL;
	if (!holder || (uint64_t)(uintptr_t)holder == ts)
		fl |= TLM_EVF_GC_FREED;
	return fl;
}
