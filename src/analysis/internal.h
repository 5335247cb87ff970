/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the pieces of src/analysis behind report.h: the live map, the
 * stack table, the two-layer accounting, per-site aggregates and the replay
 * that drives them. Nothing here is used outside src/analysis, src/render and their tests.
 */
#ifndef TLM_REPORT_INTERNAL_H
#define TLM_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "analysis/report.h"

/* ---- live map: (namespace, address) -> live allocation ------------------ */

/* Keyed by the event kind's address namespace (tlm_kind_ns, tlm/event.h). */

enum tlm__layer { TLM__LAYER_NONE = 0, TLM__LAYER_DRIVER = 1, TLM__LAYER_BLOCK = 2 };

/* The consumers that keep a record per live allocation (pass.h): the index
 * of their record of it, TLM__NO_TAG for none. Steps: the report's recorder,
 * and tlm top's second one of its rolling window (a recorder checks that
 * the record is this allocation's: e->ev); the allocations' lives of the
 * HTML timeline and of torch-snapshot. */
enum { TLM__TAG_STEPS = 0, TLM__TAG_STEPS_WINDOW = 1, TLM__TAG_ACTIVE = 2, TLM__TAG_SNAPSHOT = 3, TLM__TAGS };
#define TLM__NO_TAG UINT32_MAX

struct tlm__live {
	uint64_t addr;
	uint64_t size;
	uint64_t time_ns;
	uint64_t ev;      /* ordinal (1-based) of the event that allocated it */
	uint32_t stack_id;
	uint32_t raw_stack; /* the stack id as recorded (stack_id: canonical, frames.c) */
	uint32_t tag[TLM__TAGS];
	int16_t device;
	uint8_t ns;      /* enum tlm_ns; TLM_NS_NONE marks a free slot */
	uint8_t mkind;   /* enum tlm_mem_kind, or 0xff when the entry holds no bytes */
};

struct tlm__live_map {
	struct tlm__live *slot;
	size_t mask;     /* capacity - 1 (power of two) */
	size_t count;
};

int tlm__live_init(struct tlm__live_map *m);
void tlm__live_fini(struct tlm__live_map *m);
struct tlm__live *tlm__live_find(struct tlm__live_map *m, uint8_t ns, uint64_t addr);
/* Inserts (the key must not be present); returns the slot or NULL on ENOMEM. */
struct tlm__live *tlm__live_put(struct tlm__live_map *m, const struct tlm__live *e);
/* Removes a slot returned by find; e is invalid afterwards. */
void tlm__live_del(struct tlm__live_map *m, struct tlm__live *e);

/* ---- u64 triple -> index hash, for stacks and churn --------------------- */

struct tlm__key { uint64_t a, b, c; };

struct tlm__index {
	uint32_t *slot;  /* 0 = empty, else value + 1 */
	size_t mask, count;
	const struct tlm__key *(*key_of)(const void *ctx, uint32_t value);
	const void *ctx;
};

int tlm__index_init(struct tlm__index *x, const struct tlm__key *(*key_of)(const void *, uint32_t),
		    const void *ctx);
void tlm__index_fini(struct tlm__index *x);
/* Value for key, or UINT32_MAX. */
uint32_t tlm__index_get(const struct tlm__index *x, const struct tlm__key *k);
/* Adds key -> value (key not present; key_of(value) must already answer). */
int tlm__index_add(struct tlm__index *x, const struct tlm__key *k, uint32_t value);

/* ---- stack table: stack id -> return addresses -------------------------- */

struct tlm__stack_ent { struct tlm__key key; size_t off; uint32_t depth; };

struct tlm__stacks {
	struct tlm__stack_ent *ent;
	size_t n, cap;
	uint64_t *ip;
	size_t nip, capip;
	struct tlm__index idx;
};

int tlm__stacks_init(struct tlm__stacks *s);
void tlm__stacks_fini(struct tlm__stacks *s);
int tlm__stacks_add(struct tlm__stacks *s, uint32_t id, const uint64_t *ip, uint32_t depth);
/* Return addresses of a stack (innermost first), NULL when unknown. */
const uint64_t *tlm__stacks_get(const struct tlm__stacks *s, uint32_t id, uint32_t *depth);

