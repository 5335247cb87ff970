/* SPDX-License-Identifier: MIT */
/*
 * tlm/trace.h - trace format v1: the one writer and the one reader.
 *
 * Contract: a trace is a file header followed by self-contained chunks, each
 * with its length and a CRC32 of its payload, so a reader can check every
 * byte, skip a damaged chunk and carry on, and tell a clean end (an END record)
 * from a truncated file. Records appear in the order the recorder produced
 * them; events are in global order (their seq is their position, counted from
 * 0). Every definition (thread, stack, module) precedes the first event that
 * refers to it. docs/trace-format.md is the byte-level description.
 *
 * The writer never allocates after tlm_tw_open() and never takes a lock; it
 * is used by one thread at a time (the shim serialises callers).
 */
#ifndef TLM_TRACE_H
#define TLM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tlm/event.h"

#define TLM_TRACE_MAGIC "TLMTRACE" /* 8 bytes at offset 0 */
#define TLM_TRACE_VERSION 1u

#define TLM_TRACE_F_DROP_MODE 0x1u /* recorded in drop mode: loss possible, counted */

struct tlm_trace_header {
	uint32_t version;
	uint32_t flags;          /* TLM_TRACE_F_* */
	uint32_t pid, ppid;
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at start ... */
	uint64_t start_monotonic_ns;/* ... and CLOCK_MONOTONIC at the same moment */
	uint32_t clock_id;       /* the clock of event times: CLOCK_MONOTONIC (1) */
	uint32_t stack_depth;    /* TLM_STACK_DEPTH in force, 0 = stacks off */
	char host[256];
	char exe[4096];          /* /proc/self/exe at start */
	char tlm_version[32];
	uint32_t argc;           /* command line, argv[0..argc) */
	char **argv;             /* reader: owned by the reader; writer: caller's */
};

/* Kinds of record a reader returns. */
enum tlm_rec_type {
	TLM_REC_EVENT = 1,
	TLM_REC_THREAD = 2,        /* a thread index's OS tid and name */
	TLM_REC_STACK = 3,         /* stack id -> return addresses, innermost first */
	TLM_REC_MODULE = 4,        /* a loaded ELF object */
	TLM_REC_MODULE_UNLOAD = 5, /* module id unloaded (dlclose) */
	TLM_REC_LOST = 6,          /* a thread lost count events (drop mode, late teardown) */
	TLM_REC_SIGNAL = 7,        /* the process took a fatal signal */
	TLM_REC_END = 8,           /* clean end of the recording */
	TLM_REC_STRING = 9,        /* string id -> bytes (file names and function names of Python frames) */
	TLM_REC_PYSTACK = 10,      /* stack id -> Python frames (innermost first) + its native stack id */
	TLM_REC_PROP = 11,         /* a fact about the recording: key -> value ("cupti" -> "attached") */
	TLM_REC_DEVMEM = 12,       /* the device's own view of its memory at one moment (cuMemGetInfo) */
	TLM_REC_DEVPROCS = 13,     /* NVML's per-process used memory on that device, completing a DEVMEM sample */
	TLM_REC_CLOCK = 14,        /* the wall clock was set: CLOCK_REALTIME against the events' clock from then on */
};

#define TLM_MAX_STACK_DEPTH 256
#define TLM_MAX_SEGMENTS 16

struct tlm_rec_thread {
	uint32_t index;
	int32_t tid;
	char name[16];
};

struct tlm_rec_stack {
	uint32_t id;       /* >= 1 */
	uint32_t depth;
	uint64_t ip[TLM_MAX_STACK_DEPTH]; /* return addresses, innermost caller first */
};

#define TLM_MAX_STRING 4095
struct tlm_rec_string {
	uint32_t id;       /* >= 1 */
	uint32_t len;      /* <= TLM_MAX_STRING */
	char s[TLM_MAX_STRING + 1]; /* NUL-terminated */
};

/* A property of the recording (docs/trace-format.md lists the keys). A later
 * record with the same key replaces the earlier value. */
#define TLM_MAX_PROP_KEY 63
struct tlm_rec_prop {
	char key[TLM_MAX_PROP_KEY + 1];  /* 1..63 bytes, NUL-terminated */
	uint32_t len;                    /* value length, <= TLM_MAX_STRING */
	char value[TLM_MAX_STRING + 1];  /* NUL-terminated */
};

/* A Python stack shares the id space of native stacks: an event's stack_id
 * names either a STACK or a PYSTACK record. */
#define TLM_MAX_PY_DEPTH 256
struct tlm_py_frame {
	uint32_t file, name; /* string ids (name: the qualified name on 3.11+, the plain name before) */
	int32_t line;        /* 0 = unknown */
};
struct tlm_rec_pystack {
	uint32_t id;        /* >= 1 */
	uint32_t native;    /* the native stack (STACK record id) of the same call, 0 = none */
	uint32_t depth;
	struct tlm_py_frame f[TLM_MAX_PY_DEPTH]; /* innermost first */
};

