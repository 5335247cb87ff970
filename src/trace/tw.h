/* SPDX-License-Identifier: MIT */
/*
 * tw.h - the writer's internal state, shared by writer.c (framing, sink) and
 * encode.c (record encoders).
 *
 * Contract: records are encoded straight into w->chunk after the chunk header
 * space; tlm__tw_reserve() guarantees `bound` free bytes (flushing a non-empty
 * chunk first when it would exceed chunk_bytes) and returns where to write;
 * tlm__tw_commit() records the bytes used. Nothing here allocates.
 */
#ifndef TLM_TRACE_TW_H
#define TLM_TRACE_TW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct ZSTD_CCtx_s;

struct tlm_tw {
	tlm_tw_sink sink;
	void *ctx;
	struct ZSTD_CCtx_s *cctx; /* NULL: no compression */
	void *zwork;              /* static zstd workspace (cctx lives in it) */
	uint8_t *chunk;           /* TLM__CHUNK_HDR + cap payload bytes */
	uint8_t *zbuf;            /* TLM__CHUNK_HDR + ZSTD_compressBound(cap) */
	size_t zcap;
	bool zpays;               /* TLM_TW_ZSTD_PAYS */
	uint32_t zskip;           /* chunks left to store raw before zstd is tried again */
	size_t chunk_bytes;       /* flush threshold */
	size_t cap;               /* payload capacity: max(chunk_bytes, TLM__REC_MAX) */
	size_t used;              /* payload bytes pending */
	uint32_t nrec;

	/* Delta state, reset at each chunk (see docs/trace-format.md). */
	uint64_t seq0;            /* events before this chunk */
	uint64_t base_time, prev_time;
	uint32_t nev;             /* events in this chunk */
	uint32_t prev_thread;
	uint64_t prev_addr[TLM__NKIND];
	struct tlm__slotstate slot[TLM__NSLOT];
	struct tlm__blkstate blk;

	uint64_t events, bytes, lost;
};

int tlm__tw_flush_for(struct tlm_tw *w, size_t bound);

/* Inline because it sits on the per-event path. */
static inline uint8_t *tlm__tw_reserve(struct tlm_tw *w, size_t bound, int *rc)
{
	*rc = 0;
	if (w->used && w->used + bound > w->chunk_bytes)
		*rc = tlm__tw_flush_for(w, bound);
	return w->chunk + TLM__CHUNK_HDR + w->used;
}

static inline void tlm__tw_commit(struct tlm_tw *w, const uint8_t *end)
{
	w->used = (size_t)(end - (w->chunk + TLM__CHUNK_HDR));
	w->nrec++;
}

#endif
