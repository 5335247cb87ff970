/* SPDX-License-Identifier: MIT */
/*
 * defs.h - what every file of libtlm.so shares: visibility, branch hints and
 * the TLS model. Nothing here is exported.
 *
 * The room's files call one way, each header's contract at its top: the
 * hooks (hooks.h, cupti_int.h, c10_tap.c) take the guard (guard.h) and
 * start the trace (lifecycle.h), which also ends it (exit_paths.h); they
 * record through the recorder (recorder.h), which fills the per-thread rings
 * (ring.h) with stacks (stack/) and device samples (devmem.h) and wakes the
 * writer (writer/), which drains the rings into the trace. Below them all:
 * config.h, log.h, clock.h, realsym.h, forkguard.h, fdguard.h.
 */
#ifndef TLM_REC_DEFS_H
#define TLM_REC_DEFS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLM_HIDDEN __attribute__((visibility("hidden")))
#define TLM_EXPORT __attribute__((visibility("default")))
#define TLM_LIKELY(x) __builtin_expect(!!(x), 1)
#define TLM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLM_TLS __thread __attribute__((tls_model("initial-exec")))
/* State that every event reads and nothing writes after set-up, kept
 * together in a few cache lines: between two events the host's own work
 * evicts them, and each line apart was one more miss per event. Not for
 * what an event writes (a line bouncing between threads' cores). */
#define TLM_HOT __attribute__((section(".tlm_hot")))

#endif