/* ---- memory over time: bounded, downsampled --------------------------- */

/* The run is cut into at most TLM__SERIES_BUCKETS buckets of equal width
 * (doubled, and neighbours merged, whenever a change falls past the last
 * one). A bucket keeps its first and last change times, the highest values
 * and the last values, so a peak is never lost and a bucket with one change
 * is exact. Memory: at most TLM__SERIES_BUCKETS buckets per (device, kind),
 * for at most TLM__SERIES_ACCTS of them. */
#define TLM__SERIES_BUCKETS 1000
#define TLM__SERIES_ACCTS 256

struct tlm__bucket {
	uint64_t t_first, t_last;
	uint64_t max_res, max_alloc, last_res, last_alloc;
	uint64_t n;                 /* changes; 0 = empty */
};

struct tlm__series {
	uint64_t origin, width;     /* bucket i covers origin + [i*width, (i+1)*width) */
	bool started;
	size_t nb, cap;             /* buckets used (last non-empty + 1), allocated */
	struct tlm__bucket *b;
};

void tlm__series_add(struct tlm__series *s, uint64_t t, uint64_t reserved, uint64_t allocated);
void tlm__series_free(struct tlm__series *s);
/* The points of a series, times relative to start (malloc'd; NULL, 0 when empty). */
int tlm__series_points(const struct tlm__series *s, uint64_t start, struct tlm_report_point **out, size_t *n);

/* ---- two-layer accounting per (device, memory kind) --------------------- */

struct tlm__acct {
	int16_t device;
	uint8_t mkind;
	bool has_blocks;            /* an allocator tap reported blocks here */
	uint64_t reserved, allocated;
	uint64_t driver_count, block_count;
	uint64_t free_gap_largest;  /* allocator layer; meaningful with has_blocks */
	uint64_t peak_reserved, peak_allocated;
	uint64_t peak_reserved_t, peak_allocated_t;
	/* at the reserved peak (settled once the blocks are placed, see below) */
	double frag_at_peak, ext_frag_at_peak;
	bool ext_at_peak_known;
	uint64_t allocated_at_peak_reserved;
	/* at the allocated peak: the moment the workload needed the most */
	uint64_t reserved_at_peak_allocated;
	double frag_at_peak_allocated;
	uint64_t allocs, frees;
	/* snapshot at the end of the run */
	uint64_t end_reserved, end_live_bytes, end_live_count;
	uint64_t ev;                /* ordinal of the event being accounted (set by the replay) */
	uint64_t peak_reserved_ev;  /* ev when peak_reserved was first reached */
	uint64_t prev_ev, prev_reserved; /* the last event that changed reserved, and reserved before it */
	struct tlm__series *ts;     /* memory over time; NULL past TLM__SERIES_ACCTS or on ENOMEM */
	/* With a tap, fragmentation at a new reserved peak is taken once the
	 * allocator has placed the block it took the segment for: at the next
	 * block event, or before the next driver event (replay.c). */
	bool peak_pending;
	uint64_t last_block_ev;     /* ordinal of the last successful block event (OOM folding) */
	bool tap_totals;            /* block events carried the allocator's own totals */
	uint64_t tap_peak_allocated, tap_peak_reserved; /* the highest totals they carried */
	struct tlm__psites *ps;     /* the allocated layer by site at its peak; NULL without memory */
};

struct tlm__accts {
	struct tlm__acct *a;
	size_t n, cap;
	size_t last;               /* lookup cache: runs touch one device at a time */
};

struct tlm__acct *tlm__acct_get(struct tlm__accts *s, int device, int mkind); /* NULL on ENOMEM */
void tlm__accts_fini(struct tlm__accts *s);
/* Driver layer: the process took (alloc) or gave back bytes at time t.
 * Without an allocator tap the allocator layer mirrors it. */
