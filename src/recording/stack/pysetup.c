/* SPDX-License-Identifier: MIT */
/*
 * pysetup.c - the interpreter's layout for pystack.c: symbols, the offset
 * table of CPython 3.8-3.12 and 3.13's _Py_DebugOffsets, set up once; and
 * the GC and finalization flags a free carries (docs/recording.md, "Python
 * stacks"). Nothing here runs an interpreter function but the set-up's
 * version and initialisation queries and the thread-state reads.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "recording/config.h"
#include "recording/log.h"
#include "recording/realsym.h"
#include "recording/stack/stack.h"
#include "recording/stack/pystack.h"
#include "recording/stack/pystack_int.h"
#include "tlm/event.h"



static const struct tlm__pyoff table[] = {
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

TLM_HOT struct tlm__pyoff tlm__pyo;
TLM_HOT void *(*tlm__py_gil_get)(void);
void *(*tlm__py_holder_get)(void);
const void *tlm__py_code_type, *tlm__py_unicode_type, *tlm__py_bytes_type;
const char *tlm__py_runtime;
TLM_HOT _Atomic int tlm__py_state;
_Atomic uint64_t tlm__py_code_deaths;
TLM_HOT bool tlm__py_deaths_on;

static void *pysym(const char *name)
{
	tlm__resolve_dlsym();
	void *p = tlm__real_dlsym ? tlm__real_dlsym(RTLD_DEFAULT, name) : NULL;
	return p ? p : tlm__loaded_sym("libpython", name);
}

static bool setup_313(void)
{
	/* _Py_DebugOffsets at the start of _PyRuntime: cookie, version, then offsets */
	if (memcmp(tlm__py_runtime, "xdebugpy", 8))
		return false;
	uint64_t ver;
	memcpy(&ver, tlm__py_runtime + 8, 8);
	if ((ver >> 16) != 0x030d)
		return false;
#define DO(pos) ((uint32_t)*(const uint64_t *)(const void *)(tlm__py_runtime + (pos)))
	tlm__pyo.ts_frame = DO(184);
	tlm__pyo.f_back = DO(232);
	tlm__pyo.f_code = DO(240);
	tlm__pyo.f_instr = DO(248);
	tlm__pyo.f_owner = DO(264);
	tlm__pyo.co_file = DO(280);
	tlm__pyo.co_name = DO(296);
	tlm__pyo.co_lines = DO(304);
	tlm__pyo.co_first = DO(312);
	tlm__pyo.co_code = DO(344);
	uint32_t ascii = DO(560);
#undef DO
	if (ascii != 40 || tlm__pyo.co_first > 4096 || tlm__pyo.ts_frame > 4096)
		return false;
	/* co_flags is not among the debug offsets: it sits five ints before co_firstlineno
	 * (co_flags, argcount, posonlyargcount, kwonlyargcount, stacksize, firstlineno) */
	tlm__pyo.co_flags = tlm__pyo.co_first - 20;
	return true;
}

/* ---- code deaths ---------------------------------------------------------------- */

/* PyTypeObject: tp_name at 24, tp_dealloc at 48 (release builds; a Py_TRACE_REFS
 * build puts two pointers first, and its tp_name check below fails) */
enum { TP_NAME = 24, TP_DEALLOC = 48 };
static void (*code_dealloc_real)(void *);

/* Every code object's death goes through its type's tp_dealloc (_Py_Dealloc;
 * PyCode_Type cannot be subclassed). Counted before the object is freed, so a
 * new code object at its address is made after the count moved. */
static void code_dealloc_counted(void *o)
{
	atomic_fetch_add_explicit(&tlm__py_code_deaths, 1, memory_order_seq_cst);
	code_dealloc_real(o);
}

struct writable {
	uintptr_t addr;
	int ok; /* 1: in a writable PT_LOAD and not in its object's RELRO */
};

static int find_writable(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct writable *w = arg;
	bool in_load = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
		if (w->addr < lo || w->addr + 8 > hi)
			continue;
		if (p->p_type == PT_GNU_RELRO)
			return w->ok = -1, 1;
		if (p->p_type == PT_LOAD)
			in_load = (p->p_flags & PF_W) != 0;
	}
	if (in_load)
		w->ok = 1;
	return 0;
}

/* Counts code objects' deaths (tlm__py_code_deaths) by putting a counting
 * function in PyCode_Type's tp_dealloc, when its layout is the one expected
 * and the slot lies in writable memory. Without it, the walk checks each
 * code's signature (pywalk.c). */