/* A sample of the device's memory. START, PEAK and OOM samples come directly
 * after the event they were taken with (that event's seq is the record's seq
 * - 1) and describe the state after it, or before it with F_BEFORE; EXIT
 * samples come after the process's last event. Any may be absent. */
enum tlm_devmem_why { TLM_DEVMEM_START = 0, TLM_DEVMEM_PEAK = 1, TLM_DEVMEM_OOM = 2, TLM_DEVMEM_EXIT = 3 };
#define TLM_DEVMEM_F_BEFORE 0x1u /* taken before the event it follows took effect (a free) */
struct tlm_rec_devmem {
	uint32_t sample;      /* this sample's index in the trace, from 0 */
	int32_t device;       /* CUDA ordinal */
	uint32_t why;         /* enum tlm_devmem_why */
	uint32_t flags;       /* TLM_DEVMEM_F_* */
	uint64_t time_ns;     /* when taken, on the events' clock */
	uint64_t total, free; /* bytes, as cuMemGetInfo answered */
};

/* The wall clock (CLOCK_REALTIME) at time_ns on the events' clock, written
 * when it moved against the events' clock since the header's pair or the
 * last such record (set by hand, by a time daemon's step): wall times of
 * events from time_ns on are realtime_ns + (t - time_ns). */
struct tlm_rec_clock {
	uint64_t time_ns;     /* CLOCK_MONOTONIC */
	uint64_t realtime_ns; /* CLOCK_REALTIME at that moment */
};

/* NVML's view of the processes on a device, completing DEVMEM sample `sample`
 * (it comes anywhere after that record). */
#define TLM_MAX_DEVPROCS 256
#define TLM_DEVPROCS_NO_NVML (-1) /* status: no NVML library loaded */
struct tlm_rec_devprocs {
	uint32_t sample;      /* the DEVMEM sample it completes */
	int32_t device;
	int32_t status;       /* 0: NVML answered; -1: no NVML loaded; else NVML's error code (n = 0) */
	uint64_t time_ns;     /* when NVML was asked */
	uint32_t n;           /* <= 256 */
	struct { uint32_t pid; uint64_t used; } p[TLM_MAX_DEVPROCS]; /* used bytes; UINT64_MAX = NVML: not available */
};

struct tlm_rec_module {
	uint32_t id;       /* >= 1 */
	uint64_t base;     /* load bias (dlpi_addr) */
	uint32_t nseg;
	struct { uint64_t start, end; } seg[TLM_MAX_SEGMENTS]; /* runtime addresses of PT_LOAD ranges */
	uint32_t build_id_len;
	uint8_t build_id[64];
	char path[4096];   /* "" for the main program when unnamed */
};

struct tlm_rec_lost {
	uint32_t thread;
	uint64_t count;
};

struct tlm_rec_end {
	uint64_t events;   /* events written, all threads */
	uint64_t lost;     /* events lost, all threads */
	uint64_t end_monotonic_ns;
};

struct tlm_record {
	uint32_t type;       /* enum tlm_rec_type */
	uint64_t offset;     /* file offset of the chunk holding it */
	uint64_t seq;        /* events: global position; others: seq of the next event */
	union {
		struct tlm_event ev;
		struct tlm_rec_thread thread;
		struct tlm_rec_stack stack;
		struct tlm_rec_module module;
		uint32_t module_unload;   /* module id */
		struct tlm_rec_lost lost;
		int32_t signal;           /* signal number */
		struct tlm_rec_end end;
		struct tlm_rec_string string;
		struct tlm_rec_pystack pystack;
		struct tlm_rec_prop prop;
		struct tlm_rec_devmem devmem;
		struct tlm_rec_devprocs devprocs;
		struct tlm_rec_clock clock;
	} u;
};

/* ---- writer ---------------------------------------------------------- */

struct tlm_tw; /* opaque */

/* Called by the writer with each finished, framed chunk (or the header).
 * Returns 0 or -errno; on error the writer reports it back from the call that
 * flushed. */
typedef int (*tlm_tw_sink)(void *ctx, const void *buf, size_t len);

/* Opens a writer that frames chunks of at most chunk_bytes of payload and
 * writes the header at once. compress: 0 = raw chunks, 1 = every chunk
 * zstd-compressed (a payload that does not shrink stays raw), TLM_TW_ZSTD_PAYS
 * = only while it pays: a chunk that shrinks by less than half stores the
 * next 15 raw, then zstd is tried again. Returns NULL on allocation failure. */
#define TLM_TW_ZSTD_PAYS 2
struct tlm_tw *tlm_tw_open(const struct tlm_trace_header *h, tlm_tw_sink sink, void *ctx,
			   size_t chunk_bytes, int compress, int *err);
/* Each appends one record; a full chunk is flushed through the sink first.
 * Return 0 or -errno from the sink. */
