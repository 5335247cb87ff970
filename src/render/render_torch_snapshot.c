/* SPDX-License-Identifier: MIT */
/*
 * render_torch_snapshot.c - `tlm report --format torch-snapshot`: the
 * pickle that torch.cuda.memory._dump_snapshot() writes, so that
 * PyTorch's memory_viz (pytorch.org/memory_viz, `python -m
 * torch.cuda._memory_viz`) opens a tlm trace. docs/exports.md gives the
 * mapping; the schema is PyTorch's (torch/cuda/memory.py, _snapshot()):
 *
 *   {'segments': [{device, address, total_size, allocated_size, active_size,
 *                  requested_size, stream, segment_type, segment_pool_id,
 *                  is_expandable, frames, blocks: [{address, size,
 *                  requested_size, state, frames}]}],
 *    'device_traces': [[{action, addr | device_free, size, stream, frames,
 *                        time_us}], ...one list per device],
 *    'allocator_settings': {...}}
 *
 * With the caching-allocator tap, the allocator's blocks are the
 * allocations and the driver allocations (or VMM mappings) that held them
 * are its segments. Every other driver allocation on a device (raw CUDA,
 * NCCL, cuBLAS, other frameworks, or all of them without the tap) becomes
 * a segment of its own holding one block, and its trace entries a
 * segment_alloc + alloc pair (free_requested + free_completed +
 * segment_free when freed), marked with the key 'tlm_api' (the CUDA call),
 * so that memory_viz draws the whole device. The segments are the state at
 * the end of the run; the traces run up to it.
 *
 * A trace's entries are in the trace's order (sequence numbers) and their
 * times never go back on the events' clock, as in PyTorch's own (a wall
 * clock set back during the run moves them back, as it does PyTorch's:
 * CLOCK records, tlm__alog_realtime): a thread takes its number and
 * then reads the clock, so an event whose thread was delayed in between
 * carries a time later than those after it (docs/trace-format.md). Such an
 * entry shows the earliest time of any entry after it, the latest its
 * operation can have happened (the times of the others are untouched).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/alog.h"
#include "render/export.h"
#include "analysis/internal.h"
#include "encoders/pickle_out.h"
#include "render/render.h"

/* Memory and file size bounded by the live state, whatever the trace's
 * length (a 150 KB crafted trace made a 1.08 GB pickle): every allocation
 * live at once (more than TLM__ALOG_SNAPSHOT_MAX stops the export with one
 * line), and the device traces of the last TLM__ALOG_SNAPSHOT_KEEP
 * allocations to end (the report's pass keeps that log, alog.h), as
 * PyTorch's own snapshot keeps the last max_entries (its window replays
 * backwards from the segments, the state at the end); the rest are
 * counted (allocations_not_kept) and said. */
#define SNAP_MAX_MEMO (1u << 20) /* stacks whose frames are written once; ids beyond: each time */
#define SMALL_SEGMENT (2u << 20)   /* PyTorch's small pool takes 2 MiB segments */

enum act { A_ALLOC, A_FREE_REQ, A_FREE_DONE, A_SEG_ALLOC, A_SEG_FREE, A_SEG_MAP, A_SEG_UNMAP, A_OOM };
static const char *const act_name[] = {"alloc", "free_requested", "free_completed", "segment_alloc",
				       "segment_free", "segment_map", "segment_unmap", "oom"};

struct item {
	uint64_t seq;
	int64_t t;     /* its time; after sorting, the least of its and every later one's */
	uint32_t idx;  /* log entry, or OOM index */
	uint8_t what;  /* 0 allocation, 1 free, 2 OOM */
};

struct snap {
	struct tlm_report *r;
	struct tlm__alog l;
	struct tlm__pk pk;
	bool *tapped;                  /* per device: the allocator tap reported blocks */
	uint32_t *frames_memo;         /* per stack id seen: memo id + 1, 0 = not written yet */
	uint32_t nmemo;
	uint32_t pool_memo;            /* the (0, 0) tuple's memo id + 1 */
	bool python_only;              /* a Python program, stacks folded to their Python frames */
};