void tlm__acct_driver(struct tlm__acct *a, bool alloc, uint64_t bytes, uint64_t t, uint32_t stack_id);
/* Allocator layer (hook for an allocator tap): a block handed out / returned. */
void tlm__acct_block(struct tlm__acct *a, bool alloc, uint64_t bytes, uint64_t t, uint32_t stack_id);

/* ---- peak sites (peak_sites.c): the allocated layer by site at its peak --- */

struct tlm__psites;
struct tlm__psites *tlm__psites_new(void);
void tlm__psites_free(struct tlm__psites *p);
void tlm__psites_reset(struct tlm__psites *p);            /* the layer changed (first block) */
/* An allocation or free of the allocated layer; -1 without memory. */
int tlm__psites_change(struct tlm__psites *p, uint32_t stack_id, bool alloc, uint64_t bytes);
void tlm__psites_peak(struct tlm__psites *p);             /* allocated reached a new peak now */
/* At the end of the run: a survivor allocated before the peak. */
void tlm__psites_persist(struct tlm__psites *p, uint32_t stack_id, uint64_t bytes);
/* Writes the sites live at the peak into out (NULL: only counts them). */
size_t tlm__psites_export(const struct tlm__psites *p, int device, int kind, struct tlm_report_peak_site *out);
double tlm__acct_frag(const struct tlm__acct *a);     /* 1 - allocated/reserved */
/* 1 - largest free gap / free inside reserved; false when blocks are unknown. */
bool tlm__acct_ext_frag(const struct tlm__acct *a, double *out);

/* ---- per-site aggregates ------------------------------------------------ */

struct tlm__churn_ent {
	struct tlm__key key;       /* a = device, b = stack id, c = size */
	uint64_t count;
	uint64_t first_t, last_t;
};

struct tlm__churn {
	struct tlm__churn_ent *ent;
	size_t n, cap;
	struct tlm__index idx;
	uint64_t untracked;
};

#define TLM__CHURN_MAX (1u << 20) /* distinct (device, stack, size) groups kept */

int tlm__churn_init(struct tlm__churn *c);
void tlm__churn_fini(struct tlm__churn *c);
void tlm__churn_add(struct tlm__churn *c, int device, uint32_t stack, uint64_t size, uint64_t t);
#define TLM__CHURN_MIN_CYCLES 10

/* ---- replay: the per-event accounting ----------------------------------- */

struct tlm__replay {
	struct tlm__live_map live;
	struct tlm__accts accts;
	struct tlm__churn churn;
	struct tlm_report *rep;    /* counters and OOMs go straight into the report */
	uint64_t start;            /* the trace start: report times are relative to it */
	size_t oom_cap;
	uint64_t first_t, last_t;
	bool have_t;
	bool end_marked;           /* the end of the run was fixed (END or a marker) */
	uint64_t end_t;
	bool snapped;              /* live-at-end snapshot taken */
	struct tlm_report_site *snap; /* survivors grouped by (device, stack) */
	size_t nsnap;
	int oom_error;             /* ENOMEM while growing */
	struct tlm_report_site *gc; /* frees flagged TLM_EVF_GC_FREED, by (device, alloc stack) */
	size_t ngc, gc_cap;
	/* cudaMallocAsync probes (PyTorch's cacheInfo halves a failed size until
	 * one fits): the last failed async allocation, until the thread's next
	 * allocation says whether it was one. */
	bool probe_pending;
	uint32_t probe_thread;
	uint64_t probe_stream, probe_size, probe_ev;
	uint64_t put_ev;           /* ordinal of the last event that entered an allocation */
	const struct tlm_event *ev, *raw; /* the event being replayed: stack made canonical, and as read */
	/* OOM outcomes (oom_outcome.c): the driver failure whose retry is
	 * watched, and the last failure not recovered (a death's candidate). */
	struct {
		bool open;
		uint64_t ev, size, t, freed, frees;
		uint32_t thread;
		int16_t device;
	} watch;
	uint64_t last_oom_ev, allocs_after_oom;
	uint32_t last_oom_thread;
	/* What the pass's consumers are told (pass.h); NULL: nothing. */
	const struct tlm__replay_hooks *hooks;
	void *hooks_ctx;
};

