/* SPDX-License-Identifier: MIT */
/*
 * cmd_info.c - `tlm info TRACE`: one pass over a trace printing its header,
 * event counts per kind, definitions, final state and every integrity error.
 * The output is line-oriented "key: value" so tests and scripts can match
 * lines; docs/tlm-info.md describes each line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "common/text.h"
#include "render/render.h" /* tlm__human: sizes as the report prints them */
#include "tlm/trace.h"

#define NROW (TLM_KIND_COUNT + 1) /* last row: kinds this tool does not know */

struct stats {
	uint64_t allocs[NROW], frees[NROW], failed[NROW], bytes[NROW];
	uint64_t pool_create, pool_destroy, pool_trim, other_ops;
	uint64_t interposed, cupti_only, late, cupti_api[256]; /* sources: TLM_EVF_CUPTI or not */
	uint64_t events, threads, stacks, modules, unloads, pystacks, strings;
	uint64_t clock_sets; /* CLOCK records: the wall clock set during the run */
	uint64_t last_time;
	int have_time, have_end, have_signal;
	struct tlm_rec_end end;
	int32_t signo;
	char cupti_state[16], cupti_detail[512]; /* PROP records, "" when none */
};

static void count(struct stats *s, const struct tlm_record *rec)
{
	switch (rec->type) {
	case TLM_REC_EVENT: {
		const struct tlm_event *e = &rec->u.ev;
		unsigned k = e->kind < TLM_KIND_COUNT ? e->kind : TLM_KIND_COUNT;
		s->events++;
		if (e->flags & TLM_EVF_LATE)
			s->late++;
		if (e->flags & TLM_EVF_CUPTI) {
			s->cupti_only++;
			s->cupti_api[e->api & 0xff]++;
		} else {
			s->interposed++;
		}
		if (!s->have_time || e->time_ns > s->last_time)
			s->last_time = e->time_ns;
		s->have_time = 1;
		if (e->op == TLM_OP_ALLOC || e->op == TLM_OP_FREE) {
			if (e->result)
				s->failed[k]++;
			else if (e->op == TLM_OP_FREE)
				s->frees[k]++;
			else {
				s->allocs[k]++;
				s->bytes[k] += e->size;
			}
		} else if (e->op == TLM_OP_POOL_CREATE) {
			s->pool_create++;
		} else if (e->op == TLM_OP_POOL_DESTROY) {
			s->pool_destroy++;
		} else if (e->op == TLM_OP_POOL_TRIM) {
			s->pool_trim++;
		} else {
			s->other_ops++;
		}
		break;
	}
	case TLM_REC_THREAD: s->threads++; break;
	case TLM_REC_STACK: s->stacks++; break;
	case TLM_REC_PYSTACK: s->pystacks++; break;
	case TLM_REC_STRING: s->strings++; break;
	case TLM_REC_MODULE: s->modules++; break;
	case TLM_REC_MODULE_UNLOAD: s->unloads++; break;
	case TLM_REC_CLOCK: s->clock_sets++; break;
	case TLM_REC_PROP:
		tlm__cupti_prop(&rec->u.prop, s->cupti_state, sizeof s->cupti_state, s->cupti_detail,
				sizeof s->cupti_detail);
		break;
	case TLM_REC_SIGNAL:
		if (!s->have_signal)
			s->signo = rec->u.signal;
		s->have_signal = 1;
		break;
	case TLM_REC_END:
		s->end = rec->u.end;
		s->have_end = 1;
		break;
	default: break;
	}
}

/* Text from the trace goes to a terminal: shown safe (src/common/text.h: an
 * escape in a host name must not retitle the window, clear the screen or
 * write the clipboard). */
static void put_safe(const char *s)
{
	tlm_text_put(stdout, s);
}

/* "key: value\n" with the value shown safe. */
static void put_kv(const char *key, const char *value)
{
	fputs(key, stdout);
	put_safe(value);
	putchar('\n');
}

/* Shell-quotes an argument so the printed command line can be pasted back. */
static void put_arg(const char *a)
{
	int plain = *a != 0;
	for (const char *c = a; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *c))
			plain = 0;
	if (plain) {
		fputs(a, stdout);
		return;
	}
	putchar('\'');
	for (const char *c = a; *c; c++) {
		if (*c == '\'')
			fputs("'\\''", stdout);
		else
			putchar(tlm_text_ok((unsigned char)*c) ? *c : '?');
	}
	putchar('\'');
}

