/* SPDX-License-Identifier: MIT */
/*
 * run_signals.h - which signals `tlm run` passes on to the program, and how
 * the program is placed so that each reaches it once.
 *
 * Contract: tlm run blocks the forwarded set (every signal whose default
 * action ends a process: SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT,
 * SIGBUS, SIGFPE, SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
 * SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS and
 * the real-time signals) and SIGCHLD, takes them with sigwaitinfo, and hands
 * each one a process sent it to tlm_run_forward().
 *
 * A signal carries no mark of whether it was sent to tlm alone or to its
 * whole process group (kill(pid) and kill(-pgid) both give SI_USER and the
 * sender's pid), so tlm cannot tell them apart after the fact. Without a
 * controlling terminal (schedulers, batch jobs, CI: where a group SIGTERM
 * comes from) the program gets a process group of its own: a signal sent to
 * tlm's group then reaches tlm only, and tlm's forwarding is the one
 * delivery, as is one sent to tlm alone. The program dies with tlm
 * (PR_SET_PDEATHSIG, SIGKILL) should tlm be killed outright, as it would
 * have in tlm's group. With a controlling terminal the program stays in
 * tlm's group, so that it keeps the terminal (its reads, ^C, ^Z as the shell
 * arranges them): the terminal's signals reach it by themselves (the kernel
 * sends them: si_code > 0, never forwarded), and a signal a process sends
 * is forwarded (then one sent by a process to the whole group reaches the
 * program twice: the known limit of that case).
 */
#ifndef TLM_RUN_SIGNALS_H
#define TLM_RUN_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* The forwarded set, plus SIGCHLD. */
void tlm_run_signal_set(sigset_t *s);
/* Whether the program gets a process group of its own (no controlling terminal). */
bool tlm_run_own_group(void);
/* In the child, before exec: its own group (when own) and death with tlm. */
void tlm_run_child_setup(bool own, pid_t parent);
/* In tlm, after fork: the child's group set from this side too (no race with
 * a signal forwarded before the child ran). */
void tlm_run_parent_setup(bool own, pid_t child);
/* Passes sig on to the program when a process sent it (not the kernel, not
 * tlm itself), unless it is SIGCHLD. */
void tlm_run_forward(pid_t child, int sig, const siginfo_t *si);

#endif
