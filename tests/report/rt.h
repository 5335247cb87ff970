/* SPDX-License-Identifier: MIT */
/*
 * rt.h - helpers for the report tests: build a synthetic trace with the
 * trace writer (times in ns since the trace start), write it to a temp file,
 * and a fake symbolizer that names frames after their address.
 */
#ifndef TLM_TESTS_RT_H
#define TLM_TESTS_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/report.h"
#include "tlm/trace.h"

#define RT_START 1000000000ULL /* header start_monotonic_ns */
#define RT_MS 1000000ULL

struct rt;

struct rt *rt_open(void);
void rt_stack(struct rt *t, uint32_t id, const uint64_t *ip, uint32_t depth);
/* One event at time t (ns since the trace start). */
void rt_ev(struct rt *t, unsigned op, unsigned kind, uint64_t addr, uint64_t size, uint64_t time, uint32_t stack,
	   int device, int result, uint64_t device_free);
void rt_event(struct rt *t, const struct tlm_event *ev); /* any event; time relative to RT_START */
void rt_alloc(struct rt *t, unsigned kind, uint64_t addr, uint64_t size, uint64_t time, uint32_t stack, int device);
void rt_free(struct rt *t, unsigned kind, uint64_t addr, uint64_t time, int device);
void rt_signal(struct rt *t, int signo);
void rt_prop(struct rt *t, const char *key, const char *value); /* a PROP record */
struct tlm_tw *rt_writer(struct rt *t); /* the trace writer, for any other record */
/* Ends the trace (END at end_time when with_end) and writes it to a temp
 * file; returns its malloc'd path. */
char *rt_close(struct rt *t, bool with_end, uint64_t end_time);

/* Builds the report of path (asserts it opens) with the fake symbolizer. */
struct tlm_report *rt_report(const char *path);
/* rt_close then rt_report; the trace is removed unless pathp takes its path. */
struct tlm_report *rt_build(struct rt *t, bool end, uint64_t end_t, char **pathp);
/* Fake symbolizer: "fn_<ip hex>" in "src/f<ip hex>.c" at line ip % 1000,
 * module "/opt/app/libapp.so"; rt_hostile() switches to hostile strings. */
size_t rt_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max);
/* Renders into a malloc'd string. */
char *rt_render(struct tlm_report *r, int (*fn)(struct tlm_report *, FILE *));

#endif
