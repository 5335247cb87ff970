/* SPDX-License-Identifier: MIT */
/*
 * owners.h - who holds each device's reserved memory: PyTorch's caching
 * allocator, cuBLAS, cuDNN, NCCL, the program's stream-ordered pools, other
 * libraries by module, the program's own calls (docs/report.md, OWNERS).
 *
 * Contract: build.c feeds it every record before the replay takes it
 * (tlm__owners_record) and each event after (tlm__owners_after); the
 * replay tells it each allocation entering and leaving its live map
 * (tlm__owners_on_live, replay's on_live hook). Each driver-layer
 * allocation (device, managed and pinned host memory, VMM physical handles;
 * never a block of an allocator tap) gets one owner when it is made, from
 * its own native stack as recorded (for a Python stack, the native stack
 * recorded with it), with the module map as it was at that moment: the
 * first frame, innermost first, outside the carriers (tlm, the CUDA runtime
 * and driver, libc, the C++ runtime) names it (tlm__owner_class). A stack
 * of carrier frames only is owned by the innermost carrier's module; no
 * stack at all (TLM_STACK_DEPTH=0), or none of its frames in a module the
 * trace lists, by "unknown": nothing is guessed. The
 * owner's bytes follow the replay's matches, so the owners of a (device,
 * kind) add up to its reserved bytes at every moment; they are kept at the
 * reserved peak (its first moment), at each out-of-memory error the report
 * lists, at the end of the run (the moment of reserved_at_end), and each
 * owner's own peak. finish() fills tlm_report_device.owners and
 * tlm_report_oom.owner_bytes. Memory: a few words per owner per (device,
 * kind), per module segment, per stack id, per OOM kept.
 */
#ifndef TLM_ANALYSIS_OWNERS_H
#define TLM_ANALYSIS_OWNERS_H

#include <stdbool.h>
#include <stdint.h>

struct tlm__owners;
struct tlm__replay;
struct tlm__live;
struct tlm_event;
struct tlm_record;
struct tlm_report;

/* NULL without memory. */
struct tlm__owners *tlm__owners_new(void);
void tlm__owners_free(struct tlm__owners *o);
/* A record, before the replay takes it: modules loaded and unloaded, the
 * run's end (the replay's live-at-end moment). -1 without memory. */
int tlm__owners_record(struct tlm__owners *o, const struct tlm__replay *rp, const struct tlm_record *rec);
/* An event, after the replay took it: an OOM it just listed keeps its
 * owners' bytes. -1 without memory. */
int tlm__owners_after(struct tlm__owners *o, const struct tlm_report *rep, const struct tlm_record *rec);
/* The replay's on_live hook (ctx: the owners): e entered the live map (alloc,
 * from event raw as read) or is about to leave it. Sets rp->oom_error
 * without memory. */
void tlm__owners_on_live(void *ctx, struct tlm__replay *rp, const struct tlm__live *e, const struct tlm_event *raw,
			 bool alloc);
/* Fills each device's owners and each OOM's owner_bytes (times relative to
 * start); -1 without memory. */
int tlm__owners_finish(struct tlm__owners *o, struct tlm_report *rep, uint64_t start);

/* The owners every report knows by name (tlm_report_owner.name). */
#define TLM_OWNER_PYTORCH "pytorch"
#define TLM_OWNER_CUBLAS "cublas"
#define TLM_OWNER_CUDNN "cudnn"
#define TLM_OWNER_NCCL "nccl"
#define TLM_OWNER_POOLS "memory_pools"
#define TLM_OWNER_PROGRAM "program"
#define TLM_OWNER_UNKNOWN "unknown"

/* What a module's frame says about an allocation made under it. */
enum tlm__owner_cls {
	TLM__OWN_CARRIER = 0, /* passes the call on: tlm, the CUDA runtime and driver, libc, libstdc++ */
	TLM__OWN_PROGRAM = 1, /* the program itself: its executable, the Python interpreter, ctypes */
	TLM__OWN_NAMED = 2,   /* an owner: *name is a TLM_OWNER_* or NULL for the module's own file name */
};
/* The class of a module by its path (exe: the program's executable, from
 * the trace header). */
enum tlm__owner_cls tlm__owner_class(const char *path, const char *exe, const char **name);

#endif
