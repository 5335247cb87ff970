/* SPDX-License-Identifier: MIT */
/*
 * config.h - the TLM_* settings (docs/environment.md), read once.
 *
 * Contract: tlm__config_load() reads the environment into tlm__cfg, before
 * any event (lifecycle.c calls it once); a bad value is named in one line
 * and its default kept, never an error. Everything else only reads tlm__cfg.
 */
#ifndef TLM_REC_CONFIG_H
#define TLM_REC_CONFIG_H

#include <stddef.h>

#include "recording/defs.h"

#define TLM_MAX_STACK_DEPTH_CFG 256

struct tlm__config {
	/* the scalars first: the hot path reads some of them at every event, in this one line */
	_Alignas(64) unsigned stack_depth;  /* TLM_STACK_DEPTH, 0 = off */
	bool drop;             /* TLM_DROP=1: drop and count instead of waiting */
	unsigned ring_slots;   /* TLM_RING_SIZE: slots per thread ring, power of two */
	unsigned drain_ms;     /* TLM_DRAIN_MS: writer period */
	bool compress;         /* TLM_COMPRESS */
	bool signals;          /* TLM_SIGNALS: flush on fatal signals */
	bool disabled;         /* TLM_DISABLE=1 or a setuid/setgid process */
	unsigned writer_delay_ms; /* TLM_DEBUG_WRITER_DELAY_MS: tests fill rings with it */
	bool verify_stacks;    /* TLM_DEBUG_STACK_VERIFY: check every cached stack */
	bool stack_stats;      /* TLM_DEBUG_STACK_STATS: unwind cache hits and misses at exit */
	bool summary;          /* TLM_SUMMARY: end-of-run report on stderr */
	bool stack_past_python; /* TLM_STACK_PAST_PYTHON=1: native stacks go on past the interpreter */
	bool block_native;      /* TLM_BLOCK_NATIVE_STACKS=1: allocator blocks on Python threads unwound too */
	bool python_off;       /* TLM_PYTHON=off: no Python stacks or GC flags */
	int cupti;             /* TLM_CUPTI: enum tlm__cupti_mode */
	char cupti_library[4096]; /* TLM_CUPTI_LIBRARY: this libcupti, no search */
	unsigned peak_ms;      /* TLM_DEBUG_PEAK_MS: at most one PEAK sample per device per this (1) */
	unsigned table_slots;  /* TLM_DEBUG_TABLE_SLOTS: live-allocation table size (0: 2^19 and 2^16) */
	bool nvml_off;         /* TLM_NVML=off: no NVML process lists */
	bool debug_pause;      /* TLM_DEBUG_PAUSE=1: tlm_debug_pause() works (benchmarks only) */
	char output[4096];     /* TLM_OUTPUT pattern, absolute (taken against the directory at load) */
};
enum tlm__cupti_mode { TLM__CUPTI_AUTO = 0, TLM__CUPTI_ON = 1, TLM__CUPTI_OFF = 2 };
extern struct tlm__config tlm__cfg TLM_HIDDEN;
void tlm__config_load(void) TLM_HIDDEN;
/* A relative TLM_OUTPUT pattern becomes one under the current directory (a
 * '%' of the directory doubled, so it stays literal). */
void tlm__output_absolute(char *pattern, size_t len) TLM_HIDDEN;

#endif
