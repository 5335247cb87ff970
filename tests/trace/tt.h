/* SPDX-License-Identifier: MIT */
/*
 * tt.h - helpers for the trace tests: an in-memory sink, temp files, a
 * deterministic generator of records covering every record type and edge
 * values, writing a record through the matching tlm_tw_* call, and field by
 * field record comparison.
 */
#ifndef TLM_TESTS_TT_H
#define TLM_TESTS_TT_H

#include <stddef.h>
#include <stdint.h>

#include "tlm/trace.h"

struct membuf {
	uint8_t *p;
	size_t len, cap;
	int fail;     /* sink returns this (negative errno) when nonzero */
	size_t calls;
};

int tt_mem_sink(void *ctx, const void *buf, size_t len);
void tt_header(struct tlm_trace_header *h);
/* The i-th generated record (never END); edge: weight of edge values 0..100. */
void tt_gen(uint64_t i, int edge, struct tlm_record *rec);
int tt_write(struct tlm_tw *w, const struct tlm_record *rec);
/* 1 if equal; else 0 and prints the first difference. */
int tt_equal(const struct tlm_record *a, const struct tlm_record *b);
/* Writes len bytes to a fresh temp file; returns its malloc'd path. */
char *tt_tmpfile(const void *buf, size_t len);
void tt_rewrite(const char *path, const void *buf, size_t len);

#endif
