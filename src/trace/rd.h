/* SPDX-License-Identifier: MIT */
/*
 * rd.h - the reader's internal state, shared by reader.c (file buffering,
 * header, chunk framing and recovery) and decode.c (records of a payload).
 *
 * Contract: reader.c hands decode.c one verified, decompressed payload at a
 * time ([p, end)) with the delta state reset; tlm__decode_record() decodes one
 * record at p, returns 1 or, on malformed input, 0 with a message in *why and
 * without reading outside [p, end).
 */
#ifndef TLM_TRACE_RD_H
#define TLM_TRACE_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct ZSTD_DCtx_s;

#define TLM__MAX_ERRORS 1024 /* stored; further ones are summarised in the last */

struct tlm_reader {
	int fd;
	int ioerr;          /* errno of a failed read, 0 if none */
	struct tlm_trace_header h;

	/* File window: buf holds file bytes [base, base + len). */
	uint8_t *buf;
	size_t cap, len;
	uint64_t base;
	int eof;
	uint64_t pos;       /* offset of the next chunk to examine */
	size_t crc_budget;  /* bytes a resynchronisation scan may still CRC */
	int done;
	bool follow;        /* tlm_reader_follow(): the file may still grow */
	bool stream;        /* a pipe or FIFO: read once, never seeks */

	/* Payload being decoded. */
	const uint8_t *p, *end;
	int in_chunk;
	uint64_t choff;     /* file offset of its chunk */
	uint32_t nrec_hdr, nrec;
	uint64_t seq0;
	uint32_t nev;
	uint8_t *zbuf;
	size_t zcap;
	struct ZSTD_DCtx_s *dctx;

	/* Delta state (same rules as the writer's). */
	uint64_t prev_time;
	uint32_t prev_thread;
	uint64_t prev_addr[TLM__NKIND];
	struct tlm__slotstate slot[TLM__NSLOT];
	struct tlm__blkstate blk;

	/* Outcome. */
	struct tlm_integrity_error *errs;
	size_t nerr, errcap;
	uint64_t nerr_dropped;
	int saw_end, saw_signal;
	char end_how[16];       /* PROP "end": how the process ended ("_exit", "exec"; "" = exit) */
	int truncated;
	uint64_t trunc_off;
	char trunc_msg[160];
	uint64_t lost;
};

int tlm__decode_record(struct tlm_reader *r, struct tlm_record *rec, const char **why);

#endif
