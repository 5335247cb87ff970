/* SPDX-License-Identifier: MIT */
/*
 * report.h - `tlm report`: the analysis of one trace and its renderings.
 *
 * Contract: tlm_report_build() streams a trace once and keeps memory
 * proportional to the allocations live at any moment plus the distinct stacks
 * (and distinct (stack, size) pairs for churn, capped), never to the number of
 * events. It reconstructs every allocation's lifetime per device and memory
 * kind in two layers: the driver layer (reserved: what the process holds from
 * the driver) and the allocator layer (allocated: what sub-allocators handed
 * out, where a tap reports blocks; equal to reserved when none does). The
 * result is a plain data model (struct tlm_report) that the text, summary and
 * JSON renderers print; stacks are symbolized lazily, only those printed.
 * docs/report.md explains each section and rule, docs/report-json.md the
 * JSON schema.
 *
 * Times in the model are nanoseconds relative to the trace start (the
 * header's start_monotonic_ns), signed because nothing forces a clock to be
 * monotonic across a damaged trace.
 */
#ifndef TLM_REPORT_H
#define TLM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbolize/symbols.h"
#include "tlm/trace.h"

#define TLM_REPORT_SCHEMA "tlm-report/1"

/* Memory kinds a report accounts bytes for (VMM physical handles count as
 * TLM_MEM_DEVICE of their device; VMM reservations and mappings hold none). */
enum tlm_mem_kind { TLM_MEM_DEVICE = 0, TLM_MEM_MANAGED = 1, TLM_MEM_HOST_PINNED = 2, TLM_MEM_KINDS };

enum tlm_report_exit { TLM_REPORT_CLEAN = 0, TLM_REPORT_SIGNAL = 1, TLM_REPORT_TRUNCATED = 2 };

enum tlm_oom_verdict { TLM_OOM_EXHAUSTION = 0, TLM_OOM_FRAGMENTATION = 1 };

/* What followed a failed allocation (docs/report.md, OUT OF MEMORY):
 * raised: the program got the error (PyTorch: an OutOfMemoryError) and went
 * on; recovered: the same thread freed memory and the same request then
 * succeeded (PyTorch's allocator freeing its cache and retrying: the
 * program saw nothing); fatal: the process died of it (it ended by a signal
 * or with a non-zero exit status, and the thread allocated nothing after
 * its last unrecovered failure). */
enum tlm_oom_outcome { TLM_OOM_RAISED = 0, TLM_OOM_RECOVERED = 1, TLM_OOM_FATAL = 2 };

/* One point of a device's memory over time (export.h explains the
 * downsampling): the bytes reserved and allocated from t_ns on. */
struct tlm_report_point {
	int64_t t_ns;
	uint64_t reserved, allocated;
};

/* Who took a (device, kind)'s reserved memory from the driver (owners.h,
 * docs/report.md OWNERS): the owners of one (device, kind) add up to its
 * reserved bytes at each moment kept. */
#define TLM_REPORT_OWNER_NAME 64
struct tlm_report_owner {
	char name[TLM_REPORT_OWNER_NAME]; /* "pytorch", "cublas", "cudnn", "nccl", "memory_pools",
	                                   * "program", "unknown", or a library's file name */
	uint64_t peak;                    /* its own highest bytes */
	int64_t peak_ns;                  /* when it first held them */
	uint64_t at_reserved_peak;        /* its bytes when reserved first reached peak_reserved */
	uint64_t at_end;                  /* at the end of the run (reserved_at_end's moment) */
};