/* The replay's matches, as they happen (pass.c dispatches them to the
 * consumers): an allocation entered the live map (e is valid until the map
 * changes: a consumer may set its tag), one left it (the free, or an
 * allocation at its address that ended it: ev), and a new reserved peak was
 * settled, its fragmentation taken from the live layout. */
struct tlm__replay_hooks {
	void (*alloc)(void *ctx, struct tlm__live *e, const struct tlm_event *ev);
	void (*release)(void *ctx, const struct tlm__live *e, const struct tlm_event *ev);
	void (*settle)(void *ctx, const struct tlm__acct *a);
};

int tlm__replay_init(struct tlm__replay *rp, struct tlm_report *rep);
void tlm__replay_fini(struct tlm__replay *rp);
void tlm__replay_event(struct tlm__replay *rp, const struct tlm_event *ev);
/* The END record: the run ends at t (events after it are still accounted). */
void tlm__replay_end(struct tlm__replay *rp, uint64_t t);
/* Settles the peaks still pending (the trace ended right after them). */
void tlm__replay_settle_all(struct tlm__replay *rp);
/* ---- layout (layout.c): ranges of reserved memory and the blocks in them -- */

struct tlm__range {
	uint64_t start, end;  /* [start, end) */
	uint64_t time_ns;     /* its (earliest) allocation */
	uint32_t stack_id;    /* of the (first) allocation or mapping */
	bool vmm;             /* VMM mappings (merged when laid end to end) */
};
/* The VA ranges holding (device, mkind)'s memory, sorted: driver allocations,
 * and for device memory VMM mappings laid end to end merged into one range.
 * *out is malloc'd (NULL when 0). Returns the count, or -1 without memory. */
ssize_t tlm__va_ranges(const struct tlm__live_map *m, int device, int mkind, struct tlm__range **out);
/* The live blocks of (device, mkind) by address (*out malloc'd; pointers into
 * the map, valid until it changes). Returns the count, or -1. */
ssize_t tlm__live_blocks(const struct tlm__live_map *m, int device, int mkind, const struct tlm__live ***out);
/* Largest free gap inside those ranges, given the live blocks inside them
 * (blocks count against the range that holds their start; gaps never span
 * two ranges). 0 without memory. */
uint64_t tlm__largest_gap(const struct tlm__live_map *m, int device, int mkind);
/* The same over the ranges holding at least one live block only. */
uint64_t tlm__largest_gap_in_use(const struct tlm__live_map *m, int device, int mkind);
/* Hook for a "run is over" marker (e.g. Python finalization began): fixes the
 * end of the run at t and takes the live-at-end snapshot now, so frees made
 * during teardown do not hide what was live. */
void tlm__replay_mark_end(struct tlm__replay *rp, uint64_t t);
/* The live-at-end snapshot (survivors by site, each layer's end figures),
 * once: a marker's, or the run's end. */
void tlm__replay_snapshot(struct tlm__replay *rp);
/* sections.c: takes the snapshot if no marker did, and fills the report's
 * sections. */
int tlm__replay_finish(struct tlm__replay *rp);

/* sites.c: groups the live map into (device, stack) sites. */
/* qsort order of tlm_report_site: most bytes first, then most allocations,
 * lower device, lower stack id (sites.c). */
int tlm__site_by_bytes(const void *a, const void *b);
/* Whether a live entry is counted at its (device, kind)'s allocated layer:
 * its blocks where a tap reports them, else its driver allocations. */
static inline bool tlm__acct_counts(const struct tlm__acct *a, const struct tlm__live *e)
{
	return a->has_blocks ? e->ns == TLM_NS_BLOCK : e->ns != TLM_NS_BLOCK;
}
/* Adds one allocation to a site group: bytes, count, first and last time. */
void tlm__site_add(struct tlm_report_site *g, const struct tlm__live *e);
int tlm__sites_group_live(const struct tlm__live_map *m, const struct tlm__accts *accts,
			  struct tlm_report_site **out, size_t *n);

