/* SPDX-License-Identifier: MIT */
/*
 * replay_int.h - the replay's inner pieces, in the order a trace flows
 * through them, all in one pass and in memory bounded by the live state:
 * trace_in.c reads the records and hands each device's block requests and
 * other code's memory (struct wi_op) and the allocator's own driver calls
 * (struct wi_devev, for the check) to replay.c, which runs every setting's
 * model (model.h) on its own simulated device (sim_drv.c) in lock step, op
 * by op; requests.c guesses the requests behind whole blocks; run.c drives a
 * trace through them and picks the recommendation.
 */
#ifndef TLM_WHATIF_REPLAY_INT_H
#define TLM_WHATIF_REPLAY_INT_H

#include "tlm/trace.h"
#include "whatif/model_int.h"

#define WI_PAGE (2ull << 20)          /* the driver's allocation granularity */
#define WI_MAX_LIVE (1u << 18)        /* blocks, others' allocations, driver objects live at once per device */
#define WI_MAX_DEVICES 64             /* devices with blocks in one trace */
#define WI_MAX_ALT_SEGMENTS 16384    /* an alternative's driver allocations live at once: past it that
                                       * setting is given up (its model's lists would make the
                                       * replay quadratic: a split limit at the segment size with
                                       * unlimited memory makes one segment per request) */
#define WI_MAX_HELD 65536             /* the allocator's driver calls waiting for their class */

/* A request of the program, or another user of the device's memory. */
enum wi_op_type {
	WI_ALLOC = 1,   /* a block: size = the recorded block size */
	WI_FREE,        /* addr = the block's (as recorded) */
	WI_OOM,         /* the allocator failed: size = the rounded request */
	WI_FALLOC,      /* memory taken from the driver by others (NCCL, cuBLAS, ...): addr is its key */
	WI_FFREE,       /* addr, size: the WI_FALLOC it gives back */
	WI_EMPTY,       /* torch.cuda.empty_cache(); size 1: or garbage collection (ambiguous), 2: sure */
};

struct wi_op {
	uint64_t t;          /* ns from the trace's start */
	uint64_t addr, size; /* as recorded */
	uint64_t allocated, reserved; /* the allocator's totals after it (block ops) */
	uint32_t stack;      /* WI_ALLOC: the trace's stack id (0 none) */
	uint8_t type;
	uint64_t partner;    /* a WI_FREE or WI_FFREE kept by the report (analysis/wi_ops.c): its allocation's index */
};

/* An allocator's driver call, for the check. at = block ops before it. */
enum wi_dev_what {
	WI_SEG_ALLOC = 1, WI_SEG_FREE, WI_SEG_FAIL, WI_RESERVE, WI_RESERVE_FREE, WI_MAP, WI_UNMAP, WI_CREATE_FAIL,
};

struct wi_devev {
	uint64_t at, addr, size;
	uint8_t what;
};

/* A queue of calls: v[head .. head + n). */
struct wi_fifo {
	struct wi_devev *v;
	size_t head, n, cap;
};
int tlm__wi_fifo_push(struct wi_fifo *q, const struct wi_devev *e);
void tlm__wi_fifo_pop(struct wi_fifo *q);
void tlm__wi_fifo_free(struct wi_fifo *q);

/* What the trace tells of one device, as it is read. */
struct wi_facts {
	int device;
	uint64_t failure;        /* driver usage + free at a failed allocation, the least: 0 none */
	uint64_t sampled;        /* the same at libtlm's device memory samples */
	uint64_t total;          /* the device's size (device.N.memory): 0 unknown */
	uint64_t va_base;        /* the lowest address the trace's driver calls used */
	uint64_t reserve_min;    /* the smallest range reserved for an expandable segment */
	bool totals;             /* block events carried the allocator's totals */
	bool vmm;                /* the allocator used expandable segments */
	uint64_t nalloc, nfree, nooms, biggest;
	uint64_t peak_reserved, peak_allocated;
};

/* ---- trace_in.c: the records, in order -------------------------------- */

struct wi_feed;
/* Where a feed's output goes (replay.c): 0 go on, -1 stop (the error is the
 * sink's). first_op: the device's first block op is next (its settings and
 * facts are known then). */
struct wi_sink {
	void *ctx;
	int (*first_op)(void *ctx, const struct wi_facts *f);
	int (*op)(void *ctx, const struct wi_facts *f, const struct wi_op *o);
	int (*call)(void *ctx, const struct wi_facts *f, const struct wi_devev *e);
};

struct wi_feed *tlm__wi_feed_new(const struct wi_sink *sink, uint64_t t0);
/* 0 go on; -1 stop, err says why (a limit, no memory, the sink's stop). */
int tlm__wi_feed_record(struct wi_feed *f, const struct tlm_record *rec, char *err, size_t errlen);
int tlm__wi_feed_end(struct wi_feed *f, char *err, size_t errlen);
/* The trace's torch.alloc_conf property (NULL: none) and whether it showed
 * cudaMallocAsync calls. */