/* One (device, memory kind): device -1 is host memory (pinned). */
struct tlm_report_device {
	int device;
	int kind;                        /* enum tlm_mem_kind */
	uint64_t peak_reserved;          /* bytes */
	int64_t peak_reserved_ns;        /* when it was first reached */
	uint64_t peak_allocated;
	int64_t peak_allocated_ns;
	uint64_t reserved_at_end;
	uint64_t live_bytes_at_end;      /* allocator layer (driver layer without a tap) */
	uint64_t live_allocs_at_end;
	/* At the allocated peak (peak_allocated_ns): 1 - peak_allocated / reserved_at_peak_allocated. */
	double frag_at_peak;
	uint64_t reserved_at_peak_allocated; /* reserved bytes when allocated first reached its peak */
	/* At the reserved peak (peak_reserved_ns, once its blocks were placed): */
	uint64_t allocated_at_peak_reserved;
	double frag_at_reserved_peak;    /* 1 - allocated_at_peak_reserved / peak_reserved */
	bool ext_known;                  /* blocks inside reserved memory are known (allocator tap) */
	double ext_frag_at_peak;         /* 1 - largest free gap / free inside reserved, at the reserved peak; if ext_known */
	uint64_t allocs, frees;          /* successful driver-layer operations */
	uint64_t peak_reserved_event;    /* ordinal (1-based) of the event that first reached the peak */
	bool allocator_totals;           /* an allocator tap reported its own totals here */
	uint64_t allocator_peak_allocated; /* the highest allocated / reserved totals it reported */
	uint64_t allocator_peak_reserved;
	size_t nowners;                  /* by at_reserved_peak, then peak, descending; then name */
	struct tlm_report_owner *owners; /* NULL when none */
	size_t npoints;                  /* memory over time, <= TLM_REPORT_MAX_POINTS, time order */
	struct tlm_report_point *points; /* NULL when not kept (see export.h) */
};

/* A group of allocations sharing (device, allocation stack[, size]). */
struct tlm_report_site {
	int device;
	uint32_t stack_id;               /* 0 = no stack recorded */
	uint64_t bytes;                  /* live/leaks: total bytes; churn: total bytes allocated */
	uint64_t size;                   /* churn: the size of each allocation; else 0 */
	uint64_t count;
	int64_t first_ns, last_ns;       /* first and last allocation */
	double rate;                     /* leaks: growth in bytes/s; churn: cycles per second */
};

/* What held the allocated layer of a (device, kind) at its peak, by site:
 * bytes and count live at that moment; the persistent part is what was
 * still live at the end of the run (weights, optimizer state, leaks), the
 * rest (bytes - persistent) was freed before it: transient memory such as
 * activations held from the forward pass to the backward pass. */
struct tlm_report_peak_site {
	int device;
	int kind;                        /* enum tlm_mem_kind */
	uint32_t stack_id;
	uint64_t bytes, count;
	uint64_t persistent_bytes, persistent_count;
};

struct tlm_report_oom {
	int device;
	int kind;                        /* enum tlm_mem_kind */
	uint32_t stack_id;
	int64_t time_ns;
	uint64_t requested;
	uint64_t reserved_free;          /* reserved but not handed out (0 without a tap) */
	uint64_t largest_free;           /* largest free gap inside reserved (0 without a tap) */
	uint64_t device_free;            /* the device's free memory then (cuMemGetInfo) */
	uint64_t reserved, allocated;    /* the device's totals then */
	double frag;                     /* 1 - allocated/reserved then */
	bool ext_known;
	double ext_frag;
	int verdict;                     /* enum tlm_oom_verdict */
	bool allocator;                  /* reported by an allocator tap (reportOutOfMemoryToProfiler) */
	uint64_t driver_failures;        /* allocator: its failed driver requests folded into this one */
	uint64_t driver_request;         /* allocator: the size the last of them asked the driver for
	                                  * (PyTorch's "Tried to allocate"), 0 when none */
	uint32_t thread;                 /* trace thread index */
	uint64_t event;                  /* ordinal (1-based) of the failed allocation */
	int outcome;                     /* enum tlm_oom_outcome */
	uint64_t retry_freed;            /* recovered: bytes the thread freed before the retry succeeded */
	uint64_t retry_frees;            /*   in that many frees (cached segments released) */
	int64_t retry_ns;                /*   from the failure to the successful retry */
	uint64_t *owner_bytes;           /* each owner's bytes then, in the order of its (device, kind)'s
	                                  * owners; they add up to reserved. NULL when not known */
};

/* The process's place in its job (docs/job.md): header fields and the PROP
 * records env.RANK, env.LOCAL_RANK, env.WORLD_SIZE and origin. */
