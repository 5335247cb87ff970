/* SPDX-License-Identifier: MIT */
/*
 * replay.c - runs each device's requests through the model under the
 * recorded settings and each alternative (whatif.h), checks the recorded
 * replay against the trace, and picks the recommendation.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/replay_int.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define NO_MEMORY_TOTAL (1ull << 40) /* the device size a replay assumes when the trace gives none */

struct check_ctx {
	struct tlm_wi_check *c;
	const struct wi_dev *d;
};

typedef unsigned long long ull;

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

/* The model's driver calls against the recorded ones, one by one. */
static void compare_log(struct tlm_wi_check *c, const struct wi_dev *d, const struct wi_sim *s)
{
	size_t n = d->nev > s->nlog ? d->nev : s->nlog;
	for (size_t i = 0; i < n; i++) {
		const struct wi_devev *a = i < d->nev ? &d->ev[i] : NULL, *b = i < s->nlog ? &s->log[i] : NULL;
		c->segment_events++;
		if (!a || !b) {
			mismatch(c, (a ? a->at : b->at) * 2, "driver call %zu: the %s has a %s of %llu B before block op %llu, the %s none", i + 1,
				 a ? "trace" : "model", what_name(a ? a->what : b->what), (ull)(a ? a->size : b->size),
				 (ull)(a ? a->at : b->at) + 1, a ? "model" : "trace");
			continue;
		}
		bool addr_matters = a->what != WI_SEG_FAIL && a->what != WI_CREATE_FAIL && a->what != WI_RESERVE &&
				    a->what != WI_RESERVE_FREE;
		bool size_matters = a->what != WI_RESERVE && a->what != WI_RESERVE_FREE;
		if (a->what != b->what || a->at != b->at || (size_matters && a->size != b->size) ||
		    (addr_matters && a->addr != b->addr)) {
			mismatch(c, (a->at < b->at ? a->at : b->at) * 2, "driver call %zu: the trace has a %s of %llu B at 0x%llx before block op %llu, the model a %s of %llu B at 0x%llx before block op %llu",
				 i + 1, what_name(a->what), (ull)a->size, (ull)a->addr, (ull)a->at + 1, what_name(b->what),
				 (ull)b->size, (ull)b->addr, (ull)b->at + 1);
		}
	}
}

static void note_oom(struct tlm_wi_result *r, const struct wi_op *o, uint64_t request, const struct tlm_wi_model *m,
		     const struct wi_sim *s, bool recorded)
{
	if (r->nooms++ >= TLM_WI_MAX_OOMS)
		return;
	struct tlm_wi_stats st;
	tlm_wi_model_stats(m, &st);
	uint64_t fr, big;
	tlm_wi_model_free_space(m, &fr, &big);
	struct tlm_wi_oom *x = &r->oom[r->nooms - 1];
	uint64_t df = tlm__wi_sim_free_bytes(s);
	*x = (struct tlm_wi_oom){o->t, request, st.allocated, st.reserved, fr, df == UINT64_MAX ? 0 : df,
				 df != UINT64_MAX && fr + df >= request, recorded};
}

/* Whether the recorded run made a new segment for block op `at` at addr. */
static bool recorded_segment(const struct wi_dev *d, size_t *cur, uint64_t at, uint64_t addr)
{
	while (*cur < d->nev && d->ev[*cur].at < at)
		(*cur)++;
	for (size_t i = *cur; i < d->nev && d->ev[i].at == at; i++)
		if (d->ev[i].what == WI_SEG_ALLOC && d->ev[i].addr == addr)
			return true;
	return false;
}

/* The request to ask the recorded settings' model for a recorded block: its
 * size, except where a max_split_size_mb of the run lies within 1 MiB below it,
 * the block is a new segment and a request of its size would have been given
 * a cached oversize block: the request was below the limit (no oversize
 * cached block serves such a request) and took the new segment whole. */