static bool device_entry(const struct tlm__al *a)
{
	return a->device >= 0 && a->kind != TLM_KIND_HOST_PINNED && a->kind != TLM_KIND_VMM_RESERVE;
}

static bool is_block(const struct tlm__al *a)
{
	return a->kind == TLM_KIND_BLOCK;
}

/* A driver allocation that is not one of the allocator's segments. */
static bool external(const struct tlm__al *a)
{
	return !is_block(a) && !(a->flags & TLM__AL_OWNED);
}

/* ---- frames ------------------------------------------------------------------ */

static void frame(struct tlm__pk *pk, const struct tlm_frame *fr)
{
	char buf[64];
	const char *name = fr->function, *file = fr->file;
	if (!name) {
		if (fr->module)
			snprintf(buf, sizeof buf, "%s+0x%llx", tlm__base(fr->module), (unsigned long long)fr->module_offset);
		else
			snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)fr->ip);
		name = buf;
	}
	if (!file)
		file = fr->module ? fr->module : "??";
	if (fr->kind == TLM_FRAME_PYTHON) { /* tlm keeps the qualified name; PyTorch writes co_name */
		const char *dot = strrchr(name, '.');
		if (dot && dot[1])
			name = dot + 1;
	}
	tlm__pk_dict(pk);
	tlm__pk_str(pk, "name");
	tlm__pk_str(pk, name);
	tlm__pk_str(pk, "filename");
	tlm__pk_str(pk, file);
	tlm__pk_str(pk, "line");
	tlm__pk_int(pk, fr->line);
	tlm__pk_end(pk);
}

/* 'frames': [...] of a stack, innermost first, each list written once.
 * PyTorch's own entries (own) follow _record_memory_history(stacks="python")
 * in a Python program: a stack without Python frames (autograd's worker
 * threads, C++ callers) is empty; --full-stacks gives every frame, as
 * stacks="all" does. Memory outside the allocator always keeps its frames. */
static void frames(struct snap *s, uint32_t stack_id, bool own)
{
	struct tlm__pk *pk = &s->pk;
	tlm__pk_str(pk, "frames");
	const struct tlm_frame *fr;
	size_t n = tlm_report_frames(s->r, stack_id, &fr);
	if (own && s->python_only) {
		bool py = false;
		for (size_t i = 0; i < n && !py; i++)
			py = fr[i].kind == TLM_FRAME_PYTHON;
		if (!py) {
			stack_id = 0;
			n = 0;
		}
	}
	if (stack_id < s->nmemo && s->frames_memo[stack_id]) {
		tlm__pk_get(pk, s->frames_memo[stack_id] - 1);
		return;
	}
	tlm__pk_list(pk);
	for (size_t i = 0; i < n; i++)
		frame(pk, &fr[i]);
	uint32_t id = tlm__pk_end_memo(pk);
	if (stack_id < s->nmemo)
		s->frames_memo[stack_id] = id + 1;
}

static void kv_int(struct tlm__pk *pk, const char *k, int64_t v)
{
	tlm__pk_str(pk, k);
	tlm__pk_int(pk, v);
}

static void kv_uint(struct tlm__pk *pk, const char *k, uint64_t v)
{
	tlm__pk_str(pk, k);
	tlm__pk_uint(pk, v);
}

static void kv_str(struct tlm__pk *pk, const char *k, const char *v)
{
	tlm__pk_str(pk, k);
	tlm__pk_str(pk, v);
}

/* ---- device_traces ------------------------------------------------------------ */

static int by_seq(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->what > y->what) - (x->what < y->what);
}

/* (0, 0): the default pool (tlm does not see CUDA-graph private pools) */
static void pool_id(struct snap *s)
{
	if (s->pool_memo) {
		tlm__pk_get(&s->pk, s->pool_memo - 1);
		return;
	}
	tlm__pk_tuple(&s->pk);
	tlm__pk_int(&s->pk, 0);
	tlm__pk_int(&s->pk, 0);
	s->pool_memo = tlm__pk_end_memo(&s->pk) + 1;
}

/* What PyTorch writes in each trace entry when nothing was set (no
 * torch.compile context, no _set_memory_metadata, the default pool). */
