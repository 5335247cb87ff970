/* SPDX-License-Identifier: MIT */
/*
 * trace_events.c - prints a trace's events, one per line, for check.py:
 *   op kind device addr size result device_free thread flags api
 * (numbers in decimal; op/kind/api as tlm names them). Exit 2 when the
 * trace cannot be read.
 */
#include <inttypes.h>
#include <stdio.h>

#include "tlm/event.h"
#include "tlm/trace.h"

int main(int argc, char **argv)
{
	char err[256];
	if (argc != 2) {
		fprintf(stderr, "usage: trace_events TRACE\n");
		return 64;
	}
	struct tlm_reader *r = tlm_reader_open(argv[1], err, sizeof err);
	if (!r) {
		fprintf(stderr, "trace_events: %s\n", err);
		return 2;
	}
	struct tlm_record rec;
	while (tlm_reader_next(r, &rec) == 1) {
		if (rec.type != TLM_REC_EVENT)
			continue;
		const struct tlm_event *e = &rec.u.ev;
		printf("%s %s %d %" PRIu64 " %" PRIu64 " %d %" PRIu64 " %u %u %s\n", tlm_op_name(e->op),
		       tlm_kind_name(e->kind), e->device, e->addr, e->size, e->result, e->device_free,
		       e->thread, e->flags, tlm_api_name(e->api));
	}
	tlm_reader_close(r);
	return 0;
}