static uint64_t recorded_request(const struct tlm_wi_model *m, const struct tlm_wi_settings *rec,
				 const struct wi_dev *d, size_t *cur, uint64_t at, const struct wi_op *o)
{
	uint64_t ms = rec->max_split;
	if (ms == UINT64_MAX || rec->expandable || o->size < ms || o->size - TLM_WI_SMALL_SIZE >= ms)
		return o->size;
	if (!tlm_wi_model_peek(m, o->size, 0) || !recorded_segment(d, cur, at, o->addr))
		return o->size;
	return o->size - TLM_WI_SMALL_SIZE;
}

/* One replay. check: compare with the trace (the recorded settings), and
 * guess each block's request into req[] for the other replays; else req[]
 * (when not NULL) holds the requests. */
static int replay(const struct wi_dev *d, const struct tlm_wi_settings *set, const struct tlm_wi_settings *rec,
		  uint64_t memory, struct tlm_wi_result *r, struct tlm_wi_check *check, uint64_t *req)
{
	struct wi_sizes seen = {0};
	size_t evc = 0; /* recorded_segment()'s place in d->ev */
	struct wi_sim sim;
	tlm__wi_sim_init(&sim, memory, d->va_base);
	if (check) {
		sim.oracle = d->ev;
		sim.noracle = d->nev;
		sim.keep_log = true;
	}
	struct tlm_wi_drv drv;
	tlm__wi_sim_drv(&sim, &drv);
	/* the device's size (a fraction's base, an expandable range's length):
	 * recorded, else what the process could take, else from an expandable
	 * segment's range (1 1/8 of it, in pages), else large enough for anything */
	uint64_t total = d->total ? d->total : memory ? memory :
			 d->reserve_min ? d->reserve_min / 9 * 8 / WI_PAGE * WI_PAGE : NO_MEMORY_TOTAL;
	struct tlm_wi_model *m = tlm_wi_model_new(set, &drv, total);
	uint64_t *maddr = calloc(d->nop + 1, sizeof *maddr);
	int rc = -1;
	if (!m || !maddr)
		goto out;
	/* recorded sizes are block sizes: a block taken whole from the cache can
	 * be larger than the rounded request and is not a rounding step itself,
	 * so they are rounded again only under another rounding rule */
	bool rec_gc = rec->gc_threshold > 0 && rec->fraction > 0;
	tlm_wi_model_sizes_rounded(m, !memcmp(set->div, rec->div, sizeof rec->div));
	uint64_t last_peak = 0, foreign_failed = 0;
	for (size_t i = 0; i < d->nop; i++) {
		const struct wi_op *o = &d->op[i];
		uint64_t addr = 0, bs = 0;
		int mr = 0;
		bool block = true;
		switch (o->type) {
		case WI_ALLOC:
			if (check) {
				uint64_t q = recorded_request(m, rec, d, &evc, sim.at, o);
				mr = tlm_wi_model_malloc(m, q, 0, &addr, &bs);
				uint64_t low = mr ? o->size : tlm_wi_model_last_low(m);
				if (low >= o->size)
					tlm__wi_sizes_seen(&seen, o->size, o->stack);
				if (req)
					req[i] = low >= o->size ? o->size : tlm__wi_sizes_guess(&seen, low, q, o->stack);
			} else {
				mr = tlm_wi_model_malloc(m, req ? req[i] : o->size, 0, &addr, &bs);
			}
			if (mr == 0) {
				maddr[i] = addr;
				if (check && (addr != o->addr || bs != o->size))
					mismatch(check, sim.at * 2 + 1, "block op %llu: the trace has %llu B at 0x%llx, the model %llu B at 0x%llx",
						 (ull)sim.at + 1, (ull)o->size, (ull)o->addr, (ull)bs, (ull)addr);
			} else if (mr == -1) {
				note_oom(r, o, bs, m, &sim, false);
				if (check)
					mismatch(check, sim.at * 2 + 1, "block op %llu: the trace allocated %llu B, the model ran out of memory",
						 (ull)sim.at + 1, (ull)o->size);
			}
			break;
		case WI_FREE:
			if (maddr[o->partner])
				tlm_wi_model_release(m, maddr[o->partner]);
			break;
		case WI_OOM:
			if (check)
				tlm__wi_sizes_seen(&seen, o->size, 0); /* a request, rounded */
			mr = tlm_wi_model_malloc(m, o->size, 0, &addr, &bs);
			if (mr == 0) {
				/* what the program would have done with it is not in the
				 * trace: it is given back at once (holding it to the end
				 * would make every later request of a program that caught
				 * its OOMs pay for blocks it never had) */
				r->recorded_ooms_avoided++;
				tlm_wi_model_release(m, addr);
				if (check)
					mismatch(check, sim.at * 2 + 1, "block op %llu: the trace ran out of memory for %llu B, the model did not",
						 (ull)sim.at + 1, (ull)o->size);
			} else if (mr == -1) {
				note_oom(r, o, bs, m, &sim, true);
			}
			break;
		case WI_FALLOC:
			block = false;
			if (tlm__wi_sim_take(&sim, o->size, &maddr[i]))
				foreign_failed++, maddr[i] = UINT64_MAX;
			break;
		case WI_EMPTY:
			/* ambiguous: with garbage collection on, the malloc freed them itself */
			block = false;
			if (o->size == 2 || !rec_gc)
				tlm_wi_model_empty_cache(m);
			break;
		case WI_FFREE:
			block = false;
			if (maddr[o->partner] != UINT64_MAX)
				tlm__wi_sim_give(&sim, maddr[o->partner], o->size);
			break;
		}
		if (mr == -2 || sim.nomem)
			goto out;
		struct tlm_wi_stats st;
		tlm_wi_model_stats(m, &st);
		if (st.peak_reserved > last_peak) {
			last_peak = st.peak_reserved;
			r->peak_time_ns = o->t;
		}
		if (block) {
			if (check && d->totals && (o->type != WI_ALLOC || mr == 0) && (o->type != WI_FREE || maddr[o->partner])) {
				check->block_events++;
				if (st.allocated != o->allocated || st.reserved != o->reserved)
					mismatch(check, sim.at * 2 + 1, "block op %llu: the allocator reported %llu B allocated, %llu B reserved; the model %llu B, %llu B",
						 (ull)sim.at + 1, (ull)o->allocated, (ull)o->reserved, (ull)st.allocated,
						 (ull)st.reserved);
			}
			sim.at++;
		}
	}
	struct tlm_wi_stats st;
	tlm_wi_model_stats(m, &st);
	r->peak_reserved = st.peak_reserved;
	r->peak_allocated = st.peak_allocated;
	r->allocated_at_peak = st.allocated_at_peak;
	r->largest_free_at_peak = st.largest_free_at_peak;
	r->frag_at_peak = st.peak_reserved ? 1.0 - (double)st.allocated_at_peak / (double)st.peak_reserved : 0;
	r->driver_allocs = st.num_device_alloc;
	r->driver_frees = st.num_device_free;
	r->retries = st.num_alloc_retries;
	if (foreign_failed)
		snprintf(r->note, sizeof r->note, "%llu allocations by other code found no room",
			 (unsigned long long)foreign_failed);
	r->valid = true;
	if (check) {
		compare_log(check, d, &sim);
		check->done = true;
		if (d->totals) {
			if (st.peak_reserved != d->peak_reserved || st.peak_allocated != d->peak_allocated)
				mismatch(check, UINT64_MAX, "peaks: the allocator reported %llu B reserved, %llu B allocated; the model %llu B, %llu B",
					 (ull)d->peak_reserved, (ull)d->peak_allocated, (ull)st.peak_reserved,
					 (ull)st.peak_allocated);
		}
	}
	rc = 0;
out:
	free(maddr);
	tlm__wi_sizes_free(&seen);
	tlm_wi_model_free(m);
	tlm__wi_sim_fini(&sim);
	return rc;
}