static void count_code_deaths(void)
{
	const char *t = tlm__py_code_type;
	const char *name;
	void (*dealloc)(void *);
	memcpy(&name, t + TP_NAME, sizeof name);
	memcpy(&dealloc, t + TP_DEALLOC, sizeof dealloc);
	if (!name || strcmp(name, "code") != 0 || !dealloc)
		return;
	struct writable w = {(uintptr_t)(t + TP_DEALLOC), 0};
	dl_iterate_phdr(find_writable, &w);
	if (w.ok != 1)
		return;
	code_dealloc_real = dealloc;
	__atomic_store_n((void (**)(void *))(uintptr_t)(t + TP_DEALLOC), code_dealloc_counted, __ATOMIC_SEQ_CST);
	tlm__py_deaths_on = true;
}

/* Returns 2 (on), 3 (off for good) or 0 (not yet: interpreter not initialised). */
static int setup(void)
{
	if (tlm__cfg.python_off)
		return 3;
	tlm__py_gil_get = (void *(*)(void))pysym("PyGILState_GetThisThreadState");
	int (*inited)(void) = (int (*)(void))pysym("Py_IsInitialized");
	if (!tlm__py_gil_get || !inited)
		return 3; /* not a Python process (now); native stacks only */
	if (!inited())
		return 0;
	const char *(*getver)(void) = (const char *(*)(void))pysym("Py_GetVersion");
	tlm__py_code_type = pysym("PyCode_Type");
	tlm__py_unicode_type = pysym("PyUnicode_Type");
	tlm__py_bytes_type = pysym("PyBytes_Type");
	tlm__py_runtime = pysym("_PyRuntime");
	int major = 0, minor = 0;
	if (getver)
		(void)sscanf(getver(), "%d.%d", &major, &minor);
	if (!tlm__py_code_type || !tlm__py_unicode_type || !tlm__py_bytes_type || !tlm__py_runtime || major != 3) {
		tlm__log("Python %d.%d: interpreter symbols not found; native stacks only", major, minor);
		return 3;
	}
	bool found = false;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].minor == minor) {
			tlm__pyo = table[i];
			found = true;
		}
	if (!found || (minor == 13 && !setup_313())) {
		tlm__log("Python 3.%d is not supported for Python stacks (3.8 to 3.13 are); native stacks only",
			 minor);
		return 3;
	}
	tlm__stack_interp_found((const void *)tlm__py_gil_get);
	count_code_deaths();
	tlm__py_holder_get = (void *(*)(void))pysym(minor >= 13 ? "PyThreadState_GetUnchecked"
							: "_PyThreadState_UncheckedGet");
	return 2;
}

bool tlm__py_on_slow(void)
{
	int s = atomic_load_explicit(&tlm__py_state, memory_order_acquire);
	if (s == 2)
		return true;
	if (s != 0)
		return false;
	int expect = 0;
	if (!atomic_compare_exchange_strong(&tlm__py_state, &expect, 1))
		return false; /* another thread sets up: this event goes without */
	s = setup();
	atomic_store_explicit(&tlm__py_state, s, memory_order_release);
	return s == 2;
}

/* ---- free flags ---------------------------------------------------------------- */

uint16_t tlm__py_free_flags(uint64_t ts)
{
	if (atomic_load_explicit(&tlm__py_state, memory_order_acquire) != 2)
		return 0;
	uint16_t fl = 0;
	if (tlm__py_rd64((uint64_t)(uintptr_t)tlm__py_runtime, tlm__pyo.rt_finalizing))
		fl |= TLM_EVF_FINALIZING;
	if (ts == TLM__PY_TS_ASK)
		ts = (uint64_t)(uintptr_t)tlm__py_gil_get();
	if (!tlm__py_ptr_ok(ts))
		return fl;
	uint64_t interp = tlm__py_rd64(ts, 16);
	if (!tlm__py_ptr_ok(interp))
		return fl;
	uint64_t base = tlm__pyo.gc_in_runtime ? (uint64_t)(uintptr_t)tlm__py_runtime : interp;
	if (!tlm__py_rd32(base, tlm__pyo.gc_collecting))
		return fl;
	/* collecting is per interpreter: require that this thread holds the GIL, or
	 * that nobody does (it released it for the call we are in, as ctypes does) */
	void *holder = tlm__py_holder_get ? tlm__py_holder_get() : NULL;
	if (!holder || (uint64_t)(uintptr_t)holder == ts)
		fl |= TLM_EVF_GC_FREED;
	return fl;
}
