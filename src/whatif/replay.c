/* SPDX-License-Identifier: MIT */
/*
 * replay.c - one device's replays in lock step (replay_int.h, struct
 * wi_reps): a model per setting, each on its own simulated device, fed op by
 * op as the trace is read. The recorded settings' model is compared with the
 * trace as it goes (block addresses and sizes, the allocator's totals, its
 * driver calls in order) and guesses each request behind a whole block for
 * the others (requests.c). Memory: each model's live state and the calls not
 * compared yet.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/replay_int.h"

#define NO_MEMORY_TOTAL (1ull << 40) /* the device size a replay assumes when the trace gives none */

typedef unsigned long long ull;

struct run1 {                    /* one model replaying one setting */
	struct tlm_wi_settings s;
	struct tlm_wi_model *m;
	struct wi_sim sim;
	struct wi_table blocks;      /* trace block address -> model address + 1 */
	struct wi_table others;      /* others' memory: trace key -> sim address + 1, UINT64_MAX no room */
	struct tlm_wi_result r;
	bool check, primary;         /* the recorded settings (compared); the one that guesses */
	struct tlm_wi_check chk;
	struct wi_fifo calls, oseg, ores; /* the trace's calls not compared yet; the addresses to take */
	struct wi_sizes seen;
	uint64_t compared, last_peak, foreign_failed;
	bool rec_gc, same_divs;
};

struct wi_reps {
	struct run1 *run;            /* [0] recorded (primary rule), [1] other rule when checked, alternatives */
	size_t nrun, nchecks;
	uint64_t memory_opt, memory;
};

/* Keeps the earliest mismatch of the run (driver calls are compared after it). */
__attribute__((format(printf, 3, 4))) static void mismatch(struct tlm_wi_check *c, uint64_t pos, const char *fmt, ...)
{
	if (c->mismatches++ && pos >= c->first_pos)
		return;
	c->first_pos = pos;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->first, sizeof c->first, fmt, ap);
	va_end(ap);
}

static const char *what_name(int w)
{
	static const char *const n[] = {"?", "segment alloc", "segment free", "failed segment alloc",
					"address reserve", "address free", "map", "unmap", "failed cuMemCreate"};
	return w >= 0 && w <= WI_CREATE_FAIL ? n[w] : "?";
}

/* The model's driver calls against the recorded ones, pair by pair as both
 * come; at the end (or when one side runs too far ahead) the rest is one-sided. */
static void compare_calls(struct run1 *u, bool end)
{
	struct tlm_wi_check *c = &u->chk;
	struct wi_sim *s = &u->sim;
	while (u->calls.n || s->nlog) {
		const struct wi_devev *a = u->calls.n ? &u->calls.v[u->calls.head] : NULL;
		const struct wi_devev *b = s->nlog ? &s->log[s->loghead] : NULL;
		if ((!a || !b) && !end && u->calls.n < WI_MAX_HELD && s->nlog < WI_MAX_HELD)
			return;
		size_t i = (size_t)++u->compared;
		c->segment_events++;
		if (!a || !b) {
			mismatch(c, (a ? a->at : b->at) * 2, "driver call %zu: the %s has a %s of %llu B before block op %llu, the %s none", i,
				 a ? "trace" : "model", what_name(a ? a->what : b->what), (ull)(a ? a->size : b->size),
				 (ull)(a ? a->at : b->at) + 1, a ? "model" : "trace");
		} else {
			bool addr_matters = a->what != WI_SEG_FAIL && a->what != WI_CREATE_FAIL && a->what != WI_RESERVE &&
					    a->what != WI_RESERVE_FREE;
			bool size_matters = a->what != WI_RESERVE && a->what != WI_RESERVE_FREE;
			if (a->what != b->what || a->at != b->at || (size_matters && a->size != b->size) ||
			    (addr_matters && a->addr != b->addr))
				mismatch(c, (a->at < b->at ? a->at : b->at) * 2, "driver call %zu: the trace has a %s of %llu B at 0x%llx before block op %llu, the model a %s of %llu B at 0x%llx before block op %llu",
					 i, what_name(a->what), (ull)a->size, (ull)a->addr, (ull)a->at + 1, what_name(b->what),
					 (ull)b->size, (ull)b->addr, (ull)b->at + 1);
		}
		if (a)
			tlm__wi_fifo_pop(&u->calls);
		if (b)
			tlm__wi_sim_log_pop(s);
	}
}