/* ---- the grid and the recommendation ----------------------------------------- */

void tlm_wi_human_pair(char *a, char *b, size_t n, uint64_t x, uint64_t y)
{
	uint64_t big = x > y ? x : y;
	double unit = big >= GiB ? (double)GiB : big >= MiB ? (double)MiB : 1.0;
	const char *u = big >= GiB ? "GiB" : big >= MiB ? "MiB" : "B";
	for (int d = unit > 1 ? 1 : 0; d <= 9; d++) {
		snprintf(a, n, "%.*f %s", d, (double)x / unit, u);
		snprintf(b, n, "%.*f %s", d, (double)y / unit, u);
		if (x == y || strcmp(a, b))
			return;
	}
	snprintf(a, n, "%llu B", (unsigned long long)x);
	snprintf(b, n, "%llu B", (unsigned long long)y);
}

static void human(char *b, size_t n, uint64_t v)
{
	if (v >= GiB)
		snprintf(b, n, "%.1f GiB", (double)v / (double)GiB);
	else if (v >= MiB)
		snprintf(b, n, "%.1f MiB", (double)v / (double)MiB);
	else
		snprintf(b, n, "%llu B", (unsigned long long)v);
}

static void secs(char *b, size_t n, uint64_t ns)
{
	double s = (double)ns / 1e9;
	snprintf(b, n, s >= 10 ? "%.1f s" : "%.3f s", s);
}

