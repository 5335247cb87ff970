/* SPDX-License-Identifier: MIT */
/*
 * run.c - a trace through the replays (whatif.h): the stream of records
 * (struct tlm_wi_stream: trace_in.c's feed into one replay set per device
 * with blocks, replay.c), the grid of alternatives, the choice between the
 * tie rules, the recommendation; tlm_wi_run reads a trace file through it,
 * and reads it again when the run was made by a PyTorch with the older tie
 * rule (its alternatives cannot be told before the check says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/replay_int.h"
#include "common/grow.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define NALT 16

/* the split limits of the grid: the three largest below the largest request
 * (a limit above every request changes nothing); when the largest request is
 * not known before the replay, every one runs and those three are reported */
static const unsigned split_mb[] = {20, 32, 64, 128, 256, 512, 1024, 4096};
#define NSPLIT (sizeof split_mb / sizeof split_mb[0])

struct sdev {                      /* one device of the stream */
	struct wi_reps *set;            /* NULL: no blocks yet, or not replayed */
	bool seen;                     /* its first block op came */
	struct tlm_wi_settings rec;
	char alt[NALT][96];
	uint64_t split[NALT];          /* the grid's split limit of alt[i], 0 not one */
	size_t nalt;
	struct wi_op *early;           /* others' memory live before its first block op */
	size_t nearly, capearly;
	struct wi_table early_at;      /* its key -> index + 1, while keys are unique (a report's
	                                * pass sees every free of a long run without blocks) */
	bool early_dup;                /* a key came twice: the first of them is found by a scan */
	int device;
};

struct tlm_wi_stream {
	struct tlm_wi_options o;
	const uint64_t *biggest;       /* per device ordinal < WI_MAX_BIGGEST: its largest request, from a
	                                * pass before; NULL: not known (every split limit of the grid runs) */
	struct wi_feed *feed;
	struct sdev dev[WI_MAX_DEVICES];
	size_t ndev;
	struct tlm_wi_settings rec;    /* parsed once, at the first block op */
	bool rec_parsed, rec_known, ties_older;
	char err[400];
};

static struct sdev *sdev_of(struct tlm_wi_stream *s, int device)
{
	for (size_t i = 0; i < s->ndev; i++)
		if (s->dev[i].device == device)
			return &s->dev[i];
	if (s->ndev == WI_MAX_DEVICES)
		return NULL;
	struct sdev *d = &s->dev[s->ndev++];
	memset(d, 0, sizeof *d);
	d->device = device;
	return d;
}

#define WI_MAX_BIGGEST 256

/* The built-in alternatives, over the recorded settings. */
static size_t grid(struct sdev *d, bool memory_known, uint64_t biggest)
{
	const struct tlm_wi_settings *rec = &d->rec;
	size_t n = 0, took = 0;
	snprintf(d->alt[n++], 96, rec->expandable ? "expandable_segments:False" : "expandable_segments:True");
	for (size_t i = NSPLIT; i-- > 0;)
		if (split_mb[i] * MiB != rec->max_split && (!biggest || (split_mb[i] * MiB < biggest && took++ < 3))) {
			d->split[n] = split_mb[i] * MiB;
			snprintf(d->alt[n++], 96, "max_split_size_mb:%u", split_mb[i]);
		}
	if (memory_known && rec->gc_threshold == 0)
		snprintf(d->alt[n++], 96, "garbage_collection_threshold:0.8,per_process_memory_fraction:%g",
			 rec->fraction > 0 && rec->fraction < 1 ? rec->fraction : 0.99);
	if (!rec->div[0])
		snprintf(d->alt[n++], 96, "roundup_power2_divisions:4");
	return n;
}

