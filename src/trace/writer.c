/* SPDX-License-Identifier: MIT */
/* writer.c - tlm_tw_open/flush/close: buffers, chunk framing, compression, sink. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_initStaticCCtx: a context that never allocates */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "header.h"
#include "tw.h"

/* TLM_TW_ZSTD_PAYS: zstd only where it pays. A chunk that level 1 shrinks
 * by less than half makes the next TW_ZSTD_SKIP chunks go raw, then zstd is
 * tried again. A drain's chunk of allocator blocks (PyTorch's, delta- and
 * varint-coded already) is a few KiB that level 1 shrinks only to 0.65-0.75
 * of itself, at 5-12 ns per byte on a shared core: a third of the writer's
 * cost per event, on the host's CPU. Repetitive traces (a native loop: 5
 * times smaller) keep being compressed. */
#define TW_ZSTD_SKIP 15u

static void reset_deltas(struct tlm_tw *w)
{
	w->used = 0;
	w->nrec = 0;
	w->nev = 0;
	w->seq0 = w->events;
	w->base_time = w->prev_time = 0;
	w->prev_thread = 0;
	memset(w->prev_addr, 0, sizeof w->prev_addr);
	memset(w->slot, 0, sizeof w->slot);
	tlm__blk_reset(&w->blk);
}

struct tlm_tw *tlm_tw_open(const struct tlm_trace_header *h, tlm_tw_sink sink, void *ctx,
			   size_t chunk_bytes, int compress, int *err)
{
	int e = -ENOMEM;
	struct tlm_tw *w = calloc(1, sizeof *w);
	if (!w)
		goto fail;
	w->sink = sink;
	w->ctx = ctx;
	if (chunk_bytes < 64)
		chunk_bytes = 64;
	if (chunk_bytes > TLM__WRITER_CHUNK_MAX)
		chunk_bytes = TLM__WRITER_CHUNK_MAX;
	w->chunk_bytes = chunk_bytes;
	/* A record larger than chunk_bytes goes alone into an oversized chunk. */
	w->cap = chunk_bytes > TLM__REC_MAX ? chunk_bytes : TLM__REC_MAX;
	w->chunk = malloc(TLM__CHUNK_HDR + w->cap);
	if (!w->chunk)
		goto fail;
	if (compress) {
		w->zpays = compress == TLM_TW_ZSTD_PAYS;
		w->zcap = ZSTD_compressBound(w->cap);
		w->zbuf = malloc(TLM__CHUNK_HDR + w->zcap);
		/* Level 1's worst-case workspace, preallocated: compressing then
		 * never calls malloc (signal handlers, allocation hooks). */
		size_t wsz = ZSTD_estimateCCtxSize(1);
		w->zwork = malloc(wsz);
		if (!w->zbuf || !w->zwork)
			goto fail;
		w->cctx = ZSTD_initStaticCCtx(w->zwork, wsz);
		if (!w->cctx)
			goto fail;
	}
	reset_deltas(w);

	/* The header is the only thing built outside the chunk buffer. */
	size_t hl = tlm__header_size(h);
	uint8_t *hb = malloc(hl);
	if (!hb)
		goto fail;
	tlm__header_encode(h, hb);
	e = sink(ctx, hb, hl);
	free(hb);
	if (e)
		goto fail;
	w->bytes = hl;
	if (err)
		*err = 0;
	return w;
fail:
	if (err)
		*err = e;
	tlm_tw_close(w);
	return NULL;
}

int tlm_tw_flush(struct tlm_tw *w)
{
	if (!w->used) {
		reset_deltas(w);
		return 0;
	}
	uint8_t *out = w->chunk;
	size_t disk = w->used;
	uint32_t flags = 0;
	if (w->cctx && w->zskip)
		w->zskip--;
	else if (w->cctx) {
		size_t n = ZSTD_compressCCtx(w->cctx, w->zbuf + TLM__CHUNK_HDR, w->zcap,
					     w->chunk + TLM__CHUNK_HDR, w->used, 1);
		/* Incompressible payloads are stored raw: never larger than raw. */
		if (!ZSTD_isError(n) && n < w->used) {
			out = w->zbuf;
			disk = n;
			flags |= TLM__CKF_ZSTD;
		}
		if (w->zpays && (ZSTD_isError(n) || 2 * n > w->used))
			w->zskip = TW_ZSTD_SKIP;
	}
	memcpy(out, TLM__CHUNK_MAGIC, 4);
	tlm__put_u32(out + TLM__CK_DISKLEN, (uint32_t)disk);
	tlm__put_u32(out + TLM__CK_FLAGS, flags);
	tlm__put_u32(out + TLM__CK_RAWLEN, (uint32_t)w->used);
	tlm__put_u32(out + TLM__CK_NREC, w->nrec);
	tlm__put_u64(out + TLM__CK_SEQ, w->seq0);
	tlm__put_u64(out + TLM__CK_BASE, w->base_time);
	uLong crc = crc32(0, out + TLM__CK_FLAGS, TLM__CHUNK_HDR - TLM__CK_FLAGS);
	crc = crc32(crc, out + TLM__CHUNK_HDR, (uInt)disk);
	tlm__put_u32(out + TLM__CK_CRC, (uint32_t)crc);

	int s = w->sink(w->ctx, out, TLM__CHUNK_HDR + disk);
	if (s == 0)
		w->bytes += TLM__CHUNK_HDR + disk;
	/* On failure the chunk is dropped: the next chunk's seq still counts its
	 * events, so a reader sees the gap as lost sequence numbers. */
	reset_deltas(w);
	return s;
}

int tlm__tw_flush_for(struct tlm_tw *w, size_t bound)
{
	(void)bound; /* cap >= TLM__REC_MAX >= any bound, so an empty chunk fits it */
	return tlm_tw_flush(w);
}

uint64_t tlm_tw_events(const struct tlm_tw *w)
{
	return w->events;
}

uint64_t tlm_tw_bytes(const struct tlm_tw *w)
{
	return w->bytes;
}

void tlm_tw_close(struct tlm_tw *w)
{
	if (!w)
		return;
	free(w->chunk);
	free(w->zbuf);
	free(w->zwork); /* the static cctx lives inside it */
	free(w);
}