static void entry_defaults(struct snap *s)
{
	kv_str(&s->pk, "compile_context", "N/A");
	kv_str(&s->pk, "user_metadata", "");
	tlm__pk_str(&s->pk, "pool_id");
	pool_id(s);
}

/* A trace entry's time, the item's (struct item) */
static void kv_time(struct snap *s, const struct item *it)
{
	kv_int(&s->pk, "time_us", (int64_t)(tlm__alog_realtime(&s->l, it->t) / 1000));
}

/* The entry of an allocation's item (its allocation, or its free) */
static void entry_of(struct snap *s, int action, const struct item *it, uint64_t size)
{
	const struct tlm__al *a = &s->l.e[it->idx];
	bool at_free = it->what == 1;
	struct tlm__pk *pk = &s->pk;
	tlm__pk_dict(pk);
	kv_str(pk, "action", act_name[action]);
	kv_uint(pk, "addr", a->addr);
	kv_uint(pk, "size", size);
	kv_uint(pk, "stream", a->stream);
	frames(s, at_free ? a->free_stack : a->stack_id, !external(a));
	kv_time(s, it);
	entry_defaults(s);
	if (external(a))
		kv_str(pk, "tlm_api", tlm_api_name(a->api));
	tlm__pk_end(pk);
}

static void entry(struct snap *s, int action, const struct item *it)
{
	entry_of(s, action, it, s->l.e[it->idx].size);
}

/* An owned VMM mapping and those right after it in the trace that continue
 * it (the same action, the next addresses): PyTorch maps and unmaps an
 * expandable segment's pages in one step, traced as one entry, where the
 * driver sees one cuMemMap or cuMemUnmap per page. Returns how many items
 * it covers (>= 1) and their bytes. */
static size_t mapping_run(const struct snap *s, const struct item *it, size_t n, uint64_t *bytes)
{
	const struct tlm__al *a = &s->l.e[it[0].idx];
	size_t k = 1;
	*bytes = a->size;
	for (; k < n && it[k].what == it[0].what; k++) {
		const struct tlm__al *b = &s->l.e[it[k].idx];
		if (b->kind != TLM_KIND_VMM_MAPPING || external(b) || b->addr != a->addr + *bytes)
			break;
		*bytes += b->size;
	}
	return k;
}

static void trace_item(struct snap *s, const struct item *it)
{
	if (it->what == 2) {
		const struct tlm__al_oom *o = &s->l.oom[it->idx];
		struct tlm__pk *pk = &s->pk;
		tlm__pk_dict(pk);
		kv_str(pk, "action", "oom");
		kv_uint(pk, "device_free", o->device_free);
		kv_uint(pk, "size", o->size);
		kv_uint(pk, "stream", o->allocator ? 0 : o->stream);
		frames(s, o->stack_id, o->allocator);
		kv_time(s, it);
		entry_defaults(s);
		tlm__pk_end(pk);
		return;
	}
	const struct tlm__al *a = &s->l.e[it->idx];
	bool fr = it->what == 1;
	if (is_block(a)) {
		if (!fr) {
			entry(s, A_ALLOC, it);
		} else { /* the tap reports a free when it is requested; tlm sees no later completion */
			entry(s, A_FREE_REQ, it);
			entry(s, A_FREE_DONE, it);
		}
	} else if (!external(a)) {
		bool map = a->kind == TLM_KIND_VMM_MAPPING;
		entry(s, fr ? (map ? A_SEG_UNMAP : A_SEG_FREE) : (map ? A_SEG_MAP : A_SEG_ALLOC), it);
	} else if (!fr) {
		entry(s, A_SEG_ALLOC, it);
		entry(s, A_ALLOC, it);
	} else {
		entry(s, A_FREE_REQ, it);
		entry(s, A_FREE_DONE, it);
		entry(s, A_SEG_FREE, it);
	}
}

static bool oom_shown(const struct snap *s, const struct tlm__al_oom *o)
{
	if (o->device < 0 || o->kind == TLM_KIND_HOST_PINNED || o->device > s->l.max_device)
		return false;
	/* with the tap, the allocator's own OOM stands for its failed cudaMallocs */
	return s->tapped[o->device] ? o->allocator : !o->allocator;
}

