/* SPDX-License-Identifier: MIT */
/*
 * format.h - wire constants of trace format v1, shared by writer and reader.
 *
 * Contract: this file is the single source of the byte layout; any change to
 * a value here is a format change (bump TLM_TRACE_VERSION and
 * docs/trace-format.md). Limits are what the reader accepts; the writer stays
 * inside them by construction or by clamping.
 */
#ifndef TLM_TRACE_FORMAT_H
#define TLM_TRACE_FORMAT_H

#include <stdint.h>

#include "tlm/trace.h"
#include "varint.h"

/* ---- file header ---- */
#define TLM__HDR_FIXED 16u              /* magic, u32 version, u32 length */
#define TLM__HDR_MAX (2u << 20)         /* header field bytes accepted */
#define TLM__MAX_ARGC 4096u
#define TLM__MAX_ARGV_BYTES (1u << 20)  /* sum of argument lengths */

/* ---- chunk header: 40 bytes ---- */
#define TLM__CHUNK_MAGIC "TLMK"
#define TLM__CHUNK_HDR 40u
#define TLM__CK_MAGIC 0   /* "TLMK" */
#define TLM__CK_DISKLEN 4 /* payload bytes on disk */
#define TLM__CK_CRC 8     /* CRC32 of bytes 12..39 then of the on-disk payload */
#define TLM__CK_FLAGS 12
#define TLM__CK_RAWLEN 16 /* payload bytes after decompression */
#define TLM__CK_NREC 20
#define TLM__CK_SEQ 24    /* u64 seq of the first event of the chunk */
#define TLM__CK_BASE 32   /* u64 time base of the chunk's first event delta */
#define TLM__CKF_ZSTD 0x1u
#define TLM__CKF_KNOWN TLM__CKF_ZSTD

/* A reader accepts chunks up to this size (raw and on disk); a writer caps
 * chunk_bytes well below. */
#define TLM__CHUNK_MAX (64u << 20)
#define TLM__WRITER_CHUNK_MAX (16u << 20)

/* ---- records ---- */
/* Tag byte: bits 0-2 are an event's kind (0..6); the value 7 marks a non-event
 * record whose type (enum tlm_rec_type) is in bits 3-7. */
#define TLM__TAG_KIND_MASK 0x07u
#define TLM__TAG_NONEVENT 0x07u
#define TLM__TAG_REC(type) ((uint8_t)(((type) << 3) | TLM__TAG_NONEVENT))

/* Event tag bits. */
#define TLM__EV_FREE 0x08u   /* op is FREE (else ALLOC, unless an op byte follows) */
#define TLM__EV_THREAD 0x10u /* thread index follows (differs from the previous event) */
#define TLM__EV_SIZE 0x20u   /* size follows (else size = 0) */
#define TLM__EV_STACK 0x40u  /* stack id follows (else: that of the previous event of the same op+kind) */
#define TLM__EV_EXT 0x80u    /* extension byte follows */

/* Extension byte: fields that rarely differ from the previous event of the
 * same op+kind in the chunk. */
#define TLM__X_OP 0x01u      /* op byte follows */
#define TLM__X_API 0x02u
#define TLM__X_FLAGS 0x04u
#define TLM__X_DEVICE 0x08u
#define TLM__X_STREAM 0x10u
#define TLM__X_AUX 0x20u
#define TLM__X_FAIL 0x40u    /* result and device_free follow (else both 0) */
#define TLM__X_EXT2 0x80u    /* second extension byte follows */

/* Second extension byte: escapes for values the compact forms cannot carry. */
#define TLM__X2_ADDR_RAW 0x01u /* addr as u64 LE */
#define TLM__X2_SIZE_RAW 0x02u /* size as u64 LE */
#define TLM__X2_KIND 0x04u     /* kind byte follows (kinds >= 7) */
#define TLM__X2_KNOWN 0x07u

/* Address and size codes: the low 2 bits select a shift; the value is shifted
 * right by it (the shifted-out bits are zero), so aligned numbers are short. */
static inline unsigned tlm__shift(unsigned sel) { return (0x150c0800u >> (8 * (sel & 3))) & 0xff; }

/* Delta state slots: per kind (addresses) and per op+kind (rare fields). */
#define TLM__NKIND 8
#define TLM__NSLOT 64
static inline unsigned tlm__kslot(unsigned kind) { return kind < 7 ? kind : 7; }
static inline unsigned tlm__slot(unsigned op, unsigned kind)
{
	return (op < 8 ? op : 0) * 8 + tlm__kslot(kind);
}