/* ---- the report's private part: stacks and symbolization ---------------- */

struct tlm__frames_ent {
	struct tlm__key key;      /* a = stack id */
	struct tlm_frame *f;
	size_t n;
	bool cut;                 /* its Python frames were cut at the recorder's limit */
};

struct tlm__report_priv {
	struct tlm__stacks stacks;
	struct tlm_symbolizer *sym;   /* NULL when built without the symbolizer */
	tlm_report_resolver resolve;
	void *resolve_ctx;
	struct tlm__frames_ent *fr;
	size_t nfr, capfr;
	struct tlm__index fridx;
	bool fridx_ok;
	/* Python stacks (PYSTACK records) and the strings they name */
	char **str;                   /* by string id, NULL when undefined */
	size_t nstr;
	/* strings a redefinition replaced: frames resolved before it (cached in
	 * fr, or held by a live view between reads) still point at them */
	char **retired;
	size_t nretired, capretired;
	struct tlm__py_ent {
		struct tlm__key key;      /* a = stack id */
		struct tlm__key fkey;     /* a = hash of the Python frames, b = depth */
		uint32_t native, depth, canon; /* canon: the first stack id with the same Python frames */
		size_t off;
	} *py;
	size_t npy, cappy;
	struct tlm_py_frame *pyf;
	size_t npyf, cappyf;
	struct tlm__index pyidx, pycanon;
	bool pyidx_ok;
	bool full_stacks;             /* show interpreter/native frames under Python ones */
	/* what the exports asked the pass for (tlm_report_build_for); NULL: not
	 * collected, or failed (why[] says which) */
	struct tlm_report_segmap *segmaps; /* one per report device (export.h) */
	struct tlm__alog *alog[2];    /* TLM__ALOG_ACTIVE, TLM__ALOG_SNAPSHOT (alog.h) */
	char why_segmaps[96], why_alog[2][96];
	/* the allocator's requests for the steps' forecast, while the pass
	 * finishes (wi_ops.h); NULL: none */
	const struct wi_trace *wi_ops;
};

/* frames.c */
int tlm__priv_init(struct tlm__report_priv *p);
void tlm__priv_fini(struct tlm__report_priv *p);
void tlm__priv_module(struct tlm__report_priv *p, const struct tlm_rec_module *m);
void tlm__priv_module_unload(struct tlm__report_priv *p, uint32_t id);
int tlm__priv_string(struct tlm__report_priv *p, const struct tlm_rec_string *s);
int tlm__priv_pystack(struct tlm__report_priv *p, const struct tlm_rec_pystack *s);
/* Sites group Python stacks by their Python frames: the id that stands for
 * all stacks with the same frames as this one (id itself when not Python). */
uint32_t tlm__priv_canon(const struct tlm__report_priv *p, uint32_t id);
/* The native stack recorded with a Python stack (id itself when not Python). */
uint32_t tlm__priv_native(const struct tlm__report_priv *p, uint32_t id);
/* oom_outcome.c: after each event (frees: with the size it released), and
 * once the run is read (the exit status known): each OOM's outcome. */
void tlm__outcome_event(struct tlm__replay *rp, const struct tlm_event *ev);
void tlm__outcome_free(struct tlm__replay *rp, const struct tlm_event *ev, uint64_t size, bool block);
void tlm__outcome_finish(struct tlm_report *rep, const struct tlm__replay *rp);

/* frames.c: whether a frame is in the program's own code (Python, or a module
 * that is not libcuda, libtorch, libpython, libc, ...). */
bool tlm__frame_own(const struct tlm_frame *f);
/* A frame of the program's own files: own code, and for Python not the
 * interpreter's standard library nor an installed package (site-packages). */
bool tlm__frame_user(const struct tlm_frame *f);
/* An autograd node's apply (ConvolutionBackward0, AddmmBackward0,
 * AccumulateGrad): its name into buf. */
bool tlm__autograd_node(const struct tlm_frame *f, char *buf, size_t n);

#endif