static int device_traces(struct snap *s)
{
	const struct tlm__alog *l = &s->l;
	int nd = l->max_device + 1;
	tlm__pk_str(&s->pk, "device_traces");
	tlm__pk_list(&s->pk);
	struct item *it = malloc((2 * l->n + l->noom + 1) * sizeof *it);
	if (!it)
		return -1;
	for (int d = 0; d < nd; d++) {
		size_t n = 0;
		for (size_t i = 0; i < l->n; i++) {
			const struct tlm__al *a = &l->e[i];
			if (a->device != d || !device_entry(a))
				continue;
			it[n++] = (struct item){a->seq_alloc, a->t_alloc, (uint32_t)i, 0};
			if (!(a->flags & TLM__AL_LIVE))
				it[n++] = (struct item){a->seq_free, a->t_free, (uint32_t)i, 1};
		}
		for (size_t i = 0; i < l->noom; i++)
			if (l->oom[i].device == d && oom_shown(s, &l->oom[i]))
				it[n++] = (struct item){l->oom[i].seq, l->oom[i].t, (uint32_t)i, 2};
		qsort(it, n, sizeof *it, by_seq);
		for (size_t i = n; i-- > 1;) /* no time after a later entry's (the file's top) */
			if (it[i - 1].t > it[i].t)
				it[i - 1].t = it[i].t;
		tlm__pk_list(&s->pk);
		for (size_t i = 0; i < n; i++) {
			const struct tlm__al *a = it[i].what != 2 ? &s->l.e[it[i].idx] : NULL;
			if (a && a->kind == TLM_KIND_VMM_MAPPING && !external(a)) {
				uint64_t bytes;
				size_t k = mapping_run(s, &it[i], n - i, &bytes);
				bool fr = it[i].what == 1;
				entry_of(s, fr ? A_SEG_UNMAP : A_SEG_MAP, &it[i], bytes);
				i += k - 1;
				continue;
			}
			trace_item(s, &it[i]);
		}
		tlm__pk_end(&s->pk);
	}
	free(it);
	tlm__pk_end(&s->pk);
	return 0;
}

/* ---- segments at the end -------------------------------------------------------- */

struct seg {
	uint64_t addr, size;
	uint32_t first;   /* log entry of its (first) allocation or mapping */
	int16_t device;
	bool expandable, external;
	size_t b0, nb;    /* its blocks in the sorted block list */
};