struct tlm_report_job {
	uint32_t ppid;
	char host[256];
	uint64_t start_realtime_ns;     /* CLOCK_REALTIME at the trace's start_monotonic_ns */
	int64_t rank, local_rank, world_size; /* -1: not set */
	bool forked;                    /* a fork child of a traced process (origin=fork) */
	int64_t exit_status;            /* PROP exit.status: what exit() got (main's return); -1 unknown */
};

struct tlm__report_priv;
struct tlm_report_steps; /* report_steps.h */
struct tlm_report_devmem; /* devmem.h */

struct tlm_report {
	char *path;
	/* process */
	uint32_t pid;
	uint32_t argc;
	char **argv;
	char *exe;
	int exit;                        /* enum tlm_report_exit */
	int signo;                       /* TLM_REPORT_SIGNAL */
	bool signal_at_py_exit;          /* SIGABRT while the Python interpreter was finalizing */
	char end_how[16];                /* TLM_REPORT_CLEAN: "exit", "_exit", "exec" (tlm_reader_end_how) */
	char *truncation;                /* reader's truncation message or NULL */
	uint64_t lost_events;
	uint64_t events;
	/* the run: first event .. end of run (END record, else the last event) */
	bool have_events;
	int64_t run_first_ns, run_end_ns;
	/* counters */
	uint64_t unmatched_frees;        /* frees of addresses not live */
	uint64_t inconsistencies;        /* allocations at an address already live */
	uint64_t failed_allocations;     /* failures other than out of memory */
	uint64_t failed_frees;           /* frees that returned an error (free nothing) */
	uint64_t ooms_total;             /* ooms[] keeps the first TLM_REPORT_MAX_OOMS */
	uint64_t ooms_by_outcome[3];     /* of ooms[], by enum tlm_oom_outcome */
	uint64_t pool_creates, pool_destroys, pool_trims;
	uint64_t unknown_events;         /* ops/kinds this version does not know */
	uint64_t churn_untracked;        /* frees not grouped: churn table full */
	uint64_t probe_failures;         /* failed cudaMallocAsync probes (PyTorch's cacheInfo): not OOMs */
	/* coverage: events seen only by CUPTI (TLM_EVF_CUPTI), i.e. calls that
	 * bypassed every hook; the rest came through interposition */
	uint64_t cupti_only;
	uint64_t cupti_only_by_api[TLM_API_COUNT];
	/* what became of CUPTI (PROP records "cupti", "cupti.detail"): "attached",
	 * "held", "absent", "unusable", "off", "skipped"; "" when not recorded */
	char cupti_state[16];
	char cupti_detail[512];
	/* native stacks (PROP "stacks.native"): "on", or "off: " and why; "" when not recorded */
	char native_stacks[256];
	/* PyTorch's allocator settings as torch read them (PROP torch.alloc_conf) */
	bool alloc_conf_known;
	char alloc_conf[256];
	/* sections, sorted as documented */
	size_t ndevices;
	struct tlm_report_device *devices;   /* by device, then kind */
	size_t nat_peak;
	struct tlm_report_peak_site *at_peak; /* by device, kind, then bytes descending */
	size_t nlive;
	struct tlm_report_site *live;        /* by bytes, descending */
	size_t nleaks;
	struct tlm_report_site *leaks;       /* by bytes, descending */
	size_t ngc_freed;
	struct tlm_report_site *gc_freed;    /* NULL when none; freed by Python's cyclic GC (reference cycles), by
	                                      * allocation stack, by bytes descending; first/last_ns =
	                                      * first and last allocation */
	size_t nchurn;
	struct tlm_report_site *churn;       /* by count, descending */
	size_t nooms;
	struct tlm_report_oom *ooms;         /* in time order */
	/* integrity */
	size_t nerrors;
	struct tlm_integrity_error *errors;
	struct tlm_report_job job;
	struct tlm__report_priv *priv;
	struct tlm_report_steps *steps;      /* training steps (report_steps.h); never NULL once built */
	struct tlm_report_devmem *devmem;    /* the device's own view (devmem.h); NULL: the trace has no samples */
	char *whatif_hint;                   /* TLM_REPORT_WHATIF: a setting that would have avoided a
	                                      * fragmentation OOM, one line (tlm whatif); NULL: none */
};