/* The built-in alternatives, over the recorded settings. */
static size_t grid(const struct tlm_wi_settings *rec, const struct wi_dev *d, bool memory_known, char (*out)[96],
		   size_t max)
{
	size_t n = 0;
	snprintf(out[n++], 96, rec->expandable ? "expandable_segments:False" : "expandable_segments:True");
	uint64_t biggest = 0;
	for (size_t i = 0; i < d->nop; i++)
		if ((d->op[i].type == WI_ALLOC || d->op[i].type == WI_OOM) && d->op[i].size > biggest)
			biggest = d->op[i].size;
	/* split limits that matter: below the largest request, at least 20 MiB */
	uint64_t cand[] = {20, 32, 64, 128, 256, 512, 1024, 4096};
	size_t took = 0;
	for (size_t i = sizeof cand / sizeof cand[0]; i-- > 0 && took < 3 && n < max;)
		if (cand[i] * MiB < biggest && cand[i] * MiB != rec->max_split) {
			snprintf(out[n++], 96, "max_split_size_mb:%llu", (unsigned long long)cand[i]);
			took++;
		}
	if (n < max && memory_known && rec->gc_threshold == 0)
		snprintf(out[n++], 96, "garbage_collection_threshold:0.8,per_process_memory_fraction:%g",
			 rec->fraction > 0 && rec->fraction < 1 ? rec->fraction : 0.99);
	if (n < max && !rec->div[0])
		snprintf(out[n++], 96, "roundup_power2_divisions:4");
	return n;
}

static bool better(const struct tlm_wi_result *a, const struct tlm_wi_result *b)
{
	if (a->nooms != b->nooms)
		return a->nooms < b->nooms;
	if (a->peak_reserved != b->peak_reserved)
		return a->peak_reserved < b->peak_reserved;
	return a->driver_allocs + a->driver_frees < b->driver_allocs + b->driver_frees;
}

static void recommend(struct tlm_wi_device *v)
{
	const struct tlm_wi_result *r0 = &v->res[0];
	int best = -1;
	for (size_t i = 1; i < v->nres; i++)
		if (v->res[i].valid && (best < 0 || better(&v->res[i], &v->res[best])))
			best = (int)i;
	char a[32], b[32], t[32];
	human(a, sizeof a, r0->peak_reserved);
	if (r0->nooms) {
		secs(t, sizeof t, r0->oom[0].time_ns);
		if (best >= 0 && v->res[best].nooms == 0) {
			tlm_wi_human_pair(a, b, sizeof a, r0->peak_reserved, v->res[best].peak_reserved);
			v->best = best;
			snprintf(v->recommendation, sizeof v->recommendation, "%s avoids the OOM at %s: peak reserved %s -> %s",
				 v->res[best].label, t, a, b);
		} else if (best >= 0 && v->res[best].nooms < r0->nooms) {
			v->best = best;
			snprintf(v->recommendation, sizeof v->recommendation,
				 "%s avoids %llu of the %llu OOMs (the first at %s); no setting of the grid avoids them all",
				 v->res[best].label, (unsigned long long)(r0->nooms - v->res[best].nooms),
				 (unsigned long long)r0->nooms, t);
		} else {
			snprintf(v->recommendation, sizeof v->recommendation,
				 "no setting of the grid avoids the OOM at %s (%s): lower the peak instead", t,
				 r0->oom[0].fragmentation ? "fragmentation" : "exhaustion");
		}
		return;
	}
	if (best >= 0 && v->res[best].nooms == 0 && v->res[best].peak_reserved < r0->peak_reserved) {
		tlm_wi_human_pair(a, b, sizeof a, r0->peak_reserved, v->res[best].peak_reserved);
		v->best = best;
		snprintf(v->recommendation, sizeof v->recommendation, "no OOM; %s lowers the peak reserved %s -> %s",
			 v->res[best].label, a, b);
		return;
	}
	snprintf(v->recommendation, sizeof v->recommendation,
		 "no OOM; no setting of the grid lowers the peak reserved (%s)", a);
}