static void print_header(const char *path, const struct tlm_trace_header *h, const struct stats *s)
{
	put_kv("trace:        ", path);
	printf("format:       v%u, written by tlm ", h->version);
	put_kv("", h->tlm_version[0] ? h->tlm_version : "?");
	printf("pid:          %u (ppid %u)\n", h->pid, h->ppid);
	put_kv("host:         ", h->host);
	printf("command:      ");
	for (uint32_t i = 0; i < h->argc; i++) {
		if (i)
			putchar(' ');
		put_arg(h->argv[i]);
	}
	putchar('\n');
	put_kv("exe:          ", h->exe);

	time_t t = (time_t)(h->start_realtime_ns / 1000000000u);
	struct tm tm;
	char ts[64] = "?";
	if (gmtime_r(&t, &tm))
		strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
	printf("start:        %s.%09" PRIu64 "Z\n", ts, h->start_realtime_ns % 1000000000u);

	uint64_t end = s->have_end ? s->end.end_monotonic_ns : s->last_time;
	if ((s->have_end || s->have_time) && end >= h->start_monotonic_ns) {
		uint64_t d = end - h->start_monotonic_ns;
		printf("duration:     %" PRIu64 ".%09" PRIu64 " s%s\n", d / 1000000000u, d % 1000000000u,
		       s->have_end ? "" : " (to the last event)");
	} else {
		printf("duration:     unknown\n");
	}
	if (h->stack_depth)
		printf("stack depth:  %u\n", h->stack_depth);
	else
		printf("stack depth:  0 (stacks off)\n");
	printf("drop mode:    %s\n", h->flags & TLM_TRACE_F_DROP_MODE ? "on" : "off");
}

static void print_state(struct tlm_reader *r, const struct stats *s)
{
	uint64_t off;
	const char *trunc = tlm_reader_truncation(r, &off);
	switch (tlm_reader_state(r)) {
	case TLM_TRACE_CLEAN: {
		const char *how = tlm_reader_end_how(r);
		if (how && !strcmp(how, "exec"))
			printf("state:        clean (replaced by exec)\n");
		else if (how && strcmp(how, "exit"))
			printf("state:        clean (left by %s)\n", how);
		else
			printf("state:        clean\n");
		break;
	}
	case TLM_TRACE_SIGNAL: {
		const char *abbr = sigabbrev_np(s->signo);
		if (abbr)
			printf("state:        ended by signal %d (SIG%s)\n", s->signo, abbr);
		else
			printf("state:        ended by signal %d\n", s->signo);
		break;
	}
	case TLM_TRACE_TRUNCATED:
		if (trunc)
			put_kv("state:        ", trunc);
		else
			printf("state:        truncated (no END record: the process ended where tlm could not see it, "
			       "e.g. SIGKILL or a raw exit_group; the last TLM_DRAIN_MS of events may be missing)\n");
		break;
	}
}

/* Coverage: events per source, and the calls only CUPTI saw (most first,
 * then in API order), see docs/cupti.md. */
static void print_sources(const struct stats *s)
{
	printf("sources:      interposition %" PRIu64 ", CUPTI only %" PRIu64, s->interposed, s->cupti_only);
	if (s->cupti_only) {
		unsigned order[256], n = 0;
		for (unsigned a = 0; a < 256; a++)
			if (s->cupti_api[a]) {
				unsigned k = n++;
				while (k > 0 && s->cupti_api[order[k - 1]] < s->cupti_api[a]) {
					order[k] = order[k - 1];
					k--;
				}
				order[k] = a;
			}
		for (unsigned i = 0; i < n; i++)
			printf("%s%s x%" PRIu64, i ? ", " : " (", tlm_api_name(order[i]), s->cupti_api[order[i]]);
		putchar(')');
	}
	putchar('\n');
}

