/* SPDX-License-Identifier: MIT */
/*
 * reader.c - tlm_reader_*: streams a trace through a window the size of one
 * chunk, validates the header, verifies each chunk (magic, lengths, CRC),
 * decompresses it and hands the payload to decode.c. Damage is recorded as
 * integrity errors and skipped by resynchronising on the next chunk whose CRC
 * verifies; a file cut inside its last chunk is a truncation, not damage.
 * In follow mode (tlm top) the end of the file is only where the writer has
 * got to: a cut last chunk, or damage with nothing after it yet, is waited
 * for, not concluded on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "common/input.h"
#include "header.h"
#include "rd.h"
#include "common/grow.h"

#define WINDOW_MIN (256u << 10) /* initial read window: large sequential reads */
/* Raw bytes a compressed chunk may declare per byte on disk. tlm's own traces
 * compress about 1.5:1 (Python programs) to 8:1 (a tight cudaMalloc/cudaFree
 * loop); a chunk declaring more is a decompression bomb, not a trace: 5.7 KB
 * declaring 64 MiB of allocations made the report take 3.2 GB. */
#define CHUNK_RATIO_MAX 1024u

/* ---- file window ------------------------------------------------------ */

/* Makes file bytes [off, off + n) available if the file has them and returns
 * a pointer to off; *avail is how many bytes from off are buffered (>= n
 * unless the file ends first). Bytes before off are dropped: callers only
 * move forward. NULL on allocation failure. */
static const uint8_t *window(struct tlm_reader *r, uint64_t off, size_t n, size_t *avail)
{
	uint64_t have_end = r->base + r->len;
	if (off < r->base)
		off = r->base; /* never happens: offsets only grow */
	if (off + n > have_end && !r->eof) {
		/* Slide: keep [off, have_end), then read as much as fits. */
		size_t drop = off < have_end ? (size_t)(off - r->base) : r->len;
		memmove(r->buf, r->buf + drop, r->len - drop);
		r->len -= drop;
		r->base += drop;
		if (n > r->cap) {
			size_t ncap = n + WINDOW_MIN / 4;
			uint8_t *nb = realloc(r->buf, ncap);
			if (!nb)
				return NULL;
			r->buf = nb;
			r->cap = ncap;
		}
		while (!r->eof && r->base + r->len < off + n) {
			ssize_t k = read(r->fd, r->buf + r->len, r->cap - r->len);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				if (k < 0)
					r->ioerr = errno;
				r->eof = 1;
				break;
			}
			r->len += (size_t)k;
			if (r->base < off) {
				/* off lay beyond the buffered bytes: drop what precedes it. */
				size_t d = off - r->base < r->len ? (size_t)(off - r->base) : r->len;
				memmove(r->buf, r->buf + d, r->len - d);
				r->len -= d;
				r->base += d;
			}
		}
		have_end = r->base + r->len;
	}
	if (off >= have_end) {
		*avail = 0;
		return r->buf;
	}
	*avail = (size_t)(have_end - off);
	return r->buf + (off - r->base);
}

/* Moves the window back to off (a seek: rare, only during recovery). 0 when
 * the input cannot seek. */
static int rewind_to(struct tlm_reader *r, uint64_t off)
{
	if (off >= r->base)
		return 1;
	if (lseek(r->fd, (off_t)off, SEEK_SET) != (off_t)off)
		return 0;
	r->base = off;
	r->len = 0;
	r->eof = 0;
	return 1;
}

/* ---- integrity errors ------------------------------------------------- */