static int run_device(const struct wi_dev *d, const struct tlm_wi_settings *rec_in,
		      const struct tlm_wi_options *o, struct tlm_wi_device *v, char *err, size_t errlen)
{
	char alt[16][96];
	size_t nalt;
	memset(v, 0, sizeof *v);
	v->device = d->device;
	/* what the process can take: given, else seen at a failed allocation,
	 * else the device's size (the CUDA context's share unknown) */
	/* the tightest of a failed allocation's figures and the samples */
	bool failure = d->memory && (!d->sampled || d->memory <= d->sampled);
	v->memory = o->memory ? o->memory : failure ? d->memory : d->sampled ? d->sampled : d->total;
	v->memory_source = o->memory ? "option" : failure ? "failure" : d->sampled ? "sample" : d->total ? "device" : "unknown";
	v->memory_known = v->memory != 0;
	v->requests = d->nalloc;
	v->frees = d->nfree;
	v->recorded_ooms = d->nooms;
	v->recorded_peak_reserved = d->peak_reserved;
	v->recorded_peak_allocated = d->peak_allocated;
	v->best = -1;
	if (o->nsettings) {
		nalt = o->nsettings < 16 ? o->nsettings : 16;
		for (size_t i = 0; i < nalt; i++)
			snprintf(alt[i], sizeof alt[i], "%s", o->settings[i]);
	} else {
		nalt = grid(rec_in, d, v->memory_known, alt, 16);
	}
	v->res = calloc(nalt + 1, sizeof *v->res);
	if (!v->res) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	v->nres = nalt + 1;
	/* which tie rule this PyTorch follows: the one that reproduces the run */
	struct tlm_wi_settings recs = *rec_in;
	const struct tlm_wi_settings *rec = &recs;
	/* the requests guessed by the replay whose check is kept */
	uint64_t *req = calloc(d->nop + 1, sizeof *req), *req_k = calloc(d->nop + 1, sizeof *req_k);
	int rc = -1;
	if (!req || !req_k) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!recs.async_backend) {
		/* the newer rule first: when the run had no ties, both reproduce it */
		for (int k = 0; k < 2; k++) {
			struct tlm_wi_result tr;
			struct tlm_wi_check tc;
			memset(&tr, 0, sizeof tr);
			memset(&tc, 0, sizeof tc);
			recs.ties_by_segment = !k;
			if (replay(d, &recs, &recs, v->memory, &tr, &tc, req_k)) {
				snprintf(err, errlen, "out of memory replaying device %d", d->device);
				goto out;
			}
			if (!k || tc.mismatches < v->check.mismatches) {
				v->check = tc;
				v->ties_by_segment = !k;
				uint64_t *t = req;
				req = req_k;
				req_k = t;
			}
			if (!tc.mismatches)
				break;
		}
		recs.ties_by_segment = v->ties_by_segment;
	}
	for (size_t i = 0; i <= nalt; i++) {
		struct tlm_wi_result *r = &v->res[i];
		struct tlm_wi_settings s = *rec;
		if (i) {
			snprintf(r->label, sizeof r->label, "%s", alt[i - 1]);
			if (tlm_wi_parse(&s, alt[i - 1], r->note, sizeof r->note)) {
				snprintf(err, errlen, "--setting '%s': %s", alt[i - 1], r->note);
				goto out;
			}
		} else {
			snprintf(r->label, sizeof r->label, "recorded");
		}
		tlm_wi_format(&s, r->spec, sizeof r->spec);
		if (s.async_backend) {
			snprintf(r->note, sizeof r->note, "backend:cudaMallocAsync is not modelled");
			continue;
		}
		/* the recorded settings replay the block sizes: they reproduce the run */
		if (replay(d, &s, rec, v->memory, r, NULL, i && !recs.async_backend ? req : NULL)) {
			snprintf(err, errlen, "out of memory replaying device %d", d->device);
			goto out;
		}
	}
	recommend(v);
	rc = 0;