static int by_dev_addr(const void *a, const void *b, void *ctx)
{
	const struct tlm__al *e = ctx, *x = &e[*(const uint32_t *)a], *y = &e[*(const uint32_t *)b];
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

static void block(struct snap *s, uint64_t addr, uint64_t size, const struct tlm__al *b)
{
	struct tlm__pk *pk = &s->pk;
	tlm__pk_dict(pk);
	kv_uint(pk, "address", addr);
	kv_uint(pk, "size", size);
	kv_uint(pk, "requested_size", b ? size : 0);
	kv_str(pk, "state", b ? "active_allocated" : "inactive");
	if (b)
		frames(s, b->stack_id, !external(b));
	else
		frames(s, 0, true);
	tlm__pk_end(pk);
}

static void segment(struct snap *s, const struct seg *g, const uint32_t *blk)
{
	const struct tlm__al *e = s->l.e, *first = &e[g->first];
	struct tlm__pk *pk = &s->pk;
	uint64_t used = 0;
	for (size_t i = 0; i < g->nb; i++)
		used += e[blk[g->b0 + i]].size;
	if (g->external)
		used = g->size;
	tlm__pk_dict(pk);
	kv_int(pk, "device", g->device);
	kv_uint(pk, "address", g->addr);
	kv_uint(pk, "total_size", g->size);
	kv_uint(pk, "allocated_size", used);
	kv_uint(pk, "active_size", used);
	kv_uint(pk, "requested_size", used);
	kv_uint(pk, "stream", first->stream);
	/* PyTorch's small pool: 2 MiB segments, or an expandable segment of 2 MiB pages */
	uint64_t unit = g->expandable ? first->size : g->size;
	kv_str(pk, "segment_type", unit <= SMALL_SEGMENT ? "small" : "large");
	tlm__pk_str(pk, "segment_pool_id");
	pool_id(s);
	tlm__pk_str(pk, "is_expandable");
	tlm__pk_bool(pk, g->expandable);
	/* PyTorch leaves its segments' frames empty (the segment_alloc entry has
	 * them); memory outside the allocator keeps the stack that took it */
	frames(s, g->external ? first->stack_id : 0, !g->external);
	if (g->external)
		kv_str(pk, "tlm_api", tlm_api_name(first->api));
	tlm__pk_str(pk, "blocks");
	tlm__pk_list(pk);
	if (g->external) {
		block(s, g->addr, g->size, first);
	} else {
		uint64_t at = g->addr, end = g->addr + g->size;
		for (size_t i = 0; i < g->nb; i++) {
			const struct tlm__al *b = &e[blk[g->b0 + i]];
			if (b->addr > at)
				block(s, at, b->addr - at, NULL);
			uint64_t sz = b->addr + b->size > end ? end - b->addr : b->size;
			block(s, b->addr, sz, b);
			at = b->addr + sz;
		}
		if (at < end)
			block(s, at, end - at, NULL);
	}
	tlm__pk_end(pk);
	tlm__pk_end(pk);
}

static int segments(struct snap *s)
{
	const struct tlm__alog *l = &s->l;
	size_t nsegs = 0, nblk = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct tlm__al *a = &l->e[i];
		if ((a->flags & TLM__AL_LIVE) && device_entry(a)) {
			if (is_block(a))
				nblk++;
			else
				nsegs++;
		}
	}
	uint32_t *sg = malloc((nsegs + 1) * sizeof *sg), *blk = malloc((nblk + 1) * sizeof *blk);
	struct seg *out = calloc(nsegs + nblk + 1, sizeof *out);
	int rc = -1;
	if (!sg || !blk || !out)
		goto done;
	nsegs = nblk = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct tlm__al *a = &l->e[i];
		if ((a->flags & TLM__AL_LIVE) && device_entry(a)) {
			if (is_block(a))
				blk[nblk++] = (uint32_t)i;
			else
				sg[nsegs++] = (uint32_t)i;
		}
	}
	qsort_r(sg, nsegs, sizeof *sg, by_dev_addr, l->e);
	qsort_r(blk, nblk, sizeof *blk, by_dev_addr, l->e);
	/* the allocator's mappings laid end to end are one expandable segment */
	size_t ns = 0;
	for (size_t i = 0; i < nsegs; i++) {
		const struct tlm__al *a = &l->e[sg[i]];
		bool map = a->kind == TLM_KIND_VMM_MAPPING, ext = external(a);
		struct seg *prev = ns ? &out[ns - 1] : NULL;
		if (prev && map && !ext && prev->expandable && prev->device == a->device &&
		    prev->addr + prev->size == a->addr) {
			prev->size += a->size;
			continue;
		}
		out[ns++] = (struct seg){a->addr, a->size, sg[i], a->device, map && !ext, ext, 0, 0};
	}
	/* blocks into the segment holding them (both sorted by device, address) */
	size_t j = 0;
	for (size_t i = 0; i < nblk;) {
		const struct tlm__al *b = &l->e[blk[i]];
		while (j < ns && (out[j].device < b->device ||
				  (out[j].device == b->device && out[j].addr + out[j].size <= b->addr)))
			j++;
		if (j < ns && !out[j].external && out[j].device == b->device && out[j].addr <= b->addr) {
			if (!out[j].nb)
				out[j].b0 = i;
			out[j].nb++;
			i++;
			continue;
		}
		/* a block outside every live segment (its segment predates the trace):
		 * a segment of its own, so that no block is lost */
		struct seg *o = &out[nsegs + i];
		*o = (struct seg){b->addr, b->size, blk[i], b->device, false, false, i, 1};
		i++;
	}
	tlm__pk_str(&s->pk, "segments");
	tlm__pk_list(&s->pk);
	for (size_t i = 0; i < ns; i++)
		segment(s, &out[i], blk);
	for (size_t i = nsegs; i < nsegs + nblk; i++)
		if (out[i].nb)
			segment(s, &out[i], blk);
	tlm__pk_end(&s->pk);
	rc = 0;
