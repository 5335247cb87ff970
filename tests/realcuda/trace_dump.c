/* SPDX-License-Identifier: MIT */
/*
 * trace_dump.c - a trace as text, for the real-runtime checks (check.py).
 *
 * usage: trace_dump TRACE
 * One line per event, in trace order:
 *   E op kind api addr size result device thread aux | FRAME...
 * with every native stack frame (of a Python stack: its native part) as
 * MODULE+0xOFFSET (the module's path, or "main" for the unnamed main
 * program; OFFSET relative to its load bias, what addr2line takes) or
 * ?+0xIP when no module holds it. Then
 *   P key value     for each property
 *   S state errors  the reader's verdict (0 = clean) and integrity errors
 * Exit 0, or 2 when the trace cannot be opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlm/trace.h"

#define MAXMOD 512
#define MAXSTACK 65536

static struct tlm_rec_module mods[MAXMOD];
static size_t nmods;
static struct tlm_rec_stack *stacks[MAXSTACK];
static uint32_t py_native[MAXSTACK]; /* a Python stack's id -> its native stack's */

static void frame(uint64_t ip)
{
	for (size_t i = 0; i < nmods; i++)
		for (uint32_t s = 0; s < mods[i].nseg; s++)
			if (ip >= mods[i].seg[s].start && ip < mods[i].seg[s].end) {
				/* return address - 1: the call instruction's line */
				printf(" %s+0x%llx", mods[i].path[0] ? mods[i].path : "main",
				       (unsigned long long)(ip - 1 - mods[i].base));
				return;
			}
	printf(" ?+0x%llx", (unsigned long long)ip);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: trace_dump TRACE\n");
		return 64;
	}
	char err[256];
	struct tlm_reader *r = tlm_reader_open(argv[1], err, sizeof err);
	if (!r) {
		fprintf(stderr, "trace_dump: %s: %s\n", argv[1], err);
		return 2;
	}
	static struct tlm_record rec;
	while (tlm_reader_next(r, &rec) == 1) {
		if (rec.type == TLM_REC_MODULE && nmods < MAXMOD) {
			mods[nmods++] = rec.u.module;
		} else if (rec.type == TLM_REC_STACK && rec.u.stack.id < MAXSTACK) {
			struct tlm_rec_stack *s = malloc(sizeof(*s));
			if (!s)
				return 1;
			*s = rec.u.stack;
			stacks[rec.u.stack.id] = s;
		} else if (rec.type == TLM_REC_PYSTACK && rec.u.pystack.id < MAXSTACK) {
			py_native[rec.u.pystack.id] = rec.u.pystack.native;
		} else if (rec.type == TLM_REC_PROP) {
			printf("P %s %s\n", rec.u.prop.key, rec.u.prop.value);
		} else if (rec.type == TLM_REC_EVENT) {
			const struct tlm_event *e = &rec.u.ev;
			printf("E %u %u %s %llx %llu %d %d %u %llx |", e->op, e->kind, tlm_api_name(e->api),
			       (unsigned long long)e->addr, (unsigned long long)e->size, e->result, e->device,
			       e->thread, (unsigned long long)e->aux);
			uint32_t id = e->stack_id < MAXSTACK && py_native[e->stack_id] ? py_native[e->stack_id]
										 : e->stack_id;
			const struct tlm_rec_stack *s = id < MAXSTACK ? stacks[id] : NULL;
			for (uint32_t i = 0; s && i < s->depth; i++)
				frame(s->ip[i]);
			printf("\n");
		}
	}
	const struct tlm_integrity_error *errs;
	size_t nerr = tlm_reader_errors(r, &errs);
	printf("S %d %zu\n", (int)tlm_reader_state(r), nerr);
	tlm_reader_close(r);
	return 0;
}