const char *tlm__wi_feed_conf(const struct wi_feed *f);
bool tlm__wi_feed_async(const struct wi_feed *f);
size_t tlm__wi_feed_ndev(const struct wi_feed *f);
const struct wi_facts *tlm__wi_feed_facts(const struct wi_feed *f, size_t i);
void tlm__wi_feed_free(struct wi_feed *f);

/* ---- requests.c: request sizes seen exact so far ---------------------- */

struct wi_size_seen {
	uint64_t size;
	uint32_t count;
};
#define WI_SITE_SIZES 8
struct wi_site {
	uint32_t stack;                  /* 0: a free slot */
	uint32_t next;                   /* where the next size goes in sizes[] */
	uint64_t sizes[WI_SITE_SIZES];   /* the last exact sizes at this stack */
};
struct wi_sizes {
	struct wi_size_seen *v;
	size_t n, cap;
	struct wi_site *site;            /* open addressing by stack id */
	size_t nsite, capsite;
};
void tlm__wi_sizes_seen(struct wi_sizes *s, uint64_t size, uint32_t stack);
/* The last exact size at the same stack in [low, size], else the one in
 * [low, size] seen most often (ties: the larger), else size. */
uint64_t tlm__wi_sizes_guess(const struct wi_sizes *s, uint64_t low, uint64_t size, uint32_t stack);
void tlm__wi_sizes_free(struct wi_sizes *s);

/* ---- sim_drv.c: the simulated device ---------------------------------- */

/* The live address ranges, never overlapping, as a treap by start address
 * (node 0: none); each node also keeps its subtree's lowest start, highest
 * end and widest free gap between its ranges, so a first fit skips every
 * subtree it cannot fit in: O(log n) a placement, where a scan of a sorted
 * array was O(n) once the space above the base is full (a hostile trace). */
struct wi_vnode {
	uint64_t start, end;
	uint64_t lo, maxend, gap; /* the subtree's: lowest start, highest end, widest gap */
	uint32_t l, r, prio;
};

struct wi_sim {
	uint64_t cap_pages;      /* 0 = unlimited */
	uint64_t used_pages;
	uint64_t va_base;
	struct wi_vnode *vn;     /* vn[0] unused; free nodes chained by l */
	size_t capvn;
	uint32_t root, nused, freelist, rng;
	size_t nlive;
	uint64_t visits;         /* nodes a first fit has looked at, in all (the tests' bound) */
	/* the recorded run's segment and range addresses, taken in order while
	 * sizes agree (NULL queues: first fit) */
	struct wi_fifo *oracle_seg, *oracle_res;
	/* the log of calls, for the check: log[loghead .. loghead + nlog) */
	bool keep_log;
	struct wi_devev *log;
	size_t nlog, caplog, loghead;
	uint64_t at;
	bool nomem;
};

void tlm__wi_sim_init(struct wi_sim *s, uint64_t memory, uint64_t va_base);
void tlm__wi_sim_drv(struct wi_sim *s, struct tlm_wi_drv *d);
/* The memory the device has from now on (0 = unlimited). */
void tlm__wi_sim_memory(struct wi_sim *s, uint64_t memory);
/* Others' memory: 0 ok (*addr), -1 no room. size > 0: a range of no length
 * would share a live range's start (replay.c places none). */
int tlm__wi_sim_take(struct wi_sim *s, uint64_t size, uint64_t *addr);
void tlm__wi_sim_give(struct wi_sim *s, uint64_t addr, uint64_t size);
uint64_t tlm__wi_sim_free_bytes(const struct wi_sim *s);
void tlm__wi_sim_log_pop(struct wi_sim *s);
void tlm__wi_sim_fini(struct wi_sim *s);

/* ---- replay.c: one device's models in lock step ----------------------- */

struct wi_reps;
struct wi_reps_conf {
	const struct tlm_wi_settings *rec;   /* the recorded settings (ties_by_segment: the primary rule) */
	bool both_rules;                      /* also check the recorded settings under the other tie rule */
	char (*alt)[96];                      /* the alternatives, as written */
	size_t nalt;
	uint64_t memory;                      /* --memory, 0: from the trace */
};
struct wi_reps *tlm__wi_reps_new(const struct wi_reps_conf *c, const struct wi_facts *f, char *err, size_t errlen);
int tlm__wi_reps_op(struct wi_reps *s, const struct wi_facts *f, const struct wi_op *o, char *err, size_t errlen);
int tlm__wi_reps_call(struct wi_reps *s, const struct wi_devev *e);
/* The results: res[0] the recorded settings under the primary rule, then the
 * alternatives; *other_check: the check under the other rule (when run). */
int tlm__wi_reps_finish(struct wi_reps *s, const struct wi_facts *f, struct tlm_wi_result *res,
		       struct tlm_wi_check *check, struct tlm_wi_check *other_check);
void tlm__wi_reps_free(struct wi_reps *s);

/* The memory a device's replay has now: the option, else the least of the
 * failure and sample figures, else the device's size, else 0 (unlimited). */
uint64_t tlm__wi_memory(const struct wi_facts *f, uint64_t option, const char **source);

#endif
