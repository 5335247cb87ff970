/* SPDX-License-Identifier: MIT */
/*
 * exit_paths.c - ends that skip destructors: _exit/_Exit, the termination
 * signals at their default action, the fatal signals and a vfork child's
 * exit() (exit_paths.h has the contract).
 *
 * On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT tlm writes what the rings
 * hold (without allocating) and a SIGNAL record, then chains to the previous
 * handler or the default action.
 *
 * _exit (os._exit, every multiprocessing worker) writes what the rings hold
 * and END marked "_exit". For SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and
 * SIGUSR2 left at SIG_DFL our handler stands in for the default: it writes
 * the rings and a SIGNAL record, puts SIG_DFL back and raises the signal
 * again, so the process dies of it with the same status (and core).
 *
 * The host must not see the difference: sigaction() and signal() are
 * interposed for these signals and report the disposition the host set (a
 * Python interpreter installs its SIGINT handler only over SIG_DFL). When the
 * host sets a handler or SIG_IGN it gets exactly that; when it sets SIG_DFL
 * again ours comes back. Dispositions set by raw syscalls bypass this.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "recording/exit_paths.h"
#include "recording/forkguard.h"
#include "recording/guard.h"
#include "recording/realsym.h"
#include "recording/ring.h"
#include "recording/writer/summary.h"
#include "recording/writer/writer.h"

#define RTLD_NEXT_HANDLE ((void *)-1l)
/* Sanitizer runtimes install their handlers through sigaction while they
 * start, before they can run instrumented code: that path is not
 * instrumented (as dlsym's, procaddr.c). */
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

static const int term_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NTERM (sizeof term_sigs / sizeof term_sigs[0])

struct view {
	atomic_int owned;      /* our handler is installed in the host's SIG_DFL place */
	struct sigaction host; /* what the host set (or found) while owned */
};
static struct view views[NTERM];
static atomic_int active;

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static _Atomic(sigaction_fn) real_sa;

NO_SANITIZE static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn f = atomic_load_explicit(&real_sa, memory_order_acquire);
	if (!f) {
		tlm__resolve_dlsym();
		f = (sigaction_fn)tlm__real_dlsym(RTLD_NEXT_HANDLE, "sigaction");
		if (!f) {
			errno = ENOSYS;
			return -1;
		}
		atomic_store_explicit(&real_sa, f, memory_order_release);
	}
	return f(sig, act, old);
}

NO_SANITIZE static int term_index(int sig)
{
	for (size_t k = 0; k < NTERM; k++)
		if (term_sigs[k] == sig)
			return (int)k;
	return -1;
}

/* ------------------------------------------------------- fatal signals */

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction prev_action[NFATAL];
static atomic_int in_fatal;
/* CPython's "is the interpreter finalizing" (_Py_IsFinalizing up to 3.12,
 * Py_IsFinalizing from 3.13), looked up at init: a thread that asks for the
 * GIL after finalization began is ended with pthread_exit, whose forced
 * unwind through a C++ noexcept frame (PyTorch's autograd thread releasing
 * its last graph task) is std::terminate: SIGABRT. Reading it is one
 * atomic load, safe in a handler. */