static int first_op(void *ctx, const struct wi_facts *f)
{
	struct tlm_wi_stream *s = ctx;
	struct sdev *d = sdev_of(s, f->device);
	if (!d) {
		snprintf(s->err, sizeof s->err, "more than %d devices", WI_MAX_DEVICES);
		return -1;
	}
	d->seen = true;
	if (!s->rec_parsed) {
		const char *spec = s->o.recorded ? s->o.recorded : tlm__wi_feed_conf(s->feed);
		tlm_wi_defaults(&s->rec);
		s->rec_parsed = true;
		s->rec_known = spec != NULL;
		char e[200];
		if (spec && tlm_wi_parse(&s->rec, spec, e, sizeof e)) {
			snprintf(s->err, sizeof s->err, "the recorded allocator settings '%s': %s", spec, e);
			return -1;
		}
	}
	if (s->rec.async_backend || (s->o.device >= 0 && f->device != s->o.device))
		return 0;
	d->rec = s->rec;
	if (!s->rec_known && f->vmm)
		d->rec.expandable = true; /* no setting recorded, but the trace shows expandable segments */
	/* the newer tie rule first: when the run had no ties, both reproduce it */
	d->rec.ties_by_segment = !s->ties_older;
	if (s->o.nsettings) {
		d->nalt = s->o.nsettings < NALT ? s->o.nsettings : NALT;
		for (size_t i = 0; i < d->nalt; i++)
			snprintf(d->alt[i], sizeof d->alt[i], "%s", s->o.settings[i]);
	} else {
		uint64_t big = s->biggest && f->device >= 0 && f->device < WI_MAX_BIGGEST ? s->biggest[f->device] : 0;
		d->nalt = grid(d, tlm__wi_memory(f, s->o.memory, NULL) != 0, s->biggest ? big + !big : 0);
	}
	struct wi_reps_conf c = {&d->rec, !s->ties_older, d->alt, d->nalt, s->o.memory};
	d->set = tlm__wi_reps_new(&c, f, s->err, sizeof s->err);
	if (!d->set)
		return -1;
	for (size_t i = 0; i < d->nearly; i++)
		if (tlm__wi_reps_op(d->set, f, &d->early[i], s->err, sizeof s->err))
			return -1;
	free(d->early);
	d->early = NULL;
	d->nearly = d->capearly = 0;
	tlm__wi_table_free(&d->early_at);
	return 0;
}

/* Before a device's first block op: others' memory that is still held. */
static int early(struct tlm_wi_stream *s, struct sdev *d, const struct wi_op *o)
{
	if (o->type == WI_FFREE) {
		size_t i = 0;
		if (!d->early_dup) {
			uint64_t at = tlm__wi_table_take(&d->early_at, o->addr);
			if (!at)
				return 0;
			i = at - 1;
		} else {
			while (i < d->nearly && d->early[i].addr != o->addr)
				i++;
			if (i == d->nearly)
				return 0;
		}
		d->early[i] = d->early[--d->nearly];
		if (!d->early_dup && i < d->nearly && tlm__wi_table_put(&d->early_at, d->early[i].addr, i + 1)) {
			snprintf(s->err, sizeof s->err, "out of memory");
			return -1;
		}
		return 0;
	}
	if (o->type != WI_FALLOC)
		return 0;
	if (d->nearly == WI_MAX_LIVE) {
		snprintf(s->err, sizeof s->err, "more than %u allocations of other code live at once", WI_MAX_LIVE);
		return -1;
	}
	if (d->nearly == d->capearly && tlm__grow(&d->early, &d->capearly, d->nearly + 1, sizeof *d->early, 16)) {
		snprintf(s->err, sizeof s->err, "out of memory");
		return -1;
	}

	if (!d->early_dup && tlm__wi_table_get(&d->early_at, o->addr))
		d->early_dup = true;
	else if (!d->early_dup && tlm__wi_table_put(&d->early_at, o->addr, d->nearly + 1)) {
		snprintf(s->err, sizeof s->err, "out of memory");
		return -1;
	}
	d->early[d->nearly++] = *o;
	return 0;
}

static int sink_op(void *ctx, const struct wi_facts *f, const struct wi_op *o)
{
	struct tlm_wi_stream *s = ctx;
	struct sdev *d = sdev_of(s, f->device);
	if (!d) {
		snprintf(s->err, sizeof s->err, "more than %d devices", WI_MAX_DEVICES);
		return -1;
	}
	if (d->set)
		return tlm__wi_reps_op(d->set, f, o, s->err, sizeof s->err);
	return d->seen ? 0 : early(s, d, o);
}

static int sink_call(void *ctx, const struct wi_facts *f, const struct wi_devev *e)
{
	struct tlm_wi_stream *s = ctx;
	struct sdev *d = sdev_of(s, f->device);
	if (d && d->set && tlm__wi_reps_call(d->set, e)) {
		snprintf(s->err, sizeof s->err, "out of memory");
		return -1;
	}
	return 0;
}

struct tlm_wi_stream *tlm_wi_stream_new(const struct tlm_wi_options *o, uint64_t start_monotonic_ns)
{
	struct tlm_wi_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->o = *o;
	struct wi_sink sink = {s, first_op, sink_op, sink_call};
	s->feed = tlm__wi_feed_new(&sink, start_monotonic_ns);
	if (!s->feed) {
		free(s);
		return NULL;
	}
	return s;
}

int tlm_wi_stream_record(struct tlm_wi_stream *s, const struct tlm_record *rec, char *err, size_t errlen)
{
	if (!tlm__wi_feed_record(s->feed, rec, err, errlen))
		return 0;
	if (s->err[0])
		snprintf(err, errlen, "%s", s->err);
	return -1;
}