out:
	free(req);
	free(req_k);
	return rc;
}

int tlm_wi_run(const char *path, const struct tlm_wi_options *o, struct tlm_wi_report *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	struct wi_trace t;
	if (tlm__wi_trace_read(path, &t, err, errlen)) {
		char e2[400];
		snprintf(e2, sizeof e2, "%s", err);
		snprintf(err, errlen, "%s: %s", path, e2);
		return -1;
	}
	int rc = -1;
	struct tlm_wi_settings rec;
	tlm_wi_defaults(&rec);
	const char *spec = o->recorded ? o->recorded : t.has_conf ? t.conf : NULL;
	r->recorded_known = spec != NULL;
	if (spec && tlm_wi_parse(&rec, spec, err, errlen)) {
		char e2[200];
		snprintf(e2, sizeof e2, "%s", err);
		snprintf(err, errlen, "the recorded allocator settings '%s': %s", spec, e2);
		goto out;
	}
	size_t with_blocks = 0;
	for (size_t i = 0; i < t.ndev; i++)
		with_blocks += t.dev[i].nalloc + t.dev[i].nooms > 0 && (o->device < 0 || t.dev[i].device == o->device);
	if (rec.async_backend) {
		snprintf(err, errlen, "%s was recorded with PyTorch's backend:cudaMallocAsync, which tlm whatif does not model",
			 path);
		goto out;
	}
	if (!with_blocks && t.async_allocs && o->device < 0) {
		snprintf(err, errlen, "%s has no PyTorch allocator blocks, only cudaMallocAsync calls (PyTorch's "
			 "backend:cudaMallocAsync?), which tlm whatif does not model", path);
		goto out;
	}
	if (!with_blocks) {
		if (o->device >= 0)
			snprintf(err, errlen, "%s has no PyTorch allocator blocks on device %d", path, o->device);
		else
			snprintf(err, errlen, "%s has no PyTorch allocator blocks (recorded without PyTorch's caching allocator?)",
				 path);
		goto out;
	}
	r->dev = calloc(with_blocks, sizeof *r->dev);
	if (!r->dev) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < t.ndev; i++) {
		const struct wi_dev *d = &t.dev[i];
		if (!(d->nalloc + d->nooms) || (o->device >= 0 && d->device != o->device))
			continue;
		struct tlm_wi_settings s = rec;
		if (!spec && d->vmm)
			s.expandable = true; /* no setting recorded, but the trace shows expandable segments */
		if (run_device(d, &s, o, &r->dev[r->ndev], err, errlen)) {
			r->ndev++;
			goto out;
		}
		r->ndev++;
	}
	tlm_wi_format(&rec, r->recorded_spec, sizeof r->recorded_spec);
	if (!spec)
		snprintf(r->recorded_spec, sizeof r->recorded_spec, "%s",
			 t.ndev && r->ndev && r->dev[0].res && strstr(r->dev[0].res[0].spec, "expandable") ?
			 "expandable_segments:True" : "");
	rc = 0;
out:
	tlm__wi_trace_free(&t);
	if (rc)
		tlm_wi_report_free(r);
	return rc;
}

void tlm_wi_report_free(struct tlm_wi_report *r)
{
	for (size_t i = 0; i < r->ndev; i++)
		free(r->dev[i].res);
	free(r->dev);
	memset(r, 0, sizeof *r);
}