static int (*py_finalizing)(void);

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
	size_t k = 0;
	while (k < NFATAL && fatal_signals[k] != sig)
		k++;
	int s = atomic_load(&tlm__state);
	if (!atomic_exchange(&in_fatal, 1) && (s == TLM__RUNNING || s == TLM__CLOSED))
		tlm__writer_signal(sig, sig == SIGABRT && py_finalizing && py_finalizing());
	/* chain: the previous handler, or the default action */
	struct sigaction *p = &prev_action[k];
	if (k < NFATAL && (p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
		p->sa_sigaction(sig, info, uctx);
		return;
	}
	if (k < NFATAL && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	if (info && info->si_code <= 0) /* sent by kill/raise: send again */
		raise(sig);
	/* a fault returns to the faulting instruction and faults again, now fatal */
}

static void install_fatal(void)
{
	for (size_t k = 0; k < NFATAL; k++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_fatal;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		struct sigaction old;
		if (sigaction(fatal_signals[k], NULL, &old) != 0)
			continue;
		if (old.sa_handler == SIG_IGN) /* the host ignores it: leave it so */
			continue;
		prev_action[k] = old;
		sigaction(fatal_signals[k], &sa, NULL);
	}
}

/* ---------------------------------------------------------------- the ends */

static void die_of(int sig, bool mine)
{
	int k = term_index(sig);
	if (mine && k >= 0)
		atomic_store(&views[k].owned, 0);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
	/* blocked while the handler runs: delivered, with the default action,
	 * as soon as it returns (at once outside a handler) */
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

/* An end that comes while another thread opens the trace (its first event)
 * waits for it, bounded: the trace then says how the process ended. */
static int state_settled(void)
{
	int s = atomic_load(&tlm__state);
	for (int i = 0; s == TLM__STARTING && !tlm__starting_here && i < 5000; i++) {
		struct timespec t = {0, 200000};
		nanosleep(&t, NULL);
		s = atomic_load(&tlm__state);
	}
	return s;
}

static void on_term(int sig, siginfo_t *info, void *uctx)
{
	(void)info;
	(void)uctx;
	int saved = errno;
	bool mine = tlm__forkguard_owner(); /* false in a vfork child: shared memory, hands off */
	if (mine && tlm__starting_here && atomic_load(&tlm__state) == TLM__STARTING) {
		tlm__term_pending = sig; /* this thread is opening the trace: end it once open */
		errno = saved;
		return;
	}
	if (mine && state_settled() == TLM__RUNNING) {
		/* interrupted inside a hooked call: that call never returns (the
		 * process ends here), so its event (not published) must not hold
		 * the others back; nor is it lost: the call did not return */
		struct tlm__ring *r = tlm__in_hook() ? tlm__ring_peek() : NULL;
		if (r)
			atomic_store_explicit(&r->inflight, UINT64_MAX, memory_order_seq_cst);
		tlm__writer_end_now(sig, NULL);
	}
	if (mine && tlm__term_pending)
		return; /* this thread was draining: the drain ends, then the trace, then the process */
	die_of(sig, mine);
	errno = saved;
}

void tlm__exit_term_deferred(void)
{
	int sig = tlm__term_pending;
	tlm__term_pending = 0;
	if (atomic_load(&tlm__state) == TLM__RUNNING)
		tlm__writer_end_now(sig, NULL);
	/* not in its handler any more: the end held the host's signals (it keeps
	 * the writer lock), so let this one through */
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	die_of(sig, true);
	for (;;) /* not reached: the signal is unblocked here */
		syscall(SYS_exit_group, 128 + sig);
}

static TLM_TLS int self_install; /* our own handler is on its way through a sanitizer's sigaction */
static sigaction_fn first_sa;     /* a sanitizer's sigaction, found at load; NULL: none */

/* is f defined in libtlm itself? (the plain name sigaction may bind to a
 * sanitizer's, so addresses are compared by the object that holds them) */
static bool ours(void *f)
{
	Dl_info a, b;
	return dladdr(f, &a) && dladdr((void *)&tlm__exit_paths_init, &b) && a.dli_fbase == b.dli_fbase;
}

/* Through whatever sigaction comes first (a sanitizer runtime's, which wraps
 * the handler and then calls ours, which then passes it on), so that a
 * ThreadSanitizer build knows the handler; in a plain process that is ours. */
NO_SANITIZE static void install_ours(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_term;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask); /* one end at a time */
	if (first_sa) {
		self_install = 1;
		first_sa(sig, &sa, NULL);
		self_install = 0;
	} else {
		real_sigaction(sig, &sa, NULL);
	}
}

void tlm__exit_paths_init(void)
{
	/* looked up once: the host may set SIG_DFL from a signal handler, where
	 * the loader's lock must not be taken */
	tlm__resolve_dlsym();
	if (tlm__real_dlsym) {
		void *f = tlm__real_dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
		if (!f)
			f = tlm__real_dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
		*(void **)&py_finalizing = f;
	}
	sigaction_fn first = tlm__real_dlsym ? (sigaction_fn)tlm__real_dlsym(RTLD_DEFAULT, "sigaction") : NULL;
	if (first && !ours((void *)first))
		first_sa = first;
	for (size_t k = 0; k < NTERM; k++) {
		struct sigaction cur;
		if (real_sigaction(term_sigs[k], NULL, &cur) != 0 || cur.sa_handler != SIG_DFL ||
		    (cur.sa_flags & SA_SIGINFO))
			continue; /* the host (or its parent) chose something: leave it */
		views[k].host = cur;
		atomic_store(&views[k].owned, 1);
		install_ours(term_sigs[k]);
	}
	atomic_store(&active, 1);
	tlm__writer_deferred_end = tlm__exit_term_deferred;
	install_fatal();
}

void tlm__exit_paths_child(void)
{
	atomic_store(&in_fatal, 0);
}

static void exit_now(const char *how)
{
	int saved = errno;
	if (tlm__forkguard_owner() && state_settled() == TLM__RUNNING)
		tlm__writer_end_now(0, how);
	errno = saved;
}

typedef void (*exit_fn)(int);

static void __attribute__((noreturn)) leave(const char *name, int status)
{
	tlm__resolve_dlsym();
	exit_fn f = tlm__real_dlsym ? (exit_fn)tlm__real_dlsym(RTLD_NEXT_HANDLE, name) : NULL;
	if (f)
		f(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

TLM_EXPORT void _exit(int status)
{
	exit_now("_exit");
	leave("_exit", status);
}

TLM_EXPORT void _Exit(int status)
{
	exit_now("_Exit");
	leave("_Exit", status);
}

/* ------------------------------------------------ a vfork child's exit() */

/* A vfork child that calls exit() runs, in our shared memory, the parent's
 * atexit list and every library's destructor, and glibc marks them done: the
 * parent's own exit then runs neither, nor takes new atexit entries. Its
 * exit still runs the main thread's TLS destructors, a list the child has
 * already walked: an entry added now (from our destructor, in the child) is
 * run by the parent's exit, which then ends the trace as ours would have. */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso) __attribute__((weak));
extern void *__dso_handle __attribute__((weak));
static atomic_int parent_end_armed;

static void parent_end(void *unused)
{
	(void)unused;
	atomic_store(&parent_end_armed, 0);
	if (tlm__forkguard_owner() && atomic_load(&tlm__state) == TLM__RUNNING) {
		tlm__writer_finish();
		tlm__summary(tlm__writer_path());
	}
}

void tlm__exit_vfork_child(void)
{
	/* the list is the vforking thread's: only the main thread's is run by exit */
	if (atomic_load(&tlm__state) != TLM__RUNNING || !__cxa_thread_atexit_impl || !__dso_handle ||
	    !pthread_equal(pthread_self(), tlm__main_thread))
		return;
	if (!atomic_exchange(&parent_end_armed, 1))
		__cxa_thread_atexit_impl(parent_end, NULL, __dso_handle);
}

/* ------------------------------------------------- the host's dispositions */

NO_SANITIZE TLM_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int k = term_index(sig);
	if (k < 0 || !atomic_load(&active) || self_install)
		return real_sigaction(sig, act, old);
	struct view *v = &views[k];
	struct sigaction prev;
	if (atomic_load(&v->owned))
		prev = v->host;
	else if (real_sigaction(sig, NULL, &prev) != 0)
		return -1;
	if (act) {
		if (act->sa_handler == SIG_DFL) {
			/* the host asks for the default: ours stands in for it */
			v->host = *act;
			if (!atomic_exchange(&v->owned, 1))
				install_ours(sig);
		} else {
			atomic_store(&v->owned, 0);
			if (real_sigaction(sig, act, NULL) != 0)
				return -1;
		}
	}
	if (old)
		*old = prev;
	return 0;
}

typedef void (*handler_fn)(int);

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its
 * handler) */
NO_SANITIZE static handler_fn set_handler(int sig, handler_fn h)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sig > 0 && sig < NSIG)
		sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

NO_SANITIZE TLM_EXPORT handler_fn signal(int sig, handler_fn h)
{
	if (term_index(sig) < 0 || !atomic_load(&active)) {
		static _Atomic(handler_fn (*)(int, handler_fn)) real_signal;
		handler_fn (*f)(int, handler_fn) = atomic_load(&real_signal);
		if (!f) {
			tlm__resolve_dlsym();
			f = (handler_fn(*)(int, handler_fn))tlm__real_dlsym(RTLD_NEXT_HANDLE, "signal");
			if (!f)
				return set_handler(sig, h);
			atomic_store(&real_signal, f);
		}
		return f(sig, h);
	}
	return set_handler(sig, h);
}

NO_SANITIZE TLM_EXPORT handler_fn bsd_signal(int sig, handler_fn h)
{
	return signal(sig, h);
}
