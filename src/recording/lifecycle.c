/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c - load, the trace's start, fork, exec, dlclose and exit
 * (lifecycle.h).
 *
 * The trace starts at the first recorded event, not at load time, so the
 * many processes that inherit LD_PRELOAD but never touch CUDA leave no file;
 * this also makes a CUDA call that runs before our constructor safe. At exit
 * a destructor (which runs after those of libcuda and libcudart, loaded after
 * us) drains everything and writes the END record; events after that are
 * written synchronously by the thread that makes them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "recording/clock.h"
#include "recording/config.h"
#include "recording/exit_paths.h"
#include "recording/lifecycle.h"
#include "recording/log.h"
#include "recording/realsym.h"
#include "recording/recorder.h"
#include "recording/reserved_table.h"
#include "recording/ring.h"
#include "recording/stack/stack.h"
#include "recording/writer/summary.h"

static atomic_int config_loaded;

static void load_config_once(void)
{
	if (!atomic_exchange(&config_loaded, 1)) {
		tlm__config_load();
		if (!tlm__cfg.disabled)
			tlm__log_keep_stderr(); /* the stderr the program started with, for our lines */
		tlm__clock_init();
		tlm__stack_init();
		tlm__rt_init(); /* the table of live device allocations, before any event */
		tlm__ring_layout(sizeof(struct tlm__stk_cache), tlm__writer_ring_bytes(tlm__cfg.ring_slots));
	}
}

void tlm__config_ensure(void)
{
	load_config_once();
}

bool tlm__start_slow(void)
{
	int expect = TLM__UNINIT;
	if (atomic_compare_exchange_strong(&tlm__state, &expect, TLM__STARTING)) {
		tlm__starting_here = true;
		load_config_once();
		if (!tlm__cfg.disabled)
			tlm__job_props();
		if (tlm__cfg.disabled || tlm__writer_start() != 0) {
			atomic_store_explicit(&tlm__state, TLM__OFF, memory_order_release);
			tlm__starting_here = false;
			if (TLM_UNLIKELY(tlm__term_pending))
				tlm__exit_term_deferred();
			return false;
		}
		atomic_store_explicit(&tlm__state, TLM__RUNNING, memory_order_release);
		tlm__starting_here = false;
		if (TLM_UNLIKELY(tlm__term_pending)) /* SIGTERM & co. while the trace opened */
			tlm__exit_term_deferred();
		return true;
	}
	/* another thread is starting the trace: wait for it (bounded by its I/O) */
	while ((expect = atomic_load_explicit(&tlm__state, memory_order_acquire)) == TLM__STARTING)
		sched_yield();
	return expect == TLM__RUNNING || expect == TLM__CLOSED;
}

/* ---------------------------------------------------------------- fork */

static void atfork_prepare(void)
{
	tlm__stack_atfork_prepare();
	tlm__writer_atfork_prepare();
}
static void atfork_parent(void)
{
	tlm__writer_atfork_parent();
	tlm__stack_atfork_done();
}
static void atfork_child(void)
{
	if (tlm__fork_mark && *tlm__fork_mark)
		return; /* reset already, at a CUDA call from an earlier atfork handler */
	tlm__lifecycle_child_reset(false);
}

/* A child starts with only the forking thread and none of the parent's
 * trace; also run for a child made without atfork handlers (forkguard.c). */
void tlm__lifecycle_child_reset(bool raw)
{
	tlm__forkguard_arm();
	tlm__stack_atfork_done();
	tlm__exit_paths_child();
	tlm__rec_atfork_child();
	tlm__writer_atfork_child(raw);
	tlm__job_props_forked();
}

/* The slow paths' question: this process owns the state (a child made
 * without fork() is reset first, and then owns its own). */
static bool mine(void)
{
	if (tlm__forkguard_raw_child())
		tlm__lifecycle_child_reset(true);
	return tlm__forkguard_owner();
}

/* ---------------------------------------------------------------- load/exit */

__attribute__((constructor)) static void tlm_init(void)
{
	tlm__writer_note_start();
	tlm__forkguard_init();
	load_config_once();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (tlm__cfg.disabled) {
		int expect = TLM__UNINIT;
		atomic_compare_exchange_strong(&tlm__state, &expect, TLM__OFF);
		return;
	}
	if (tlm__cfg.signals)
		tlm__exit_paths_init();
}

