/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the writer thread and the ends of a trace (writer.h).
 *
 * The thread wakes every TLM_DRAIN_MS or when kicked and runs one drain
 * (writer_merge.c); this file owns the lock, the trace's state, properties,
 * the final flush, the signal and exec ends and the fork child's reset (the
 * file itself: writer_file.c).
 *
 * Whoever drains holds the writer lock: normally the writer thread; after the
 * final flush, a late producer; in a fatal-signal handler, the faulting thread
 * (if it can take the lock within a bounded time).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "recording/clock.h"
#include "recording/config.h"
#include "recording/forkguard.h"
#include "recording/log.h"
#include "recording/stack/stack.h"
#include "recording/nvml_dl.h"
#include "recording/writer/modules.h"
#include "recording/writer/writer.h"
#include "recording/writer/writer_int.h"

/* Facts about the recording (PROP records), kept so that every trace this
 * process writes (a fork child's too) gets them, whenever they were set. */
#define NPROPS 32
static struct {
	char key[TLM_MAX_PROP_KEY + 1];
	char value[512];
} props[NPROPS];
static size_t nprops;

static struct {
	pthread_t thread;
	/* pthread_create returned 0: thread may be joined. Not writer_spawning,
	 * which is set before W.thread is written (an exit racing the first
	 * event's start must not join it) */
	bool thread_started;
	bool threadless; /* a raw-fork child: no thread is started (writer.h) */
	bool props_live; /* PROP records go straight into the trace */
	uint64_t drained_ns; /* the writer thread's last drain (under the lock) */
	int64_t clock_off;   /* CLOCK_REALTIME - CLOCK_MONOTONIC as the trace last said it */
} W;

TLM_HOT _Atomic int tlm__state;
TLM_TLS bool tlm__starting_here;
TLM_TLS int tlm__term_pending;
void (*tlm__writer_deferred_end)(void);

static _Atomic int wlock;
/* a writer thread is being started (set before pthread_create, so a fork
 * from another thread meanwhile sees it), and it reached writer_main: its
 * start (a sanitizer runtime's allocations in it) is over */
static _Atomic bool writer_spawning, writer_up;
static _Atomic uint32_t kick_word;
static _Atomic uint64_t start_realtime, start_monotonic;

/* ---------------------------------------------------------------- lock */

static TLM_TLS bool holding; /* this thread holds wlock (a signal handler must not wait for it) */
static TLM_TLS bool is_writer;  /* the writer thread (all signals blocked for good) */
static TLM_TLS bool masked;     /* this thread blocked the host's signals while it holds the lock */
static TLM_TLS sigset_t held_mask;

/* A host's signal handler that runs on a thread holding the lock and never
 * returns to it (siglongjmp out, or a thread exit) would leave the lock held
 * for good: every thread would then hang on it. So a thread other than the
 * writer's holds it with the host's asynchronous signals blocked (delivered
 * as soon as it lets go, microseconds later). */
static void block_signals(sigset_t *old)
{
	sigset_t s;
	sigfillset(&s);
	/* faults, and SIGXFSZ, which the trace's writes raise and take back
	 * themselves (fdguard.c) */
	static const int sync_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT, SIGXFSZ};
	for (size_t i = 0; i < sizeof sync_sigs / sizeof sync_sigs[0]; i++)
		sigdelset(&s, sync_sigs[i]);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

static void took(const sigset_t *old)
{
	holding = true;
	if (old) {
		held_mask = *old;
		masked = true;
	}
}

static void lock(void)
{
	sigset_t old;
	if (!is_writer)
		block_signals(&old);
	unsigned spins = 0;
	while (atomic_exchange_explicit(&wlock, 1, memory_order_acquire)) {
		if (++spins > 64)
			sched_yield();
	}
	took(is_writer ? NULL : &old);
}

static bool trylock_for_ms(unsigned ms)
{
	sigset_t old;
	if (!is_writer)
		block_signals(&old);
	uint64_t until = tlm__now_ns() + (uint64_t)ms * 1000000ull;
	while (atomic_exchange_explicit(&wlock, 1, memory_order_acquire)) {
		if (tlm__now_ns() > until) {
			if (!is_writer)
				pthread_sigmask(SIG_SETMASK, &old, NULL);
			return false;
		}
		sched_yield();
	}
	took(is_writer ? NULL : &old);
	return true;
}

/* the host's signal mask back, the lock kept (across an exec) */
static void unmask(void)
{
	if (masked) {
		masked = false;
		pthread_sigmask(SIG_SETMASK, &held_mask, NULL);
	}
}

static void unlock(void)
{
	holding = false;
	atomic_store_explicit(&wlock, 0, memory_order_release);
	unmask();
	if (TLM_UNLIKELY(tlm__term_pending) && !tlm__starting_here && tlm__writer_deferred_end)
		tlm__writer_deferred_end(); /* a termination signal came while this thread drained: does not return */
}

