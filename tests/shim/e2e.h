/* SPDX-License-Identifier: MIT */
/*
 * e2e.h - run the workload under libtlm.so on the simulated driver and load
 * what it recorded (trace) and what it says it did (truth).
 */
#ifndef TLM_TEST_E2E_H
#define TLM_TEST_E2E_H

#include <stddef.h>
#include <stdint.h>

#include "tlm/trace.h"

struct truth_ev {
	unsigned op, kind, api, flags;
	uint64_t addr, size, stream, aux;
	int result, device;
};

struct run {
	char dir[256];        /* scratch directory of this run */
	int status;           /* waitpid status */
	char stderr_text[8192];
	struct truth_ev *truth;
	size_t ntruth;
	char notes[64][128];  /* "N" lines of the truth file */
	size_t nnotes;
};

struct trace {
	char path[512];
	struct tlm_trace_header hdr;
	struct tlm_event *ev;
	size_t nev, cap;
	uint64_t *stack_first;   /* stack id -> innermost ip (0 if none) */
	uint32_t *stack_depth;
	size_t nstacks;
	struct tlm_rec_module *mods;
	size_t nmods;
	size_t nthreads, nsignals, nend, nlost_records;
	uint32_t unloaded[64];
	size_t nunloaded;
	size_t unload_after_event[64]; /* events read before each unload */
	uint64_t lost;
	int signo;
	int state;
	size_t nerrors;
	size_t events_after_end;
	char cupti[16], cupti_detail[512]; /* PROP records "cupti", "cupti.detail" ("" when none) */
	size_t ncupti_props;     /* PROP records "cupti" and "cupti.detail": each said once */
	char exit_status[16];    /* PROP exit.status ("" when none) */
	char end_how[16];        /* tlm_reader_end_how ("" unless clean) */
};

/* Runs `workload ARGS...` with extra "NAME=value" environment entries (NULL
 * terminated list). Returns 0 when the process could be run at all. */
int e2e_run(struct run *r, const char *const *args, const char *const *env);
/* Lists the traces the run left, sorted by name; returns how many. */
size_t e2e_traces(const struct run *r, char paths[][512], size_t max);
int e2e_load(struct trace *t, const char *path); /* 0 ok */
void e2e_free(struct trace *t);
const char *e2e_note(const struct run *r, const char *key); /* value after "key " */
/* The note's value as a number; a missing note is said on stderr and
 * reads as LLONG_MIN, so that the assertion on it fails, not the program. */
long long e2e_note_num(const struct run *r, const char *key);
/* Module record that contains ip, or NULL. */
const struct tlm_rec_module *e2e_module_of(const struct trace *t, uint64_t ip);
/* One line on stderr for event i: its fields, its thread and flags, and
 * whether it came after END; mark starts the line ("got", ">>"). */
void e2e_say_event(const struct trace *t, size_t i, const char *mark);
/* Compares trace events with truth field by field; prints the first difference. */
int e2e_compare(const struct trace *t, const struct truth_ev *tr, size_t n);

#endif
