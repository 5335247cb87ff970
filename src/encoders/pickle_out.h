/* SPDX-License-Identifier: MIT */
/*
 * pickle_out.h - a writer of Python pickles (protocol 2), for exports that
 * Python tools load with pickle.load: dicts, lists, tuples of two, str,
 * int, float, bool and None, with a memo so that an object written once can
 * be referred to again (the unpickler then shares it). Internal to
 * src/render.
 *
 * Contract: calls mirror the object tree: tlm__pk_dict() ... key, value,
 * key, value ... tlm__pk_end(); tlm__pk_list() or tlm__pk_tuple() ... items
 * ... tlm__pk_end().
 * Strings are written as UTF-8, with each byte that is not part of a valid
 * UTF-8 sequence (and each encoded surrogate) replaced by U+FFFD, so the
 * unpickler never fails on them. Errors are sticky: tlm__pk_finish()
 * returns -1 when a write failed or the calls did not nest.
 */
#ifndef TLM_REPORT_PICKLE_OUT_H
#define TLM_REPORT_PICKLE_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TLM__PK_DEPTH 32

struct tlm__pk {
	FILE *f;
	uint32_t memo;                 /* next memo index */
	int depth;
	uint32_t items[TLM__PK_DEPTH]; /* items since the last MARK, per open container */
	char type[TLM__PK_DEPTH];      /* 'd', 'l' or 't' */
	bool err;
	/* interned strings: the same text is written once, then fetched */
	struct tlm__pk_str { uint64_t h; uint32_t memo; uint32_t len; char *s; } *str;
	size_t nstr, mask;
};

void tlm__pk_begin(struct tlm__pk *p, FILE *f);
int tlm__pk_finish(struct tlm__pk *p);     /* STOP; frees the writer's memory */

void tlm__pk_dict(struct tlm__pk *p);
void tlm__pk_list(struct tlm__pk *p);
void tlm__pk_tuple(struct tlm__pk *p);
void tlm__pk_end(struct tlm__pk *p);       /* closes the innermost dict, list or tuple */

void tlm__pk_int(struct tlm__pk *p, int64_t v);
void tlm__pk_uint(struct tlm__pk *p, uint64_t v);
void tlm__pk_bool(struct tlm__pk *p, bool v);
void tlm__pk_none(struct tlm__pk *p);
void tlm__pk_float(struct tlm__pk *p, double v);
/* A str; short ones (keys, names) are interned: written once per pickle. */
void tlm__pk_str(struct tlm__pk *p, const char *s);
void tlm__pk_strn(struct tlm__pk *p, const char *s, size_t n);

/* Memo: tlm__pk_end_memo() closes the innermost container as tlm__pk_end()
 * does and names it; tlm__pk_get() writes that same object again. */
uint32_t tlm__pk_end_memo(struct tlm__pk *p);
void tlm__pk_get(struct tlm__pk *p, uint32_t id);

#endif