int tlm_tw_event(struct tlm_tw *w, const struct tlm_event *ev);
int tlm_tw_thread(struct tlm_tw *w, const struct tlm_rec_thread *t);
int tlm_tw_stack(struct tlm_tw *w, uint32_t id, const uint64_t *ip, uint32_t depth);
int tlm_tw_module(struct tlm_tw *w, const struct tlm_rec_module *m);
int tlm_tw_string(struct tlm_tw *w, uint32_t id, const char *s, uint32_t len); /* len clamped to 4095 */
int tlm_tw_pystack(struct tlm_tw *w, const struct tlm_rec_pystack *p);     /* depth clamped to 256 */
/* key: 1..63 bytes (-EINVAL otherwise); value clamped to 4095 bytes */
int tlm_tw_prop(struct tlm_tw *w, const char *key, const char *value);
int tlm_tw_devmem(struct tlm_tw *w, const struct tlm_rec_devmem *d);
int tlm_tw_devprocs(struct tlm_tw *w, const struct tlm_rec_devprocs *d); /* n clamped to 256 */
int tlm_tw_clock(struct tlm_tw *w, const struct tlm_rec_clock *c);
int tlm_tw_module_unload(struct tlm_tw *w, uint32_t id);
int tlm_tw_lost(struct tlm_tw *w, uint32_t thread, uint64_t count);
int tlm_tw_signal(struct tlm_tw *w, int signo);
int tlm_tw_end(struct tlm_tw *w, uint64_t end_monotonic_ns); /* END record + flush */
/* Frames and hands the pending records to the sink (no-op when none). */
int tlm_tw_flush(struct tlm_tw *w);
uint64_t tlm_tw_events(const struct tlm_tw *w);   /* events appended so far */
uint64_t tlm_tw_bytes(const struct tlm_tw *w);    /* bytes handed to the sink so far */
void tlm_tw_close(struct tlm_tw *w); /* frees; does not flush */

/* ---- reader ---------------------------------------------------------- */

struct tlm_reader; /* opaque */

enum tlm_trace_state {
	TLM_TRACE_CLEAN = 0,     /* END record seen */
	TLM_TRACE_SIGNAL = 1,    /* SIGNAL record seen, no END */
	TLM_TRACE_TRUNCATED = 2, /* neither: the process died or the file was cut */
};

struct tlm_integrity_error {
	uint64_t offset;   /* file offset of the damage */
	char what[160];    /* "chunk checksum mismatch (expected 0x..., got 0x...)" */
};

/* Opens and validates the header. On failure returns NULL and writes a
 * one-line message (naming the offset and what was expected) into err.
 * Opens a regular file, or a pipe or FIFO as a stream (read once; damage is
 * then skipped without seeking back), never anything else, and never waits
 * in open(2) (src/common/input.h). */
struct tlm_reader *tlm_reader_open(const char *path, char *err, size_t errlen);
/* The same on a descriptor open for reading at offset 0, which the reader
 * owns from then on (closed by tlm_reader_close, or here on failure): a
 * regular file, or a pipe read as a stream (tlm_input_open's). */
struct tlm_reader *tlm_reader_open_fd(int fd, char *err, size_t errlen);
/* The trace comes through a pipe: it cannot be read a second time. */
bool tlm_reader_is_stream(const struct tlm_reader *r);
const struct tlm_trace_header *tlm_reader_header(const struct tlm_reader *r);
/* Next record: 1 = got one, 0 = end of file. Damaged chunks are skipped (the
 * reader resynchronises on the next chunk) and listed as integrity errors.
 * In follow mode, TLM_READER_AGAIN where the file ends for now. */
int tlm_reader_next(struct tlm_reader *r, struct tlm_record *rec);
/* Follow mode (a trace still being written, tlm top): the end of the file is
 * not the end of the trace. Where the file ends on a chunk boundary, inside a
 * chunk (the writer is writing it) or after damage with no good chunk after
 * it yet, tlm_reader_next() returns TLM_READER_AGAIN and concludes nothing:
 * call it again once the file grew. Turned off, the next call reads the rest
 * as an ordinary reader would (truncation, damage at the end) and the state
 * becomes final. The state accessors are valid so far in between. */
#define TLM_READER_AGAIN (-1)
void tlm_reader_follow(struct tlm_reader *r, bool on);
/* The file offset up to which the trace has been read (the next chunk's). */
uint64_t tlm_reader_offset(const struct tlm_reader *r);
enum tlm_trace_state tlm_reader_state(const struct tlm_reader *r); /* valid at end */
/* Valid at end: for a CLEAN trace, how the process ended: "exit", "_exit"
 * (or "_Exit"), "exec" (its image replaced; PROP "end"); else NULL. */
const char *tlm_reader_end_how(const struct tlm_reader *r);
size_t tlm_reader_errors(const struct tlm_reader *r, const struct tlm_integrity_error **errs);
uint64_t tlm_reader_lost(const struct tlm_reader *r);  /* sum of LOST records so far */
/* Valid at end: when the file ended inside a chunk (TRUNCATED), returns
 * "truncated at offset X: last chunk incomplete (n of m bytes)" and sets
 * *offset (may be NULL) to X, the incomplete chunk's offset; else NULL. */
const char *tlm_reader_truncation(const struct tlm_reader *r, uint64_t *offset);
void tlm_reader_close(struct tlm_reader *r);

#endif
