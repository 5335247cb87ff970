/* SPDX-License-Identifier: MIT */
/*
 * tlmpy.h - libtlmpy.so, the C side of the Python package tlm (python/tlm):
 * a plain C interface that ctypes calls, so no Python or numpy header is
 * needed to build it and one library serves every Python 3.
 *
 * Contract: tlm_py_load() reads a whole trace through the one reader
 * (tlm_reader_*) and decodes its events into columns, one array per field,
 * in file order (the events' seq); everything else the trace says (header,
 * threads, properties, stack ids, modules, device samples, final state,
 * integrity errors) comes as one JSON object (tlm_py_meta). The caller takes
 * each column with tlm_py_take() and frees it with tlm_py_free(); what it
 * did not take, tlm_py_close() frees. The report is the C report itself
 * (tlm_report_build and its JSON renderer, docs/report-json.md), and a
 * stack's frames and cross-process site name are the report's, so the
 * package computes nothing of its own. Every call is thread-safe on its own
 * objects: ctypes releases the GIL, so traces load in parallel.
 * docs/python.md is the user's side.
 */
#ifndef TLM_PYTHON_TLMPY_H
#define TLM_PYTHON_TLMPY_H

#include <stddef.h>
#include <stdint.h>

#define TLM_PY_API __attribute__((visibility("default")))

/* The columns, in this order; the element type of each is the comment's. */
enum tlm_py_col {
	TLM_PY_TIME = 0, /* int64: ns since the trace start (header's start_monotonic_ns) */
	TLM_PY_OP,       /* uint8: enum tlm_op */
	TLM_PY_KIND,     /* uint8: enum tlm_kind */
	TLM_PY_DEVICE,   /* int16: device ordinal, -1 none */
	TLM_PY_ADDRESS,  /* uint64 */
	TLM_PY_SIZE,     /* uint64 */
	TLM_PY_STREAM,   /* uint64 (kind BLOCK: the allocator's reserved bytes) */
	TLM_PY_AUX,      /* uint64 (kind BLOCK: the allocator's allocated bytes) */
	TLM_PY_THREAD,   /* uint32: trace thread index */
	TLM_PY_STACK,    /* uint32: stack id, 0 = none */
	TLM_PY_RESULT,   /* int32: the call's result, 0 = success */
	TLM_PY_FLAGS,    /* uint16: TLM_EVF_* */
	TLM_PY_API_COL,  /* uint16: enum tlm_api */
	TLM_PY_NCOLS
};

struct tlm_py_trace;

/* NULL with one line in err when the trace cannot be opened or memory ran
 * out; a damaged trace loads what can be read (its errors are in the meta). */
TLM_PY_API struct tlm_py_trace *tlm_py_load(const char *path, char *err, size_t errlen);
TLM_PY_API uint64_t tlm_py_events(const struct tlm_py_trace *t);
/* The column's array (tlm_py_events() elements), now the caller's; NULL
 * when there are no events or it was taken already. */
TLM_PY_API void *tlm_py_take(struct tlm_py_trace *t, int col);
/* The meta JSON (NUL-terminated, len bytes), valid until tlm_py_close. */
TLM_PY_API const char *tlm_py_meta(const struct tlm_py_trace *t, size_t *len);
TLM_PY_API void tlm_py_close(struct tlm_py_trace *t);
TLM_PY_API void tlm_py_free(void *p);

/* Names of the codes in the columns (src/trace/names.c); which: 0 op, 1 kind,
 * 2 api. NULL past the last known code. */
TLM_PY_API const char *tlm_py_name(int which, unsigned code);
TLM_PY_API const char *tlm_py_version(void);

/* The report of the trace at path (tlm_report_build); NULL with err. */
struct tlm_report;
TLM_PY_API struct tlm_report *tlm_py_report(const char *path, char *err, size_t errlen);
/* The report as `tlm report --format json` writes it; malloc'd, NUL-terminated
 * (free with tlm_py_free); NULL when memory ran out. */
TLM_PY_API char *tlm_py_report_json(struct tlm_report *r, size_t *len);
/* A JSON array with, for each of the n stack ids: {"id", "site" (the name that
 * matches across a job's processes, docs/job.md), "stack" (the report's
 * frames, docs/report-json.md)}. Malloc'd as above. */
TLM_PY_API char *tlm_py_stacks_json(struct tlm_report *r, const uint32_t *ids, size_t n, size_t *len);
TLM_PY_API void tlm_py_report_free(struct tlm_report *r);

#endif