/* ---- the recommendation --------------------------------------------------- */

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

/* One device's figures out of its set; the grid's split limits reduced to
 * the three largest below the largest request. */
static int device_report(struct tlm_wi_stream *s, struct sdev *d, const struct wi_facts *f, struct tlm_wi_device *v,
			 struct tlm_wi_check *other)
{
	memset(v, 0, sizeof *v);
	v->device = d->device;
	v->memory = tlm__wi_memory(f, s->o.memory, &v->memory_source);
	v->memory_known = v->memory != 0;
	v->requests = f->nalloc;
	v->frees = f->nfree;
	v->recorded_ooms = f->nooms;
	v->recorded_peak_reserved = f->peak_reserved;
	v->recorded_peak_allocated = f->peak_allocated;
	v->best = -1;
	v->ties_by_segment = d->rec.ties_by_segment;
	struct tlm_wi_result *all = calloc(d->nalt + 1, sizeof *all);
	v->res = calloc(d->nalt + 1, sizeof *v->res);
	if (!all || !v->res) {
		free(all);
		return -1;
	}
	memset(other, 0, sizeof *other);
	tlm__wi_reps_finish(d->set, f, all, &v->check, other);
	size_t took = 0;
	v->res[v->nres++] = all[0];
	for (size_t i = 0; i < d->nalt; i++) {
		if (d->split[i] && (d->split[i] >= f->biggest || took == 3))
			continue;
		took += d->split[i] != 0;
		v->res[v->nres++] = all[i + 1];
	}
	free(all);
	recommend(v);
	return 0;
}

int tlm_wi_stream_finish(struct tlm_wi_stream *s, const char *path, struct tlm_wi_report *r, char *err,
			 size_t errlen)
{
	memset(r, 0, sizeof *r);
	if (tlm__wi_feed_end(s->feed, err, errlen)) {
		if (s->err[0])
			snprintf(err, errlen, "%s", s->err);
		return -1;
	}
	if (!s->rec_parsed && s->o.recorded) { /* no block op: the option still has to parse */
		tlm_wi_defaults(&s->rec);
		char e[200];
		if (tlm_wi_parse(&s->rec, s->o.recorded, e, sizeof e)) {
			snprintf(err, errlen, "the recorded allocator settings '%s': %s", s->o.recorded, e);
			return -1;
		}
		s->rec_known = true;
	}
	if (!s->rec_parsed && !s->o.recorded && tlm__wi_feed_conf(s->feed)) {
		tlm_wi_defaults(&s->rec);
		char e[200];
		if (!tlm_wi_parse(&s->rec, tlm__wi_feed_conf(s->feed), e, sizeof e))
			s->rec_known = true;
	}
	size_t with_blocks = 0;
	for (size_t i = 0; i < s->ndev; i++)
		with_blocks += s->dev[i].set != NULL;
	if (s->rec.async_backend) {
		snprintf(err, errlen, "%s was recorded with PyTorch's backend:cudaMallocAsync, which tlm whatif does not model",
			 path);
		return -1;
	}
	if (!with_blocks && tlm__wi_feed_async(s->feed) && s->o.device < 0) {
		snprintf(err, errlen, "%s has no PyTorch allocator blocks, only cudaMallocAsync calls (PyTorch's "
			 "backend:cudaMallocAsync?), which tlm whatif does not model", path);
		return -1;
	}
	if (!with_blocks) {
		if (s->o.device >= 0)
			snprintf(err, errlen, "%s has no PyTorch allocator blocks on device %d", path, s->o.device);
		else
			snprintf(err, errlen, "%s has no PyTorch allocator blocks (recorded without PyTorch's caching allocator?)",
				 path);
		return -1;
	}
	r->dev = calloc(with_blocks, sizeof *r->dev);
	if (!r->dev) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->recorded_known = s->rec_known;
	for (size_t i = 0; i < tlm__wi_feed_ndev(s->feed); i++) {
		const struct wi_facts *f = tlm__wi_feed_facts(s->feed, i);
		struct sdev *d = NULL;
		for (size_t k = 0; k < s->ndev; k++)
			if (s->dev[k].device == f->device && s->dev[k].set)
				d = &s->dev[k];
		if (!d)
			continue;
		struct tlm_wi_check other;
		if (device_report(s, d, f, &r->dev[r->ndev++], &other)) {
			snprintf(err, errlen, "out of memory");
			tlm_wi_report_free(r);
			return -1;
		}
		/* the older rule reproduces the run better: its alternatives are
		 * another pass's (tlm_wi_run makes it) */
		struct tlm_wi_device *v = &r->dev[r->ndev - 1];
		v->older_rule_better = !s->ties_older && v->check.mismatches && other.mismatches < v->check.mismatches;
	}
	tlm_wi_format(&s->rec, r->recorded_spec, sizeof r->recorded_spec);
	if (!s->rec_known)
		snprintf(r->recorded_spec, sizeof r->recorded_spec, "%s",
			 r->ndev && r->dev[0].res && strstr(r->dev[0].res[0].spec, "expandable") ?
			 "expandable_segments:True" : "");
	return 0;
}

