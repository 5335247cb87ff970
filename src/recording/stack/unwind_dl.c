/* SPDX-License-Identifier: MIT */
/*
 * unwind_dl.c - libunwind's few entry points, from a private dlopen, and the
 * fork guard around every call into it. See unwind_dl.h for why it is not
 * linked.
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "recording/clock.h"
#include "recording/log.h"
#include "recording/realsym.h"
#include "recording/stack/stack.h"
#include "recording/stack/unwind_dl.h"

struct tlm__unw tlm__unw;
char tlm__unw_why[256];

/* libunwind.h maps unw_step and friends to per-architecture names
 * (_ULx86_64_step): two levels, so the macro expands before it is quoted */
#define NAME2(x) #x
#define NAME(x) NAME2(x)

static void *sym(void *h, const char *name, bool *ok)
{
	void *p = tlm__real_dlsym(h, name);
	if (!p)
		*ok = false;
	return p;
}

/* The copy beside libtlm.so first: the wheel and tests/gpu ship one there,
 * because GPU images often have none (NVIDIA's CUDA images do not), and it is
 * the build tlm was tested with. NULL when there is none. */
static void *open_beside(void)
{
	Dl_info self;
	if (!dladdr((void *)tlm__unw_load, &self) || !self.dli_fname)
		return NULL;
	const char *slash = strrchr(self.dli_fname, '/');
	if (!slash)
		return NULL;
	char path[4096];
	int n = snprintf(path, sizeof path, "%.*s/libunwind.so.8", (int)(slash - self.dli_fname), self.dli_fname);
	if (n <= 0 || (size_t)n >= sizeof path)
		return NULL;
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

bool tlm__unw_load(void)
{
	if (tlm__unw.backtrace)
		return true;
	tlm__resolve_dlsym();
	void *h = open_beside();
	/* RTLD_LOCAL: its _Unwind_* stay out of the host's symbol lookups */
	if (!h && !(h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL))) {
		const char *e = dlerror();
		tlm__log("cannot open libunwind.so.8 (%s): native stacks are off", e);
		snprintf(tlm__unw_why, sizeof tlm__unw_why, "off: cannot open libunwind.so.8 (%s)", e ? e : "?");
		return false;
	}
	bool ok = true;
	struct tlm__unw u = {0};
	u.init_local = (int (*)(unw_cursor_t *, unw_context_t *))sym(h, NAME(unw_init_local), &ok);
	u.step = (int (*)(unw_cursor_t *))sym(h, NAME(unw_step), &ok);
	u.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))sym(h, NAME(unw_get_reg), &ok);
	u.get_save_loc = (int (*)(unw_cursor_t *, int, unw_save_loc_t *))sym(h, NAME(unw_get_save_loc), &ok);
	u.backtrace = (int (*)(void **, int))sym(h, NAME(unw_backtrace), &ok);
	u.set_caching_policy =
		(int (*)(unw_addr_space_t, unw_caching_policy_t))sym(h, NAME(unw_set_caching_policy), &ok);
	unw_addr_space_t *as = (unw_addr_space_t *)sym(h, NAME(unw_local_addr_space), &ok);
#if defined(__x86_64__)
	u.getcontext = (int (*)(unw_context_t *))sym(h, NAME(unw_tdep_getcontext), &ok);
#endif
	if (!ok) {
		tlm__log("libunwind.so.8 lacks an entry point tlm uses: native stacks are off");
		snprintf(tlm__unw_why, sizeof tlm__unw_why, "off: libunwind.so.8 lacks an entry point tlm uses");
		return false; /* the handle stays open: harmless, and closing runs nothing of ours */
	}
	u.local_as = *as;
	u.set_caching_policy(u.local_as, UNW_CACHE_PER_THREAD);
	tlm__unw = u;
	return true;
}

/* An unwind that misses libunwind's caches walks the loaded objects with
 * dl_iterate_phdr, under glibc's loader lock; a fork at that moment would
 * leave the lock held in the child. fork waits for running unwinds to end
 * (tlm__stack_atfork_prepare) and holds new ones back until it is done. */
static _Atomic int unwinding, forking;

void tlm__stack_unwind_enter(void)
{
	for (;;) {
		atomic_fetch_add(&unwinding, 1);
		if (TLM_LIKELY(!atomic_load(&forking)))
			return;
		atomic_fetch_sub(&unwinding, 1);
		while (atomic_load(&forking))
			sched_yield();
	}
}

void tlm__stack_unwind_leave(void)
{
	atomic_fetch_sub(&unwinding, 1);
}

void tlm__stack_atfork_prepare(void)
{
	atomic_store(&forking, 1);
	/* unwinds take microseconds; the bound only guards against a fork from
	 * a signal handler that interrupted an unwind on this very thread */
	uint64_t until = tlm__now_ns() + 2000000000ull;
	while (atomic_load(&unwinding) && tlm__now_ns() < until)
		sched_yield();
}

void tlm__stack_atfork_done(void)
{
	atomic_store(&forking, 0);
}