static void add_error(struct tlm_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_error(struct tlm_reader *r, uint64_t off, const char *fmt, ...)
{
	if (r->nerr == TLM__MAX_ERRORS) {
		/* Bounded memory on hostile input: the last slot summarises. */
		r->nerr_dropped++;
		snprintf(r->errs[r->nerr - 1].what, sizeof r->errs[0].what,
			 "%llu further integrity errors not listed",
			 (unsigned long long)r->nerr_dropped + 1);
		return;
	}
	if (r->nerr == r->errcap && tlm__grow(&r->errs, &r->errcap, r->nerr + 1, sizeof *r->errs, 8))
		return;

	struct tlm_integrity_error *e = &r->errs[r->nerr++];
	va_list ap;
	va_start(ap, fmt);
	e->offset = off;
	vsnprintf(e->what, sizeof e->what, fmt, ap);
	va_end(ap);
}

/* ---- chunk framing ---------------------------------------------------- */

enum ck { CK_OK, CK_EOF, CK_BAD_MAGIC, CK_BAD_HDR, CK_SHORT, CK_BAD_CRC, CK_NOMEM };

struct ckinfo {
	uint32_t disk, raw, flags, nrec, crc_want, crc_got;
	uint64_t seq0, base_time;
	size_t have, want; /* CK_SHORT: bytes present and needed */
	char why[96];      /* CK_BAD_HDR */
};

/* Examines the chunk that should start at off. strict (when resynchronising
 * on a candidate found by scanning): the chunk must also be followed by the
 * end of the file or by a chunk magic before its CRC is computed, which keeps
 * a scan through hostile data full of false magics from computing a CRC over
 * megabytes per candidate. */
static enum ck check_chunk(struct tlm_reader *r, uint64_t off, struct ckinfo *ci, int strict)
{
	size_t a;
	const uint8_t *c = window(r, off, TLM__CHUNK_HDR, &a);
	if (!c)
		return CK_NOMEM;
	if (a == 0)
		return CK_EOF;
	if (memcmp(c, TLM__CHUNK_MAGIC, a < 4 ? a : 4))
		return CK_BAD_MAGIC;
	if (a < TLM__CHUNK_HDR) {
		ci->have = a;
		ci->want = a >= 8 ? TLM__CHUNK_HDR + (size_t)tlm__get_u32(c + TLM__CK_DISKLEN)
				  : TLM__CHUNK_HDR;
		return CK_SHORT;
	}
	ci->disk = tlm__get_u32(c + TLM__CK_DISKLEN);
	ci->crc_want = tlm__get_u32(c + TLM__CK_CRC);
	ci->flags = tlm__get_u32(c + TLM__CK_FLAGS);
	ci->raw = tlm__get_u32(c + TLM__CK_RAWLEN);
	ci->nrec = tlm__get_u32(c + TLM__CK_NREC);
	ci->seq0 = tlm__get_u64(c + TLM__CK_SEQ);
	ci->base_time = tlm__get_u64(c + TLM__CK_BASE);
	if (ci->flags & ~TLM__CKF_KNOWN)
		snprintf(ci->why, sizeof ci->why, "unknown chunk flags 0x%x", ci->flags);
	else if (ci->disk > TLM__CHUNK_MAX || ci->raw > TLM__CHUNK_MAX)
		snprintf(ci->why, sizeof ci->why, "chunk length %u/%u exceeds %u", ci->disk,
			 ci->raw, TLM__CHUNK_MAX);
	else if ((ci->flags & TLM__CKF_ZSTD) && ci->raw / CHUNK_RATIO_MAX > ci->disk)
		snprintf(ci->why, sizeof ci->why, "chunk declares %u bytes from %u on disk, over %u:1", ci->raw,
			 ci->disk, CHUNK_RATIO_MAX);
	else if (!(ci->flags & TLM__CKF_ZSTD) && ci->disk != ci->raw)
		snprintf(ci->why, sizeof ci->why, "stored chunk length %u != %u", ci->disk, ci->raw);
	else if (ci->nrec > ci->raw)
		snprintf(ci->why, sizeof ci->why, "%u records in %u bytes", ci->nrec, ci->raw);
	else
		ci->why[0] = 0;
	if (ci->why[0])
		return CK_BAD_HDR;
	c = window(r, off, TLM__CHUNK_HDR + (size_t)ci->disk, &a);
	if (!c)
		return CK_NOMEM;
	if (a < TLM__CHUNK_HDR + (size_t)ci->disk) {
		ci->have = a;
		ci->want = TLM__CHUNK_HDR + (size_t)ci->disk;
		return CK_SHORT;
	}
	if (strict) {
		size_t end = TLM__CHUNK_HDR + (size_t)ci->disk;
		if (r->crc_budget < end) {
			snprintf(ci->why, sizeof ci->why, "resynchronisation budget spent");
			return CK_BAD_HDR;
		}
		c = window(r, off, end + 4, &a);
		if (!c)
			return CK_NOMEM;
		size_t tail = a - end < 4 ? a - end : 4;
		if (memcmp(c + end, TLM__CHUNK_MAGIC, tail)) {
			snprintf(ci->why, sizeof ci->why, "not followed by a chunk");
			return CK_BAD_HDR;
		}
		r->crc_budget -= end;
	}
	uLong crc = crc32(0, c + TLM__CK_FLAGS, TLM__CHUNK_HDR - TLM__CK_FLAGS);
	ci->crc_got = (uint32_t)crc32(crc, c + TLM__CHUNK_HDR, ci->disk);
	return ci->crc_got == ci->crc_want ? CK_OK : CK_BAD_CRC;
}

static void note_truncation(struct tlm_reader *r, uint64_t off, size_t have, size_t want)
{
	r->truncated = 1;
	r->trunc_off = off;
	snprintf(r->trunc_msg, sizeof r->trunc_msg,
		 "truncated at offset %llu: last chunk incomplete (%zu of %zu bytes)",
		 (unsigned long long)off, have, want);
}

/* Scans forward from off for a chunk magic whose chunk verifies. Returns its
 * offset, or UINT64_MAX at end of file. *short_off gets the first candidate
 * that looked like a chunk cut by the end of the file (UINT64_MAX if none). */
static uint64_t resync(struct tlm_reader *r, uint64_t off, uint64_t *short_off,
		       struct ckinfo *short_ci)
{
	*short_off = UINT64_MAX;
	/* Bounds the CRC work of one scan (hostile input can plant many false
	 * chunk headers); a real next chunk is found long before. */
	r->crc_budget = 4 * (size_t)TLM__CHUNK_MAX;
	for (;;) {
		size_t a;
		const uint8_t *c = window(r, off, 4, &a);
		if (!c || a < 4) {
			if (c && a > 0 && !memcmp(c, TLM__CHUNK_MAGIC, a) && *short_off == UINT64_MAX) {
				*short_off = off;
				short_ci->have = a;
				short_ci->want = TLM__CHUNK_HDR;
			}
			if (c && a > 1) {
				off++;
				continue;
			}
			return UINT64_MAX;
		}
		const uint8_t *m = memmem(c, a, TLM__CHUNK_MAGIC, 4);
		if (!m) {
			off += a - 3; /* the magic may straddle the window's end */
			continue;
		}
		off += (uint64_t)(m - c);
		struct ckinfo ci;
		enum ck k = check_chunk(r, off, &ci, 1);
		if (k == CK_OK)
			return off;
		if (k == CK_NOMEM || k == CK_EOF)
			return UINT64_MAX;
		if (k == CK_SHORT && *short_off == UINT64_MAX) {
			*short_off = off;
			*short_ci = ci;
		}
		off++;
	}
}

/* Follow mode: the reader goes on from off once the file grew. */
static int wait_at(struct tlm_reader *r, uint64_t off)
{
	r->pos = off;
	if (rewind_to(r, off))
		return TLM_READER_AGAIN;
	r->done = 1; /* cannot seek back: nothing more can be read */
	return 0;
}

/* After damage at off: finds the next good chunk, records one error.
 * natural: where the next chunk starts if the damaged chunk's length field is
 * right (UINT64_MAX if unknown). When the scan finds no good chunk before it
 * and a chunk header that merely fails its CRC sits there, the reader goes
 * there, so each of several damaged chunks in a row is reported on its own. */
static int recover(struct tlm_reader *r, uint64_t off, const char *what, uint64_t natural)
{
	uint64_t short_off;
	struct ckinfo sci;
	uint64_t next = resync(r, off + 1, &short_off, &sci);
	if (next != UINT64_MAX && next == natural) {
		add_error(r, off, "%s", what);
		r->pos = next;
		return 0;
	}
	if (natural != UINT64_MAX && natural < next) {
		/* resync() moved past natural; look again from there. */
		if (rewind_to(r, natural) && check_chunk(r, natural, &sci, 0) == CK_BAD_CRC) {
			add_error(r, off, "%s", what);
			r->pos = natural;
			return 0;
		}
	}
	if (next != UINT64_MAX) {
		add_error(r, off, "%s, resynchronised at offset %llu", what, (unsigned long long)next);
		r->pos = next;
		return 0;
	}
	if (r->follow) /* a good chunk may still be written after the damage: look again later */
		return wait_at(r, off);
	add_error(r, off, "%s, no valid chunk after it", what);
	if (short_off != UINT64_MAX)
		note_truncation(r, short_off, sci.have, sci.want);
	r->done = 1;
	return 0;
}

/* Positions the decoder on the next good chunk. 0 at end of file;
 * TLM_READER_AGAIN in follow mode where the file ends for now. */
static int next_chunk(struct tlm_reader *r)
{
	char what[160];
	while (!r->done) {
		struct ckinfo ci;
		uint64_t off = r->pos;
		switch (check_chunk(r, off, &ci, 0)) {
		case CK_EOF:
			if (r->follow)
				return TLM_READER_AGAIN;
			r->done = 1;
			break;
		case CK_NOMEM:
			add_error(r, off, "out of memory reading the chunk");
			r->done = 1;
			break;
		case CK_BAD_MAGIC:
			if (recover(r, off, "bad chunk magic", UINT64_MAX))
				return TLM_READER_AGAIN;
			break;
		case CK_BAD_HDR:
			snprintf(what, sizeof what, "bad chunk header (%s)", ci.why);
			if (recover(r, off, what, UINT64_MAX))
				return TLM_READER_AGAIN;
			break;
		case CK_BAD_CRC:
			snprintf(what, sizeof what, "chunk checksum mismatch (expected 0x%08x, got 0x%08x)",
				 ci.crc_want, ci.crc_got);
			if (recover(r, off, what, off + TLM__CHUNK_HDR + ci.disk))
				return TLM_READER_AGAIN;
			break;
		case CK_SHORT: {
			/* The file ends inside this chunk: a cut, unless a good chunk
			 * follows, in which case its length field was damaged. */
			uint64_t short_off;
			struct ckinfo sci;
			uint64_t next = resync(r, off + 1, &short_off, &sci);
			if (next == UINT64_MAX && r->follow) /* the writer is still writing it */
				return wait_at(r, off);
			if (next == UINT64_MAX) {
				note_truncation(r, off, ci.have, ci.want);
				r->done = 1;
			} else {
				add_error(r, off, "chunk length %zu runs past the end of the file, resynchronised at offset %llu",
					  ci.want, (unsigned long long)next);
				r->pos = next;
			}
			break;
		}
		case CK_OK: {
			size_t a;
			const uint8_t *c = window(r, off, TLM__CHUNK_HDR + (size_t)ci.disk, &a);
			const uint8_t *pl = c + TLM__CHUNK_HDR;
			r->pos = off + TLM__CHUNK_HDR + ci.disk;
			if (ci.flags & TLM__CKF_ZSTD) {
				if (ci.raw > r->zcap) {
					uint8_t *nz = realloc(r->zbuf, ci.raw);
					if (!nz) {
						add_error(r, off, "out of memory decompressing the chunk");
						continue;
					}
					r->zbuf = nz;
					r->zcap = ci.raw;
				}
				if (!r->dctx && !(r->dctx = ZSTD_createDCtx())) {
					add_error(r, off, "out of memory decompressing the chunk");
					continue;
				}
				size_t n = ZSTD_decompressDCtx(r->dctx, r->zbuf, ci.raw, pl, ci.disk);
				if (ZSTD_isError(n) || n != ci.raw) {
					add_error(r, off, "payload decode error: zstd: %s",
						  ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from the chunk header");
					continue;
				}
				pl = r->zbuf;
			}
			r->p = pl;
			r->end = pl + ci.raw;
			r->in_chunk = 1;
			r->choff = off;
			r->nrec_hdr = ci.nrec;
			r->nrec = 0;
			r->seq0 = ci.seq0;
			r->nev = 0;
			r->prev_time = ci.base_time;
			r->prev_thread = 0;
			memset(r->prev_addr, 0, sizeof r->prev_addr);
			memset(r->slot, 0, sizeof r->slot);
			tlm__blk_reset(&r->blk);
			return 1;
		}
		}
	}
	return 0;
}

int tlm_reader_next(struct tlm_reader *r, struct tlm_record *rec)
{
	if (r->follow && !r->ioerr)
		r->eof = 0; /* the file may have grown since */
	for (;;) {
		if (r->p < r->end) {
			const char *why;
			if (tlm__decode_record(r, rec, &why))
				return 1;
			add_error(r, r->choff, "payload decode error: %s (record %u)", why, r->nrec);
			r->p = r->end = NULL;
			r->in_chunk = 0; /* the count check is moot now */
			continue;
		}
		if (r->in_chunk) {
			r->in_chunk = 0;
			if (r->nrec != r->nrec_hdr)
				add_error(r, r->choff,
					  "payload decode error: chunk header says %u records, payload has %u",
					  r->nrec_hdr, r->nrec);
		}
		r->p = r->end = NULL;
		int k = next_chunk(r);
		if (k <= 0)
			return k;
	}
}

bool tlm_reader_is_stream(const struct tlm_reader *r)
{
	return r->stream;
}

void tlm_reader_follow(struct tlm_reader *r, bool on)
{
	r->follow = on;
}

uint64_t tlm_reader_offset(const struct tlm_reader *r)
{
	return r->pos;
}

/* ---- open / accessors ------------------------------------------------- */

static struct tlm_reader *open_fail(struct tlm_reader *r, char *err, size_t errlen,
				    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static struct tlm_reader *open_fail(struct tlm_reader *r, char *err, size_t errlen,
				    const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	tlm_reader_close(r);
	return NULL;
}

struct tlm_reader *tlm_reader_open(const char *path, char *err, size_t errlen)
{
	/* a regular file, or a pipe read as a stream; never a device, and never
	 * a wait in open(2) */
	char why[200];
	int fd = tlm_input_open(path, TLM_INPUT_PIPE, why, sizeof why);
	if (fd < 0)
		return open_fail(NULL, err, errlen, "%s", why);
	return tlm_reader_open_fd(fd, err, errlen);
}

struct tlm_reader *tlm_reader_open_fd(int fd, char *err, size_t errlen)
{
	char why[200];
	struct tlm_reader *r = calloc(1, sizeof *r);
	if (!r) {
		close(fd);
		return open_fail(NULL, err, errlen, "out of memory");
	}
	r->fd = fd;
	r->cap = WINDOW_MIN;
	r->buf = malloc(r->cap);
	if (!r->buf)
		return open_fail(r, err, errlen, "out of memory");
	r->stream = tlm_input_is_pipe(fd);

	size_t a;
	const uint8_t *b = window(r, 0, TLM__HDR_FIXED, &a);
	if (!b)
		return open_fail(r, err, errlen, "out of memory");
	if (r->ioerr)
		return open_fail(r, err, errlen, "read error: %s", strerror(r->ioerr));
	if (a == 0)
		return open_fail(r, err, errlen, "not a tlm trace (empty file)");
	if (memcmp(b, TLM_TRACE_MAGIC, a < 8 ? a : 8))
		return open_fail(r, err, errlen, "not a tlm trace (bad magic at offset 0)");
	if (a < 8)
		return open_fail(r, err, errlen, "truncated header: expected 8 bytes at offset 0, file has %zu", a);
	if (a >= 12 && tlm__get_u32(b + 8) != TLM_TRACE_VERSION)
		return open_fail(r, err, errlen, "unsupported trace version %u (this tlm reads version %u)",
				 tlm__get_u32(b + 8), TLM_TRACE_VERSION);
	if (a < TLM__HDR_FIXED)
		return open_fail(r, err, errlen, "truncated header: expected 8 bytes at offset 8, file has %zu", a - 8);
	uint32_t hlen = tlm__get_u32(b + 12);
	if (hlen > TLM__HDR_MAX)
		return open_fail(r, err, errlen, "bad header length %u at offset 12 (limit %u)", hlen, TLM__HDR_MAX);
	size_t total = TLM__HDR_FIXED + (size_t)hlen + 4;
	b = window(r, 0, total, &a);
	if (!b)
		return open_fail(r, err, errlen, "out of memory");
	if (a < total)
		return open_fail(r, err, errlen, "truncated header: expected %zu bytes at offset 8, file has %zu",
				 total - 8, a - 8);
	uint32_t want = tlm__get_u32(b + total - 4);
	uint32_t got = (uint32_t)crc32(0, b, (uInt)(total - 4));
	if (want != got)
		return open_fail(r, err, errlen, "header checksum mismatch at offset %zu (expected 0x%08x, got 0x%08x)",
				 total - 4, want, got);
	if (tlm__header_decode(b + TLM__HDR_FIXED, hlen, &r->h, why, sizeof why))
		return open_fail(r, err, errlen, "%s", why);
	r->pos = total;
	return r;
}

const struct tlm_trace_header *tlm_reader_header(const struct tlm_reader *r)
{
	return &r->h;
}

enum tlm_trace_state tlm_reader_state(const struct tlm_reader *r)
{
	if (r->truncated)
		return TLM_TRACE_TRUNCATED;
	if (r->saw_end || !strcmp(r->end_how, "exec")) /* exec: the image was replaced, no END */
		return TLM_TRACE_CLEAN;
	return r->saw_signal ? TLM_TRACE_SIGNAL : TLM_TRACE_TRUNCATED;
}

const char *tlm_reader_end_how(const struct tlm_reader *r)
{
	if (tlm_reader_state(r) != TLM_TRACE_CLEAN)
		return NULL;
	return r->end_how[0] ? r->end_how : "exit";
}

size_t tlm_reader_errors(const struct tlm_reader *r, const struct tlm_integrity_error **errs)
{
	if (errs)
		*errs = r->errs;
	return r->nerr;
}

uint64_t tlm_reader_lost(const struct tlm_reader *r)
{
	return r->lost;
}

const char *tlm_reader_truncation(const struct tlm_reader *r, uint64_t *offset)
{
	if (!r->truncated)
		return NULL;
	if (offset)
		*offset = r->trunc_off;
	return r->trunc_msg;
}

void tlm_reader_close(struct tlm_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->h.argv);
	free(r->buf);
	free(r->zbuf);
	free(r->errs);
	free(r);
}