#define TLM_REPORT_MAX_OOMS 1000
#define TLM_REPORT_MAX_POINTS 2000 /* per (device, kind): 1000 buckets, 2 points each */

/* What a report collects beyond its sections, for the outputs that need it
 * (tlm_report_needs in export.h says which): each costs memory only when
 * asked for. */
#define TLM_REPORT_SEGMAPS 0x1u  /* the segment map at each reserved peak (export.h) */
#define TLM_REPORT_ACTIVE 0x2u   /* every allocation's life: the HTML's active-memory timeline */
#define TLM_REPORT_SNAPSHOT 0x4u /* every allocation's life to the end of the run: torch-snapshot */
#define TLM_REPORT_WHATIF 0x8u   /* whatif_hint: the what-if replay of the allocator's requests */
#define TLM_REPORT_ALL 0xfu

/* Streams the trace at path, once. NULL when it cannot be opened (err gets
 * one line); otherwise a report of everything that could be read, with any
 * integrity errors listed in it, and what needs asked for.
 * tlm_report_build: everything (TLM_REPORT_ALL). */
struct tlm_report *tlm_report_build_for(const char *path, unsigned needs, char *err, size_t errlen);
/* The same from fd, open on the trace at offset 0 (the report owns it; path
 * names the trace in the report). */
struct tlm_report *tlm_report_build_fd(int fd, const char *path, unsigned needs, char *err, size_t errlen);
struct tlm_report *tlm_report_build(const char *path, char *err, size_t errlen);
void tlm_report_free(struct tlm_report *r);

/* Symbolized frames of a stack, innermost first, inlined frames expanded;
 * resolved on the first call and cached. Returns the count (0 for no stack). */
size_t tlm_report_frames(struct tlm_report *r, uint32_t stack_id, const struct tlm_frame **out);
/* The frame a user most likely wants: the first one in the program's own
 * code (not libcuda, libtorch, libtlm, ...), else the innermost; NULL if none. */
const struct tlm_frame *tlm_report_useful_frame(struct tlm_report *r, uint32_t stack_id);
/* Whether the stack's Python frames were cut at the recorder's limit (64:
 * the innermost 63 are kept). */
bool tlm_report_stack_cut(struct tlm_report *r, uint32_t stack_id);

/* Replaces the symbolizer (tests): must fill at least one frame for max >= 1;
 * strings must outlive the report. */
typedef size_t (*tlm_report_resolver)(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max);
void tlm_report_set_resolver(struct tlm_report *r, tlm_report_resolver fn, void *ctx);
/* Stacks recorded with Python frames show those frames only (the innermost
 * Python line first; the interpreter's and extensions' native frames are
 * folded) unless full is set: then the native frames follow. Default: folded. */
void tlm_report_set_full_stacks(struct tlm_report *r, bool full);

/* job_info.c: applies a PROP record to r->job (keys it does not know are
 * ignored); and the name of a site that matches across processes of a job:
 * its most useful frame and that frame's caller, "F < CALLER", each as
 * "function (file:line)" with the file's base name, else "function (module)",
 * else "module+0xOFFSET"; "(no stack)" without frames. */
void tlm__job_prop(struct tlm_report_job *j, const struct tlm_rec_prop *p);
void tlm_report_site_key(struct tlm_report *r, uint32_t stack_id, char *buf, size_t len);

/* Renderers; return 0 or -1 on a write error. */
int tlm_report_text(struct tlm_report *r, FILE *f);     /* the full report, <= 100 columns */
int tlm_report_summary(struct tlm_report *r, FILE *f);  /* <= 25 lines, <= 100 columns */
int tlm_report_json(struct tlm_report *r, FILE *f);     /* schema tlm-report/1 */

/* The leak rule (docs/report.md): count survivors, allocated between first
 * and last, in a run from run_first to run_end. */
bool tlm_report_is_leak(uint64_t count, int64_t first, int64_t last, int64_t run_first, int64_t run_end);

#endif