static void note_oom(struct run1 *u, const struct wi_op *o, uint64_t request, bool recorded)
{
	struct tlm_wi_result *r = &u->r;
	if (r->nooms++ >= TLM_WI_MAX_OOMS)
		return;
	struct tlm_wi_stats st;
	tlm_wi_model_stats(u->m, &st);
	uint64_t fr, big;
	tlm_wi_model_free_space(u->m, &fr, &big);
	uint64_t df = tlm__wi_sim_free_bytes(&u->sim);
	r->oom[r->nooms - 1] = (struct tlm_wi_oom){o->t, request, st.allocated, st.reserved, fr,
						   df == UINT64_MAX ? 0 : df, df != UINT64_MAX && fr + df >= request,
						   recorded};
}

/* Whether the recorded run made a new segment at addr for the block op now. */
static bool recorded_segment(const struct run1 *u, uint64_t addr)
{
	for (size_t i = 0; i < u->calls.n; i++) {
		const struct wi_devev *e = &u->calls.v[u->calls.head + i];
		if (e->at == u->sim.at && e->what == WI_SEG_ALLOC && e->addr == addr)
			return true;
	}
	return false;
}

/* The request to ask the recorded settings' model for a recorded block: its
 * size, except where a max_split_size_mb of the run lies within 1 MiB below it,
 * the block is a new segment and a request of its size would have been given
 * a cached oversize block: the request was below the limit (no oversize
 * cached block serves such a request) and took the new segment whole. */
static uint64_t recorded_request(const struct run1 *u, const struct wi_op *o)
{
	uint64_t ms = u->s.max_split;
	if (ms == UINT64_MAX || u->s.expandable || o->size < ms || o->size - TLM_WI_SMALL_SIZE >= ms)
		return o->size;
	if (!tlm_wi_model_peek(u->m, o->size, 0) || !recorded_segment(u, o->addr))
		return o->size;
	return o->size - TLM_WI_SMALL_SIZE;
}

/* One op through one model. *req: the guessed request of a block (the
 * primary check sets it, the others use it). -1: no memory. */
