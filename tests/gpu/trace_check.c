/* SPDX-License-Identifier: MIT */
/*
 * trace_check.c - compare a trace with a truth file on a real GPU.
 *
 * usage: trace_check TRACE TRUTH
 * TRUTH lines: "E op kind api-name addr size result device stream aux runtime".
 * Every truth event must appear in the trace, in order, with the same op,
 * kind, address, size, result, device and stream (the API name is reported,
 * not required: with a static cudart the runtime layer is invisible and the
 * driver call is the event). Trace events between them are listed as extra
 * (a library's own allocations). Prints one PASS/FAIL line; exit 0 on PASS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlm/trace.h"

struct want {
	unsigned op, kind;
	char api[64];
	unsigned long long addr, size, stream, aux;
	int result, device, runtime;
};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: trace_check TRACE TRUTH\n");
		return 64;
	}
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		return 2;
	}
	static struct want w[4096];
	size_t nw = 0;
	char line[512];
	while (fgets(line, sizeof line, f) && nw < 4096) {
		struct want *x = &w[nw];
		if (sscanf(line, "E %u %u %63s %llx %llu %d %d %llx %llx %d", &x->op, &x->kind, x->api, &x->addr,
			   &x->size, &x->result, &x->device, &x->stream, &x->aux, &x->runtime) == 10)
			nw++;
	}
	fclose(f);
	char err[256];
	struct tlm_reader *r = tlm_reader_open(argv[1], err, sizeof err);
	if (!r) {
		printf("FAIL %s: %s\n", argv[1], err);
		return 1;
	}
	static struct tlm_record rec;
	size_t k = 0, extra = 0, nev = 0, api_same = 0;
	while (tlm_reader_next(r, &rec) == 1) {
		if (rec.type != TLM_REC_EVENT)
			continue;
		const struct tlm_event *e = &rec.u.ev;
		nev++;
		if (k < nw && e->op == w[k].op && e->kind == w[k].kind && e->addr == w[k].addr &&
		    e->size == w[k].size && e->result == w[k].result && e->device == w[k].device &&
		    e->stream == w[k].stream) {
			int same = !strcmp(tlm_api_name(e->api), w[k].api);
			api_same += same;
			printf("  match  %-28s as %s\n", w[k].api, tlm_api_name(e->api));
			k++;
		} else {
			extra++;
			printf("  extra  %s %s %s addr %llx size %llu result %d device %d\n", tlm_op_name(e->op),
			       tlm_kind_name(e->kind), tlm_api_name(e->api), (unsigned long long)e->addr,
			       (unsigned long long)e->size, e->result, e->device);
		}
	}
	int state = (int)tlm_reader_state(r);
	const struct tlm_integrity_error *errs;
	size_t nerr = tlm_reader_errors(r, &errs);
	tlm_reader_close(r);
	int ok = k == nw && state == TLM_TRACE_CLEAN && nerr == 0;
	printf("%s %s: %zu of %zu expected events matched in order (%zu at the same API), %zu extra, "
	       "%zu events in all, state %s, %zu integrity errors\n",
	       ok ? "PASS" : "FAIL", argv[1], k, nw, api_same, extra, nev,
	       state == TLM_TRACE_CLEAN ? "clean" : "not clean", nerr);
	if (k < nw)
		printf("  first missing: %s addr %llx size %llu\n", w[k].api, w[k].addr, w[k].size);
	return ok ? 0 : 1;
}