/* ---------------------------------------------------------------- thread */

/* The wall clock moved against the events' clock (set by hand, or stepped
 * by a time daemon or the hypervisor's agent: on the VM this was written on,
 * unsynchronised, it moved by 38.6 s against CLOCK_MONOTONIC in half an
 * hour): a CLOCK record says so, at each drain, so that wall times drawn
 * from event times (the torch-snapshot export's, which PyTorch reads from
 * the wall clock at each event) follow it. A pair whose reads were more
 * than 100 us apart (the thread was preempted between them) is not used;
 * moves under 1 ms (a slew, a read's own spread) are not written. Every
 * full drain checks (drain(), below): the writer thread's, those of a
 * process without one (writer.h, threadless), the last before an exec and
 * the last before END; a producer's helping drain (no allocation) does not. */
static uint64_t realtime_ns(void)
{
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	return (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
}

static void clock_check(void)
{
	uint64_t na = tlm__now_ns(), nr = realtime_ns(), nb = tlm__now_ns();
	if (nb - na > 100000 || !tlm__wf.tw || tlm__wf.failed)
		return;
	uint64_t mono = na + (nb - na) / 2;
	int64_t off = (int64_t)(nr - mono);
	if ((uint64_t)off - (uint64_t)W.clock_off + 999999 < 1999999) /* |moved| < 1 ms, without overflow */
		return;
	tlm__wf_check(tlm_tw_clock(tlm__wf.tw, &(struct tlm_rec_clock){mono, nr}));
	W.clock_off = off;
}

/* A drain, then the clock's check: every drain of this file's, so that none
 * leaves the trace's last events on a wall clock it has not said */
static void drain(void)
{
	tlm__wm_drain(false);
	clock_check();
}

static void *writer_main(void *arg)
{
	(void)arg;
	atomic_store_explicit(&writer_up, true, memory_order_release);
	prctl(PR_SET_NAME, "tlm-writer", 0, 0, 0);
	is_writer = true;
	tlm__wd_writer_thread(); /* NVML is asked from here */
	for (;;) {
		if (!atomic_exchange_explicit(&kick_word, 0, memory_order_acq_rel)) {
			struct timespec to = {tlm__cfg.drain_ms / 1000, (long)(tlm__cfg.drain_ms % 1000) * 1000000L};
			syscall(SYS_futex, (uint32_t *)&kick_word, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
			atomic_store_explicit(&kick_word, 0, memory_order_relaxed);
		}
		if (TLM_UNLIKELY(tlm__cfg.writer_delay_ms)) {
			struct timespec d = {tlm__cfg.writer_delay_ms / 1000, (long)(tlm__cfg.writer_delay_ms % 1000) * 1000000L};
			nanosleep(&d, NULL);
		}
		lock();
		int st = atomic_load_explicit(&tlm__state, memory_order_acquire);
		if (st == TLM__STARTING) {
			/* the starting thread has not said RUNNING yet (descheduled
			 * on a loaded machine): this is no end, wait for it */
			unlock();
			continue;
		}
		if (st != TLM__RUNNING) {
			unlock();
			return NULL;
		}
		drain();
		W.drained_ns = tlm__now_ns();
		unlock();
	}
}

void tlm__writer_kick(void)
{
	if (!atomic_exchange_explicit(&kick_word, 1, memory_order_acq_rel))
		syscall(SYS_futex, (uint32_t *)&kick_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* ---------------------------------------------------------- properties */

void tlm__writer_prop(const char *key, const char *value)
{
	lock();
	size_t i = 0;
	while (i < nprops && strcmp(props[i].key, key))
		i++;
	if (i == NPROPS) {
		unlock();
		return; /* the keys are ours and few: cannot happen */
	}
	nprops += i == nprops;
	snprintf(props[i].key, sizeof props[i].key, "%s", key);
	snprintf(props[i].value, sizeof props[i].value, "%s", value);
	if (W.props_live && !tlm__wf.failed)
		tlm__wf_check(tlm_tw_prop(tlm__wf.tw, props[i].key, props[i].value));
	unlock();
}

/* Caller holds the lock; a new trace gets every property set so far. */
static void props_start(void)
{
	for (size_t i = 0; i < nprops && !tlm__wf.failed; i++)
		tlm__wf_check(tlm_tw_prop(tlm__wf.tw, props[i].key, props[i].value));
	W.props_live = true;
}

void tlm__writer_note_start(void)
{
	atomic_store(&start_realtime, realtime_ns());
	atomic_store(&start_monotonic, tlm__now_ns());
}

/* The status the process exits with (exit(), or main's return), as the
 * property exit.status written before END: the report tells an OOM the
 * process died of from one it survived. on_exit handlers run before the
 * libraries' destructors only when registered after the loader's own
 * (__libc_start_main's): hence here, at the trace's start, not in our
 * constructor. A fork child inherits it and writes its own trace's. */
static void exit_note(int status, void *arg)
{
	(void)arg;
	if (atomic_load_explicit(&tlm__state, memory_order_acquire) != TLM__RUNNING || !tlm__forkguard_owner())
		return;
	char v[16];
	snprintf(v, sizeof v, "%d", status);
	tlm__writer_prop("exit.status", v);
}

int tlm__writer_start(void)
{
	static atomic_flag noted = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&noted))
		on_exit(exit_note, NULL);
	if (!atomic_load(&start_realtime))
		tlm__writer_note_start();
	if (tlm__wf_open(atomic_load(&start_realtime), atomic_load(&start_monotonic)) != 0)
		return -1;
	lock();
	W.clock_off = (int64_t)(atomic_load(&start_realtime) - atomic_load(&start_monotonic));
	tlm__wi_prepare();
	tlm__wf_check(tlm__modules_sync(tlm__wf.tw));
	props_start();
	W.drained_ns = tlm__now_ns(); /* its first drain is due within TLM_DRAIN_MS */
	unlock();
	if (!tlm__cfg.nvml_off)
		tlm__nvml_open(); /* here, not on the writer thread (nvml_dl.c) */
	if (W.threadless)
		return 0;
	/* the writer must never take the host's signals */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&writer_spawning, true);
	int rc = pthread_create(&W.thread, NULL, writer_main, NULL);
	if (rc != 0)
		atomic_store(&writer_spawning, false);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	W.thread_started = rc == 0;
	if (rc != 0)
		tlm__log("cannot start the writer thread: %s; events are written synchronously", strerror(rc));
	return 0;
}

bool tlm__writer_threadless(void)
{
	return W.threadless;
}

/* Drains on the calling thread: when there is no writer thread (start
 * failed, after the final flush) or before dlclose/exec. */
void tlm__writer_drain_sync(void)
{
	lock();
	drain();
	unlock();
}

/* The same, waiting at most ms for the lock: before a host's dlclose, which
 * may come from inside a dl_iterate_phdr callback (the loader lock held)
 * while the writer thread, holding our lock, waits for that loader lock in
 * its module scan. Giving up costs only the symbols of stacks into an
 * object that is really unloaded; waiting would hang the host. */
bool tlm__writer_drain_sync_bounded(unsigned ms)
{
	if (!trylock_for_ms(ms))
		return false;
	drain();
	unlock();
	return true;
}

/* A producer whose ring stayed full for 2 ms (recorder.c): with the writer
 * thread alive but not scheduled, drain as the hot path may (no allocation,
 * no loader lock: tlm__wm_drain_help); with none, or none that drained for
 * a second past two of its intervals (what the producer leaves may wait for
 * it), do all of its work. */
void tlm__writer_help_drain(void)
{
	lock();
	uint64_t late_ns = 1000000000ull + 2ull * tlm__cfg.drain_ms * 1000000ull;
	if (atomic_load_explicit(&tlm__state, memory_order_acquire) == TLM__RUNNING && W.thread_started &&
	    tlm__now_ns() - W.drained_ns < late_ns)
		tlm__wm_drain_help(); /* the writer thread, on time, checks the clock itself */
	else {
		drain();
	}
	unlock();
}

/* ---------------------------------------------------------------- ends */

void tlm__writer_finish(void)
{
	lock();
	if (atomic_load_explicit(&tlm__state, memory_order_acquire) != TLM__RUNNING) {
		unlock();
		return;
	}
	drain();
	/* give producers caught mid-event a moment to publish */
	for (int i = 0; i < 20 && tlm__wf.next_seq < atomic_load(&tlm__seq); i++) {
		struct timespec ms = {0, 500000};
		nanosleep(&ms, NULL);
		drain();
	}
	tlm__wm_drain_final();
	clock_check();
	tlm__stack_report();
	if (tlm__wf.order_errors)
		tlm__log("internal error: %llu events out of sequence", (unsigned long long)tlm__wf.order_errors);
	W.props_live = false; /* nothing after END */
	if (!tlm__wf.failed) {
		tlm__wf_check(tlm_tw_end(tlm__wf.tw, tlm__now_ns()));
	}
	atomic_store_explicit(&tlm__state, TLM__CLOSED, memory_order_release);
	unlock();
	tlm__writer_kick(); /* the thread sees CLOSED and exits at once */
	if (W.thread_started && !pthread_equal(W.thread, pthread_self())) {
		pthread_join(W.thread, NULL);
		W.thread_started = false;
	}
}

void tlm__writer_signal(int signo, bool py_exit)
{
	if (!tlm__wf.tw || !trylock_for_ms(200))
		return;
	tlm__wm_drain(true);
	if (!tlm__wf.failed && py_exit)
		tlm__wf_check(tlm_tw_prop(tlm__wf.tw, "signal.during", "python-exit"));
	if (!tlm__wf.failed) {
		tlm__wf_check(tlm_tw_signal(tlm__wf.tw, signo));
		tlm__wf_check(tlm_tw_flush(tlm__wf.tw));
	}
	unlock();
}

void tlm__writer_end_now(int signo, const char *how)
{
	/* the writer may be descheduled holding the lock on a loaded machine:
	 * wait for it, unless this very thread holds it (a handler that
	 * interrupted a drain), bounded all the same */
	if (!tlm__wf.tw)
		return;
	if (holding) { /* finish the drain it interrupted first: unlock() ends the trace */
		if (signo)
			tlm__term_pending = signo;
		return;
	}
	if (!trylock_for_ms(5000))
		return;
	if (atomic_load_explicit(&tlm__state, memory_order_acquire) != TLM__RUNNING) {
		unlock();
		return;
	}
	/* every call that returned before us is below this; a thread still inside
	 * a call holds the watermark until it returns, which on a loaded machine
	 * can take a few time slices: wait for it, at most 1 s */
	uint64_t target = atomic_load(&tlm__seq), until = tlm__now_ns() + 1000000000ull;
	tlm__wm_drain(true);
	while (tlm__wf.next_seq < target && tlm__now_ns() < until) {
		struct timespec t = {0, 200000};
		nanosleep(&t, NULL);
		tlm__wm_drain(true);
	}
	if (!tlm__wf.failed) {
		if (signo)
			tlm__wf_check(tlm_tw_signal(tlm__wf.tw, signo));
		else {
			tlm__wf_check(tlm_tw_prop(tlm__wf.tw, "end", how));
			tlm__wf_check(tlm_tw_end(tlm__wf.tw, tlm__now_ns()));
		}
		tlm__wf_check(tlm_tw_flush(tlm__wf.tw));
	}
	atomic_store_explicit(&tlm__state, TLM__CLOSED, memory_order_release);
	/* the lock stays held: the process is going */
}

static bool exec_locked;

void tlm__writer_exec_begin(void)
{
	lock();
	if (atomic_load_explicit(&tlm__state, memory_order_acquire) != TLM__RUNNING || !tlm__wf.tw) {
		unlock();
		return;
	}
	drain();
	if (!tlm__wf.failed) {
		tlm__wf_check(tlm_tw_prop(tlm__wf.tw, "end", "exec"));
		tlm__wf_check(tlm_tw_flush(tlm__wf.tw));
	}
	exec_locked = true;
	unmask(); /* the new image starts with the host's mask */
}

void tlm__writer_exec_failed(void)
{
	if (!exec_locked)
		return;
	exec_locked = false;
	if (!tlm__wf.failed)
		tlm__wf_check(tlm_tw_prop(tlm__wf.tw, "end", "")); /* not the end after all */
	unlock();
}

const char *tlm__writer_path(void)
{
	return tlm__wf.tw ? tlm__wf.path : NULL;
}

/* ---------------------------------------------------------------- fork */

/* The writer thread holds no lock of the C library or of a sanitizer runtime
 * at the fork, which the child would wait for forever: not draining (the
 * lock), and past its start, where ASan allocates (the child's writer start
 * waited for that allocator lock in 45 of 1500 forks made right after the
 * first event; tests/shim/test_lifecycle.c). Bounded: a second at most. */
void tlm__writer_atfork_prepare(void)
{
	lock();
	uint64_t until = tlm__now_ns() + 1000000000ull;
	while (atomic_load(&writer_spawning) && !atomic_load_explicit(&writer_up, memory_order_acquire) &&
	       tlm__now_ns() < until) {
		struct timespec d = {0, 100000};
		nanosleep(&d, NULL);
	}
}

void tlm__writer_atfork_parent(void)
{
	unlock();
}

/* The child has only the forking thread: it drops the parent's trace (that
 * file stays the parent's) and starts its own at its first event. */
void tlm__writer_atfork_child(bool raw)
{
	int s = atomic_load(&tlm__state);
	tlm__wf_drop_child();
	tlm__wm_reset_child();
	tlm__wi_reset();
	W.thread_started = false;
	atomic_store(&writer_spawning, false);
	atomic_store(&writer_up, false);
	/* a fork of a raw-fork child inherits the locks its parent inherited */
	W.threadless = raw || W.threadless;
	W.props_live = false;
	tlm__modules_reset();
	tlm__ring_reset_all_child();
	tlm__writer_note_start();
	if (s != TLM__OFF)
		atomic_store(&tlm__state, TLM__UNINIT);
	atomic_store(&kick_word, 0);
	unlock();
}