static void print_counts(struct tlm_reader *r, const struct stats *s)
{
	if (s->have_end && s->end.events != s->events)
		printf("events:       %" PRIu64 " (END record says %" PRIu64 ")\n", s->events, s->end.events);
	else
		printf("events:       %" PRIu64 "\n", s->events);
	printf("lost:         %" PRIu64 "\n", tlm_reader_lost(r));
	if (s->late) /* TLM_EVF_LATE: a thread stayed inside one call and the writer went on */
		printf("late:         %" PRIu64 " (written after later events: order not proven)\n", s->late);
	printf("threads:      %" PRIu64 "\n", s->threads);
	printf("stacks:       %" PRIu64 "\n", s->stacks);
	if (s->pystacks) /* only in traces of Python programs */
		printf("python:       %" PRIu64 " stacks with Python frames, %" PRIu64 " strings\n", s->pystacks,
		       s->strings);
	if (s->unloads)
		printf("modules:      %" PRIu64 " (%" PRIu64 " unloaded)\n", s->modules, s->unloads);
	else
		printf("modules:      %" PRIu64 "\n", s->modules);

	if (s->clock_sets) /* wall times (torch-snapshot's) follow it (trace-format.md, CLOCK) */
		printf("wall clock:   set %" PRIu64 " time%s during the recording\n", s->clock_sets,
		       s->clock_sets == 1 ? "" : "s");
	print_sources(s);
	char cs[700];
	tlm__cupti_status(cs, sizeof cs, s->cupti_state, s->cupti_detail);
	put_kv("cupti:        ", cs);

	printf("\n%-12s %10s %10s %8s %20s\n", "kind", "allocs", "frees", "failed", "bytes allocated");
	for (unsigned k = 0; k < NROW; k++) {
		if (!s->allocs[k] && !s->frees[k] && !s->failed[k])
			continue;
		char hb[32];
		tlm__human(hb, sizeof hb, s->bytes[k]);
		printf("%-12s %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %20" PRIu64 " (%s)\n",
		       k < TLM_KIND_COUNT ? tlm_kind_name(k) : "unknown", s->allocs[k], s->frees[k],
		       s->failed[k], s->bytes[k], hb);
	}
	if (s->pool_create || s->pool_destroy || s->pool_trim)
		printf("pool ops:     create %" PRIu64 ", destroy %" PRIu64 ", trim %" PRIu64 "\n",
		       s->pool_create, s->pool_destroy, s->pool_trim);
	if (s->other_ops)
		printf("unknown ops:  %" PRIu64 "\n", s->other_ops);
	putchar('\n');
}

int tlm_cmd_info(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") && i + 1 < argc && !path) {
			path = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs("usage: tlm info TRACE\n\nWhat a trace holds: its header, record and event counts, how the "
			      "run ended,\nand every damaged region.\n\noptions:\n  -h, --help    show this help\n\n"
			      "exit: 0 the trace is readable, 2 it cannot be opened or is damaged, 64 bad usage\n",
			      stdout);
			return TLM_EXIT_OK;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			tlm_text_line(stderr, "tlm info: unknown option '%s'\n", argv[i]);
			fputs("usage: tlm info TRACE\n", stderr);
			return TLM_EXIT_USAGE;
		} else if (!path) {
			path = argv[i];
		} else {
			fprintf(stderr, "tlm info: too many arguments\nusage: tlm info TRACE\n");
			return TLM_EXIT_USAGE;
		}
	}
	if (!path) {
		fprintf(stderr, "tlm info: missing TRACE\nusage: tlm info TRACE\n");
		return TLM_EXIT_USAGE;
	}

	char err[256];
	struct tlm_reader *r = tlm_reader_open(path, err, sizeof err);
	if (!r) {
		tlm_text_line(stderr, "tlm: %s: %s\n", path, err);
		return TLM_EXIT_DAMAGED;
	}
	struct stats *s = calloc(1, sizeof *s);
	struct tlm_record *rec = malloc(sizeof *rec); /* ~5 KiB: keep it off the stack */
	if (!s || !rec) {
		fprintf(stderr, "tlm: out of memory\n");
		free(s);
		free(rec);
		tlm_reader_close(r);
		return TLM_EXIT_DAMAGED;
	}
	while (tlm_reader_next(r, rec))
		count(s, rec);

	print_header(path, tlm_reader_header(r), s);
	print_state(r, s);
	print_counts(r, s);

	const struct tlm_integrity_error *errs;
	size_t n = tlm_reader_errors(r, &errs);
	if (!n)
		printf("integrity:    ok\n");
	else
		printf("integrity:    %zu error%s\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		printf("  offset %" PRIu64 ": ", errs[i].offset);
		put_kv("", errs[i].what);
	}

	free(s);
	free(rec);
	tlm_reader_close(r);
	fflush(stdout);
	return n ? TLM_EXIT_DAMAGED : TLM_EXIT_OK;
}