static int step(struct run1 *u, const struct wi_op *o, uint64_t *req)
{
	struct tlm_wi_check *check = u->check ? &u->chk : NULL;
	uint64_t addr = 0, bs = 0, a;
	int mr = 0;
	bool block = true, had = true;
	switch (o->type) {
	case WI_ALLOC:
		if (check) {
			uint64_t q = recorded_request(u, o);
			mr = tlm_wi_model_malloc(u->m, q, 0, &addr, &bs);
			if (u->primary) {
				uint64_t low = mr ? o->size : tlm_wi_model_last_low(u->m);
				if (low >= o->size)
					tlm__wi_sizes_seen(&u->seen, o->size, o->stack);
				*req = low >= o->size ? o->size : tlm__wi_sizes_guess(&u->seen, low, q, o->stack);
			}
		} else {
			mr = tlm_wi_model_malloc(u->m, *req, 0, &addr, &bs);
		}
		if (mr == 0) {
			if (tlm__wi_table_put(&u->blocks, o->addr, addr + 1))
				return -1;
			if (check && (addr != o->addr || bs != o->size))
				mismatch(check, u->sim.at * 2 + 1, "block op %llu: the trace has %llu B at 0x%llx, the model %llu B at 0x%llx",
					 (ull)u->sim.at + 1, (ull)o->size, (ull)o->addr, (ull)bs, (ull)addr);
		} else if (mr == -1) {
			note_oom(u, o, bs, false);
			if (check)
				mismatch(check, u->sim.at * 2 + 1, "block op %llu: the trace allocated %llu B, the model ran out of memory",
					 (ull)u->sim.at + 1, (ull)o->size);
		}
		break;
	case WI_FREE:
		a = tlm__wi_table_take(&u->blocks, o->addr);
		had = a != 0;
		if (a)
			tlm_wi_model_release(u->m, a - 1);
		break;
	case WI_OOM:
		if (check && u->primary)
			tlm__wi_sizes_seen(&u->seen, o->size, 0); /* a request, rounded */
		mr = tlm_wi_model_malloc(u->m, o->size, 0, &addr, &bs);
		if (mr == 0) {
			/* what the program would have done with it is not in the
			 * trace: it is given back at once (holding it to the end
			 * would make every later request of a program that caught
			 * its OOMs pay for blocks it never had) */
			u->r.recorded_ooms_avoided++;
			tlm_wi_model_release(u->m, addr);
			if (check)
				mismatch(check, u->sim.at * 2 + 1, "block op %llu: the trace ran out of memory for %llu B, the model did not",
					 (ull)u->sim.at + 1, (ull)o->size);
		} else if (mr == -1) {
			note_oom(u, o, bs, true);
		}
		break;
	case WI_FALLOC:
		block = false;
		/* no bytes (cudaMalloc of 0, a damaged trace): no range, nothing to
		 * give back. One of no length would start where a live one starts,
		 * and removing either (by start) would take both out of the device's
		 * tree: the live one's space would be handed out again */
		if (!o->size)
			addr = UINT64_MAX - 1;
		else if (tlm__wi_sim_take(&u->sim, o->size, &addr))
			u->foreign_failed++, addr = UINT64_MAX - 1;
		if (tlm__wi_table_put(&u->others, o->addr, addr + 1))
			return -1;
		break;
	case WI_FFREE:
		block = false;
		a = tlm__wi_table_take(&u->others, o->addr);
		if (a && a != UINT64_MAX)
			tlm__wi_sim_give(&u->sim, a - 1, o->size);
		break;
	case WI_EMPTY:
		/* ambiguous: with garbage collection on, the malloc freed them itself */
		block = false;
		if (o->size == 2 || !u->rec_gc)
			tlm_wi_model_empty_cache(u->m);
		break;
	}
	if (mr == -2 || u->sim.nomem)
		return -1;
	struct tlm_wi_stats st;
	tlm_wi_model_stats(u->m, &st);
	if (st.peak_reserved > u->last_peak) {
		u->last_peak = st.peak_reserved;
		u->r.peak_time_ns = o->t;
	}
	if (block) {
		if (check && (o->type != WI_ALLOC || mr == 0) && had) {
			check->block_events++;
			if (st.allocated != o->allocated || st.reserved != o->reserved)
				mismatch(check, u->sim.at * 2 + 1, "block op %llu: the allocator reported %llu B allocated, %llu B reserved; the model %llu B, %llu B",
					 (ull)u->sim.at + 1, (ull)o->allocated, (ull)o->reserved, (ull)st.allocated,
					 (ull)st.reserved);
		}
		u->sim.at++;
	}
	return 0;
}

static int run_init(struct run1 *u, const struct tlm_wi_settings *s, const struct tlm_wi_settings *rec,
		    const struct wi_facts *f, uint64_t memory, uint64_t total, bool check)
{
	u->s = *s;
	u->check = check;
	u->rec_gc = rec->gc_threshold > 0 && rec->fraction > 0;
	/* recorded sizes are block sizes: a block taken whole from the cache can
	 * be larger than the rounded request and is not a rounding step itself,
	 * so they are rounded again only under another rounding rule */
	u->same_divs = !memcmp(s->div, rec->div, sizeof rec->div);
	tlm__wi_sim_init(&u->sim, memory, f->va_base);
	if (check) {
		u->sim.oracle_seg = &u->oseg;
		u->sim.oracle_res = &u->ores;
		u->sim.keep_log = true;
	}
	struct tlm_wi_drv drv;
	tlm__wi_sim_drv(&u->sim, &drv);
	u->m = tlm_wi_model_new(s, &drv, total);
	if (!u->m)
		return -1;
	tlm_wi_model_sizes_rounded(u->m, u->same_divs);
	return 0;
}