done:
	free(sg);
	free(blk);
	free(out);
	return rc;
}

/* ---- the snapshot ------------------------------------------------------------------ */

int tlm_report_torch_snapshot(struct tlm_report *r, FILE *f, char *err, size_t errlen)
{
	struct snap s = {.r = r};
	if (errlen)
		err[0] = 0;
	if (tlm__alog_get(r, TLM__ALOG_SNAPSHOT, &s.l, err, errlen))
		return -1;
	int nd = s.l.max_device + 1;
	s.python_only = r->priv->npy && !r->priv->full_stacks;
	uint32_t maxstack = 0;
	for (size_t i = 0; i < s.l.n; i++) {
		if (s.l.e[i].stack_id > maxstack)
			maxstack = s.l.e[i].stack_id;
		if (s.l.e[i].free_stack > maxstack)
			maxstack = s.l.e[i].free_stack;
	}
	for (size_t i = 0; i < s.l.noom; i++)
		if (s.l.oom[i].stack_id > maxstack)
			maxstack = s.l.oom[i].stack_id;
	s.nmemo = maxstack < SNAP_MAX_MEMO ? maxstack + 1 : SNAP_MAX_MEMO; /* a crafted id: no 256 MiB table */
	s.tapped = calloc((size_t)nd + 1, sizeof *s.tapped);
	s.frames_memo = calloc(s.nmemo, sizeof *s.frames_memo);
	int rc = -1;
	if (!s.tapped || !s.frames_memo) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	bool expandable = false;
	for (size_t i = 0; i < s.l.n; i++) {
		const struct tlm__al *a = &s.l.e[i];
		if (is_block(a) && a->device >= 0)
			s.tapped[a->device] = true;
		expandable |= a->kind == TLM_KIND_VMM_MAPPING && (a->flags & TLM__AL_OWNED);
	}
	bool any_tap = false;
	for (int d = 0; d < nd; d++)
		any_tap |= s.tapped[d];

	tlm__pk_begin(&s.pk, f);
	tlm__pk_dict(&s.pk);
	if (segments(&s) || device_traces(&s)) {
		snprintf(err, errlen, "out of memory");
		tlm__pk_finish(&s.pk);
		goto out;
	}
	/* what tlm can tell of the allocator's settings: whether its segments grow
	 * by VMM mappings (expandable_segments) */
	tlm__pk_str(&s.pk, "allocator_settings");
	tlm__pk_dict(&s.pk);
	if (any_tap) {
		tlm__pk_str(&s.pk, "expandable_segments");
		tlm__pk_bool(&s.pk, expandable);
	}
	tlm__pk_end(&s.pk);
	/* what PyTorch 2.x adds and tlm cannot know: record_function annotations,
	 * its pinned host allocator's segments and traces (not exported) */
	static const char *const empty[] = {"external_annotations", "host_segments", "host_traces"};
	for (size_t i = 0; i < sizeof empty / sizeof *empty; i++) {
		tlm__pk_str(&s.pk, empty[i]);
		tlm__pk_list(&s.pk);
		tlm__pk_end(&s.pk);
	}
	tlm__pk_str(&s.pk, "tlm");
	tlm__pk_dict(&s.pk);
	kv_str(&s.pk, "generator", "tlm");
	kv_str(&s.pk, "trace", r->path);
	kv_uint(&s.pk, "allocations_not_kept", s.l.dropped);
	tlm__pk_str(&s.pk, "allocator_tap");
	tlm__pk_bool(&s.pk, any_tap);
	tlm__pk_end(&s.pk);
	tlm__pk_end(&s.pk);
	rc = tlm__pk_finish(&s.pk);
	if (rc)
		snprintf(err, errlen, "write error");
	else if (s.l.dropped || s.l.oom_dropped) /* said on success: what the window left out */
		snprintf(err, errlen, "device traces: the allocations live at the end and the last %u to end; "
			 "%llu that ended before them left out (allocations_not_kept)%s",
			 TLM__ALOG_SNAPSHOT_KEEP, (unsigned long long)s.l.dropped,
			 s.l.oom_dropped ? ", and the failed allocations past the first 65536" : "");
out:
	free(s.tapped);
	free(s.frames_memo);
	return rc;
}