void tlm_wi_stream_free(struct tlm_wi_stream *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndev; i++) {
		tlm__wi_reps_free(s->dev[i].set);
		free(s->dev[i].early);
		tlm__wi_table_free(&s->dev[i].early_at);
	}
	tlm__wi_feed_free(s->feed);
	free(s);
}

/* ---- a trace file --------------------------------------------------------- */

/* The largest request of each device, read before the replay: the grid's
 * split limits then are only those that matter. */
static int scan_biggest(const char *path, uint64_t *big, char *err, size_t errlen)
{
	char e[400];
	struct tlm_reader *rd = tlm_reader_open(path, e, sizeof e);
	if (!rd) {
		snprintf(err, errlen, "%s: %s", path, e);
		return -1;
	}
	struct tlm_record *rec = malloc(sizeof *rec);
	if (!rec) {
		tlm_reader_close(rd);
		snprintf(err, errlen, "out of memory reading %s", path);
		return -1;
	}
	memset(big, 0, WI_MAX_BIGGEST * sizeof *big);
	while (tlm_reader_next(rd, rec) == 1) {
		const struct tlm_event *ev = &rec->u.ev;
		if (rec->type == TLM_REC_EVENT && ev->kind == TLM_KIND_BLOCK && ev->op == TLM_OP_ALLOC &&
		    ev->device >= 0 && ev->device < WI_MAX_BIGGEST && ev->size > big[ev->device])
			big[ev->device] = ev->size;
	}
	free(rec);
	tlm_reader_close(rd);
	return 0;
}

static int one_pass(const char *path, const struct tlm_wi_options *o, bool older, const uint64_t *biggest,
		    struct tlm_wi_report *r, char *err, size_t errlen)
{
	char e[400];
	struct tlm_reader *rd = tlm_reader_open(path, e, sizeof e);
	if (!rd) {
		snprintf(err, errlen, "%s: %s", path, e);
		return -1;
	}
	struct tlm_wi_stream *s = tlm_wi_stream_new(o, tlm_reader_header(rd)->start_monotonic_ns);
	struct tlm_record *rec = malloc(sizeof *rec);
	int rc = -1;
	if (!s || !rec) {
		snprintf(err, errlen, "out of memory reading %s", path);
		goto out;
	}
	s->ties_older = older;
	s->biggest = biggest;
	while (tlm_reader_next(rd, rec) == 1)
		if (tlm_wi_stream_record(s, rec, e, sizeof e)) {
			snprintf(err, errlen, "%s: %s", path, e);
			goto out;
		}
	if (tlm_wi_stream_finish(s, path, r, e, sizeof e)) {
		snprintf(err, errlen, "%s", e);
		goto out;
	}
	rc = 0;
out:
	free(rec);
	tlm_wi_stream_free(s);
	tlm_reader_close(rd);
	return rc;
}

int tlm_wi_run(const char *path, const struct tlm_wi_options *o, struct tlm_wi_report *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	uint64_t big[WI_MAX_BIGGEST];
	if (scan_biggest(path, big, err, errlen) || one_pass(path, o, false, big, r, err, errlen))
		return -1;
	bool again = false;
	for (size_t i = 0; i < r->ndev; i++)
		again |= r->dev[i].older_rule_better;
	if (!again)
		return 0;
	/* the older tie rule reproduced a device better: its replays again */
	struct tlm_wi_report r2;
	if (one_pass(path, o, true, big, &r2, err, errlen)) {
		tlm_wi_report_free(r);
		return -1;
	}
	for (size_t i = 0; i < r->ndev && i < r2.ndev; i++) {
		if (!r->dev[i].older_rule_better)
			continue;
		free(r->dev[i].res);
		r->dev[i] = r2.dev[i];
		r2.dev[i].res = NULL;
	}
	tlm_wi_report_free(&r2);
	return 0;
}

void tlm_wi_report_free(struct tlm_wi_report *r)
{
	for (size_t i = 0; i < r->ndev; i++)
		free(r->dev[i].res);
	free(r->dev);
	memset(r, 0, sizeof *r);
}