uint64_t tlm__wi_memory(const struct wi_facts *f, uint64_t option, const char **source)
{
	const char *src = option ? "option" : "unknown";
	uint64_t m = option;
	if (!m && f->failure && (!f->sampled || f->failure <= f->sampled))
		m = f->failure, src = "failure";
	else if (!m && f->sampled)
		m = f->sampled, src = "sample";
	else if (!m && f->total)
		m = f->total, src = "device";
	if (source)
		*source = src;
	return m;
}

struct wi_reps *tlm__wi_reps_new(const struct wi_reps_conf *c, const struct wi_facts *f, char *err, size_t errlen)
{
	struct wi_reps *s = calloc(1, sizeof *s);
	size_t nchecks = c->both_rules ? 2 : 1;
	if (s)
		s->run = calloc(nchecks + c->nalt, sizeof *s->run);
	if (!s || !s->run) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->nrun = nchecks + c->nalt;
	s->nchecks = nchecks;
	s->memory_opt = c->memory;
	s->memory = tlm__wi_memory(f, c->memory, NULL);
	/* the device's size (a fraction's base, an expandable range's length):
	 * recorded, else what the process could take, else from an expandable
	 * segment's range (1 1/8 of it, in pages), else large enough for anything */
	uint64_t total = f->total ? f->total : s->memory ? s->memory :
			 f->reserve_min ? f->reserve_min / 9 * 8 / WI_PAGE * WI_PAGE : NO_MEMORY_TOTAL;
	for (size_t i = 0; i < s->nrun; i++) {
		struct run1 *u = &s->run[i];
		struct tlm_wi_settings set = *c->rec;
		struct tlm_wi_result *r = &u->r;
		if (i == 1 && c->both_rules) {
			set.ties_by_segment = !set.ties_by_segment;
		} else if (i >= nchecks) {
			snprintf(r->label, sizeof r->label, "%s", c->alt[i - nchecks]);
			if (tlm_wi_parse(&set, c->alt[i - nchecks], r->note, sizeof r->note)) {
				snprintf(err, errlen, "--setting '%s': %s", c->alt[i - nchecks], r->note);
				tlm__wi_reps_free(s);
				return NULL;
			}
		}
		if (i < nchecks)
			snprintf(r->label, sizeof r->label, "recorded");
		tlm_wi_format(&set, r->spec, sizeof r->spec);
		if (set.async_backend) {
			snprintf(r->note, sizeof r->note, "backend:cudaMallocAsync is not modelled");
			continue;
		}
		if (run_init(u, &set, c->rec, f, s->memory, total, i < nchecks)) {
			snprintf(err, errlen, "out of memory");
			tlm__wi_reps_free(s);
			return NULL;
		}
		u->primary = i == 0;
	}
	return s;
}

int tlm__wi_reps_call(struct wi_reps *s, const struct wi_devev *e)
{
	for (size_t i = 0; i < s->nchecks; i++) {
		struct run1 *u = &s->run[i];
		if (!u->m)
			continue;
		if (tlm__wi_fifo_push(&u->calls, e) ||
		    (e->what == WI_SEG_ALLOC && tlm__wi_fifo_push(&u->oseg, e)) ||
		    (e->what == WI_RESERVE && tlm__wi_fifo_push(&u->ores, e)))
			return -1;
	}
	return 0;
}