struct tlm__slotstate {
	uint64_t stream, aux;
	uint32_t stack;
	uint16_t api, flags;
	int16_t device;
};

/* Allocator blocks (kind TLM_KIND_BLOCK) have records of their own, the most
 * frequent ones in a PyTorch run: tag = (16 | b) << 3 | 7 with b's bits: */
#define TLM__BLK_TYPE 16u      /* record types 16..31 */
#define TLM__B_FREE 0x1u       /* op is FREE (else ALLOC unless an op byte follows) */
#define TLM__B_THREAD 0x2u     /* thread index follows */
#define TLM__B_STACK 0x4u      /* stack id follows (else the previous block record's of that op) */
#define TLM__B_MORE 0x8u       /* a "more" byte follows */
/* "more" byte: */
#define TLM__BM_OP 0x01u       /* op byte follows */
#define TLM__BM_DEVICE 0x02u   /* device follows */
#define TLM__BM_ALLOCATED 0x04u/* aux (allocated total) differs from the prediction */
#define TLM__BM_RESERVED 0x08u /* stream (reserved total) differs from the device's last */
#define TLM__BM_API 0x10u      /* api and flags follow */
#define TLM__BM_FAIL 0x20u     /* result and device_free follow */
#define TLM__BM_ADDR_RAW 0x40u
#define TLM__BM_SIZE_RAW 0x80u
#define TLM__BLK_DEVS 8u       /* per-device totals kept for the prediction (device & 7) */

/* Block delta state, reset at each chunk. */
struct tlm__blkstate {
	uint32_t stack[2];     /* by op: [0] ALLOC and other ops, [1] FREE */
	uint16_t api, flags;   /* chunk start: api reportMemoryUsageToProfiler, flags 0 */
	int16_t device;        /* chunk start: 0 */
	struct { int16_t device; uint64_t allocated, reserved; } dev[TLM__BLK_DEVS];
};
static inline void tlm__blk_reset(struct tlm__blkstate *b)
{
	*b = (struct tlm__blkstate){.api = TLM_API_c10_reportMemoryUsageToProfiler};
	for (unsigned i = 0; i < TLM__BLK_DEVS; i++)
		b->dev[i].device = (int16_t)i;
}
/* The allocated total a block record predicts from its device's last one. */
static inline uint64_t tlm__blk_predict(const struct tlm__blkstate *b, unsigned op, int32_t result,
					int16_t device, uint64_t size, uint64_t *reserved)
{
	unsigned i = (uint16_t)device & (TLM__BLK_DEVS - 1);
	uint64_t alloc = 0;
	*reserved = 0;
	if (b->dev[i].device == device) {
		alloc = b->dev[i].allocated;
		*reserved = b->dev[i].reserved;
	}
	if (result == 0 && op == TLM_OP_ALLOC)
		return alloc + size;
	if (result == 0 && op == TLM_OP_FREE)
		return alloc - size;
	return alloc;
}
static inline void tlm__blk_update(struct tlm__blkstate *b, int16_t device, uint64_t allocated, uint64_t reserved)
{
	unsigned i = (uint16_t)device & (TLM__BLK_DEVS - 1);
	b->dev[i].device = device;
	b->dev[i].allocated = allocated;
	b->dev[i].reserved = reserved;
	b->device = device;
}

/* Largest encodings, used to reserve buffer space before encoding. */
#define TLM__EVENT_MAX 128u
#define TLM__STACK_MAX (1u + 2 * TLM__VARINT_MAX + TLM_MAX_STACK_DEPTH * TLM__VARINT_MAX)
#define TLM__MODULE_MAX (1u + 4 * TLM__VARINT_MAX + TLM_MAX_SEGMENTS * 2 * TLM__VARINT_MAX + 1 + 64 + 4096)
#define TLM__DEVMEM_MAX (1u + 7 * TLM__VARINT_MAX)
#define TLM__DEVPROCS_MAX (1u + 5 * TLM__VARINT_MAX + TLM_MAX_DEVPROCS * 2 * TLM__VARINT_MAX)
#define TLM__REC_MAX 8192u /* >= every record above */
_Static_assert(TLM__DEVPROCS_MAX <= TLM__REC_MAX, "a DEVPROCS record fits a chunk buffer");

#endif
