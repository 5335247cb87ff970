/* SPDX-License-Identifier: MIT */
/*
 * pystack.h - the calling thread's Python stack, read without the GIL.
 *
 * Contract: tlm__py_get() reads the interpreter's frame chain of the calling
 * thread directly (no interpreter call, no GIL, no allocation once the
 * thread's cache exists) and interns (native stack id, Python frames) into a
 * per-thread "merged stack" id, TLM__PY_ID_BIT set (native id 0: Python
 * frames alone, as a block free's). Consecutive captures from one chain share
 * the walk's lookups and, when equal at every hop, the id. When the id is new,
 * *def_slots ring slots are needed and tlm__py_write_def() writes the
 * definition (TLM__SLOT_PYSTACK + payload) there. Strings are copied out of
 * the interpreter once per code object; no object pointer is kept beyond a
 * cache key that is validated on each use. Offsets: ../docs/recording.md,
 * "Python stacks". Unknown version or failed check: returns 0 for good
 * (native stacks only), said once.
 */
#ifndef TLM_PYSTACK_H
#define TLM_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/defs.h"
#include "recording/ring.h"

#define TLM__PY_ID_BIT 0x80000000u /* slot.stack: a merged (Python) local id */
#define TLM__PY_STACKS 4096u       /* local merged ids per thread before a reset */
#define TLM__PY_MAX_FRAMES 64u
/* A stack deeper than TLM__PY_MAX_FRAMES keeps its innermost 63 frames and
 * ends with this marker frame (empty file and name, line -1), so the report
 * can say it was cut. */
#define TLM__PY_CUT_LINE (-1)
#define TLM__PY_FILE_MAX 512u
#define TLM__PY_NAME_MAX 128u

/* Line of instruction offset off (bytes for table kinds 0 and 1, code units
 * for 2) in the line table lines (a bytes object) of a code object starting
 * at line first; 0 when it has none (pyline.c). kind: 0 co_lnotab (3.8-3.9),
 * 1 co_linetable (3.10), 2 location table (3.11+). */
int32_t tlm__py_decode_line(int kind, uint64_t lines, int32_t first, int64_t off);

/* Before a native stack is taken: sets Python stacks up and checks the frame
 * layout on the first call that can, so that the first stacks too end at
 * the interpreter (stack.h); afterwards one load. */
void tlm__py_ready(void) TLM_HIDDEN;
/* 0 = no Python stack (not a Python thread, Python off or unsupported).
 * *ts: the thread state the frames were read from (0: none), for
 * tlm__py_free_flags; left alone when Python is not set up. */
uint32_t tlm__py_get(struct tlm__ring *r, uint32_t native_sid, uint32_t native_gen, bool *fresh,
		     uint32_t *def_slots, uint64_t *ts) TLM_HIDDEN;
/* Writes the pending definition at ring position head; returns the position after it. */
uint64_t tlm__py_write_def(struct tlm__ring *r, uint64_t head) TLM_HIDDEN;
/* The last definition could not be written (ring full, drop mode): forget every id. */
void tlm__py_forget(struct tlm__ring *r) TLM_HIDDEN;
/* TLM_EVF_GC_FREED / TLM_EVF_FINALIZING for a free on this thread, now;
 * ts: the thread's state as tlm__py_get read it for this event, or
 * TLM__PY_TS_ASK (not read: asked here, a call into the interpreter). */
#define TLM__PY_TS_ASK 1u
uint16_t tlm__py_free_flags(uint64_t ts) TLM_HIDDEN;

#endif