int tlm__wi_reps_op(struct wi_reps *s, const struct wi_facts *f, const struct wi_op *o, char *err, size_t errlen)
{
	uint64_t mem = tlm__wi_memory(f, s->memory_opt, NULL);
	if (mem != s->memory) { /* learnt from a failure or a sample: the device has less */
		s->memory = mem;
		for (size_t i = 0; i < s->nrun; i++)
			tlm__wi_sim_memory(&s->run[i].sim, mem);
	}
	uint64_t req = o->size;
	for (size_t i = 0; i < s->nrun; i++) {
		struct run1 *u = &s->run[i];
		if (!u->m)
			continue;
		if (step(u, o, &req)) {
			snprintf(err, errlen, "out of memory replaying device %d", f->device);
			return -1;
		}
		/* an alternative that keeps making segments is given up, not the
		 * replay: the recorded settings and the others go on */
		if (!u->check && u->sim.nlive > WI_MAX_ALT_SEGMENTS) {
			tlm_wi_model_free(u->m);
			u->m = NULL;
			u->r.valid = false;
			snprintf(u->r.note, sizeof u->r.note, "not modelled to the end: more than %u driver "
				 "allocations live at once", WI_MAX_ALT_SEGMENTS);
			continue;
		}
		/* the model's blocks: live, cached and split off (a hostile trace can
		 * make a device's worth of cached segments) */
		if (u->m->active.n + u->m->small.blocks.n + u->m->large.blocks.n > 4 * (size_t)WI_MAX_LIVE) {
			snprintf(err, errlen, "the replay under '%s' holds more than %u blocks on device %d: stopped "
				 "(tlm whatif keeps the live state in memory)", u->r.spec[0] ? u->r.spec : "the defaults",
				 4 * WI_MAX_LIVE, f->device);
			return -1;
		}
		if (u->check)
			compare_calls(u, false);
	}
	return 0;
}

static void run_finish(struct run1 *u, const struct wi_facts *f)
{
	struct tlm_wi_result *r = &u->r;
	struct tlm_wi_stats st;
	tlm_wi_model_stats(u->m, &st);
	r->peak_reserved = st.peak_reserved;
	r->peak_allocated = st.peak_allocated;
	r->allocated_at_peak = st.allocated_at_peak;
	r->largest_free_at_peak = st.largest_free_at_peak;
	r->frag_at_peak = st.peak_reserved ? 1.0 - (double)st.allocated_at_peak / (double)st.peak_reserved : 0;
	r->driver_allocs = st.num_device_alloc;
	r->driver_frees = st.num_device_free;
	r->retries = st.num_alloc_retries;
	if (u->foreign_failed)
		snprintf(r->note, sizeof r->note, "%llu allocations by other code found no room", (ull)u->foreign_failed);
	r->valid = true;
	if (!u->check)
		return;
	compare_calls(u, true);
	u->chk.done = true;
	if (f->totals && (st.peak_reserved != f->peak_reserved || st.peak_allocated != f->peak_allocated))
		mismatch(&u->chk, UINT64_MAX, "peaks: the allocator reported %llu B reserved, %llu B allocated; the model %llu B, %llu B",
			 (ull)f->peak_reserved, (ull)f->peak_allocated, (ull)st.peak_reserved, (ull)st.peak_allocated);
}

int tlm__wi_reps_finish(struct wi_reps *s, const struct wi_facts *f, struct tlm_wi_result *res,
		       struct tlm_wi_check *check, struct tlm_wi_check *other_check)
{
	size_t k = 0;
	for (size_t i = 0; i < s->nrun; i++) {
		struct run1 *u = &s->run[i];
		if (u->m)
			run_finish(u, f);
		if (i == 0)
			*check = u->chk;
		else if (i < s->nchecks)
			*other_check = u->chk;
		if (i == 0 || i >= s->nchecks)
			res[k++] = u->r;
	}
	return 0;
}

void tlm__wi_reps_free(struct wi_reps *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nrun; i++) {
		struct run1 *u = &s->run[i];
		tlm_wi_model_free(u->m);
		tlm__wi_sim_fini(&u->sim);
		tlm__wi_table_free(&u->blocks);
		tlm__wi_table_free(&u->others);
		tlm__wi_fifo_free(&u->calls);
		tlm__wi_fifo_free(&u->oseg);
		tlm__wi_fifo_free(&u->ores);
		tlm__wi_sizes_free(&u->seen);
	}
	free(s->run);
	free(s);
}