__attribute__((destructor)) static void tlm_fini(void)
{
	/* a vfork child that calls exit() shares our memory: hands off (but see
	 * exit_paths.c: the parent's exit would not run us any more) */
	if (!mine()) {
		tlm__exit_vfork_child();
		return;
	}
	if (atomic_load(&tlm__state) != TLM__RUNNING)
		return;
	tlm__writer_finish();
	tlm__summary(tlm__writer_path());
}

/* ---------------------------------------------------------------- exec */

/* exec replaces the image without running destructors: write what the rings
 * hold first, marked as ended by exec, and keep the writer lock across the
 * call so that no chunk is cut. When the exec fails the trace goes on as if
 * nothing happened. The new image (LD_PRELOAD is inherited) starts its own. */
static bool before_exec(void)
{
	/* a vfork child shares our memory but is not us: leave the trace alone */
	if (!mine() || atomic_load(&tlm__state) != TLM__RUNNING)
		return false;
	tlm__writer_exec_begin();
	return true;
}

static int after_exec_failed(bool began, int rc)
{
	int e = errno;
	if (began)
		tlm__writer_exec_failed();
	errno = e;
	return rc;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static void *real(const char *name)
{
	tlm__resolve_dlsym();
	return tlm__real_dlsym(RTLD_NEXT, name);
}

TLM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	static execve_fn f;
	if (!f)
		f = (execve_fn)real("execve");
	bool began = before_exec();
	return after_exec_failed(began, f(path, argv, envp));
}

TLM_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

TLM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static execvpe_fn f;
	if (!f)
		f = (execvpe_fn)real("execvpe");
	bool began = before_exec();
	return after_exec_failed(began, f(file, argv, envp));
}

TLM_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

TLM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	static fexecve_fn f;
	if (!f)
		f = (fexecve_fn)real("fexecve");
	bool began = before_exec();
	return after_exec_failed(began, f(fd, argv, envp));
}

/* execl* build an argv on the stack and take the execv* path above */
#define COLLECT_ARGS(first, ap, argv, envp_out)                            \
	size_t n = 1;                                                          \
	va_start(ap, first);                                                   \
	while (va_arg(ap, char *))                                             \
		n++;                                                               \
	va_end(ap);                                                            \
	char *argv[n + 1];                                                     \
	argv[0] = (char *)first;                                               \
	va_start(ap, first);                                                   \
	for (size_t i = 1; i <= n; i++)                                        \
		argv[i] = va_arg(ap, char *);                                      \
	envp_out;                                                              \
	va_end(ap)

TLM_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execve(path, argv, environ);
}

TLM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return execvpe(file, argv, environ);
}

TLM_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **envp;
	COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}

/* dlclose: write out the stacks that may point into the object first, while
 * the module map still holds it. */
TLM_EXPORT int dlclose(void *handle)
{
	int s = atomic_load(&tlm__state);
	if ((s == TLM__RUNNING || s == TLM__CLOSED) && mine())
		tlm__writer_drain_sync_bounded(200);
	return tlm__real_dlclose(handle);
}

/* ---- tlm_debug_pause: tlm's own cost inside one process ---------------- */

TLM_HOT _Atomic bool tlm__paused;

/* For benchmarks (tests/bench/torch_zoo.py --tlm-ab): the program's steps
 * are recorded and not, in turn, so that tlm's cost is read inside one
 * process, as PyTorch's recorder's is, not as the difference of separate
 * runs that a shared machine's noise swamps. A paused trace misses events,
 * so it works only with TLM_DEBUG_PAUSE=1; otherwise it does nothing and
 * returns -1. Pausing first drains what was recorded, on the calling thread,
 * so that the writer's work for the recorded steps is done (and timed)
 * before they count as ended. Not for use in a run whose trace matters. */
TLM_EXPORT int tlm_debug_pause(int paused)
{
	load_config_once();
	if (!tlm__cfg.debug_pause)
		return -1;
	if (paused)
		tlm_debug_drain();
	atomic_store_explicit(&tlm__paused, paused != 0, memory_order_relaxed);
	return 0;
}

/* The same drain alone (TLM_DEBUG_PAUSE=1 only): the writer's work so far,
 * done now on the calling thread. */
TLM_EXPORT int tlm_debug_drain(void)
{
	load_config_once();
	if (!tlm__cfg.debug_pause)
		return -1;
	if (atomic_load_explicit(&tlm__state, memory_order_acquire) == TLM__RUNNING)
		tlm__writer_drain_sync();
	return 0;
}
