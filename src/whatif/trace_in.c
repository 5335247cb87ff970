/* SPDX-License-Identifier: MIT */
/*
 * trace_in.c - what a replay needs from a trace, per device: the block
 * requests in order (the tap's ALLOC, FREE and OOM events), the memory other
 * code took from the driver meanwhile, the allocator's own driver calls (for
 * the check), and the device's memory: what the process held from the driver
 * plus the free memory the driver reported at a failed allocation.
 *
 * A driver allocation belongs to the allocator when a block lies inside it
 * (a cudaMalloc segment, or an address range reserved for an expandable
 * segment and the mappings inside it); the rest is others' memory. Events are
 * read in one pass; classes are settled at the end, once every block is known.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlm/trace.h"
#include "whatif/replay_int.h"

/* One driver event kept until its class is known. */
struct drv_ev {
	size_t dev;         /* index into t->dev */
	uint64_t nop;       /* block ops of its device before it (its position) */
	uint64_t t, addr, size;
	size_t owner;       /* alloc: itself; free/map: the alloc or reserve it belongs to (+1), 0 none */
	size_t guess;       /* a range reserved with no device: its thread's device then (nop is its
	                     * position there), SIZE_MAX none */
	uint8_t kind, op;
	bool failed, mine;  /* mine: the allocator's (settled at the end, on the owner) */
};

struct live {
	uint64_t start, end;
	size_t idx;         /* drv_ev index */
	size_t dev;
	uint8_t kind;
};

struct rd {
	struct wi_trace *t;
	struct drv_ev *ev;
	size_t nev, capev;
	struct live *live;
	size_t nlive, caplive;
	struct wi_table *blocks; /* per device: block address -> op index + 1 */
	uint64_t *used;          /* per device: driver pages held */
	int16_t *thr_dev;        /* per trace thread: the device of its last event, -1 none */
	size_t nthr;
	bool nomem;
};

static size_t dev_of(struct rd *r, int device)
{
	for (size_t i = 0; i < r->t->ndev; i++)
		if (r->t->dev[i].device == device)
			return i;
	size_t n = r->t->ndev + 1;
	struct wi_dev *d = realloc(r->t->dev, n * sizeof *d);
	struct wi_table *b = realloc(r->blocks, n * sizeof *b);
	uint64_t *u = realloc(r->used, n * sizeof *u);
	if (d)
		r->t->dev = d;
	if (b)
		r->blocks = b;
	if (u)
		r->used = u;
	if (!d || !b || !u) {
		r->nomem = true;
		return SIZE_MAX;
	}
	memset(&d[n - 1], 0, sizeof *d);
	memset(&b[n - 1], 0, sizeof *b);
	u[n - 1] = 0;
	d[n - 1].device = device;
	d[n - 1].totals = true;
	r->t->ndev = n;
	return n - 1;
}

static struct wi_op *push_op(struct rd *r, struct wi_dev *d)
{
	if (d->nop == d->capop) {
		size_t c = d->capop ? d->capop * 2 : 1024;
		struct wi_op *p = realloc(d->op, c * sizeof *p);
		if (!p) {
			r->nomem = true;
			return NULL;
		}
		d->op = p;
		d->capop = c;
	}
	struct wi_op *o = &d->op[d->nop++];
	memset(o, 0, sizeof *o);
	return o;
}

static struct live *find_live(struct rd *r, size_t dev, uint64_t addr, int kind)
{
	/* handles and reserved ranges are unique in the process, whatever the device */
	for (size_t i = r->nlive; i-- > 0;)
		if ((kind != TLM_KIND_DEVICE || r->live[i].dev == dev) && r->live[i].kind == kind &&
		    addr >= r->live[i].start && addr < r->live[i].end)
			return &r->live[i];
	return NULL;
}

static void add_live(struct rd *r, size_t dev, uint64_t start, uint64_t size, size_t idx, uint8_t kind)
{
	if (r->nlive == r->caplive) {
		size_t c = r->caplive ? r->caplive * 2 : 64;
		struct live *p = realloc(r->live, c * sizeof *p);
		if (!p) {
			r->nomem = true;
			return;
		}
		r->live = p;
		r->caplive = c;
	}
	r->live[r->nlive++] = (struct live){start, start + (size ? size : 1), idx, dev, kind};
}

static void drop_live(struct rd *r, struct live *l)
{
	*l = r->live[--r->nlive];
}

/* The allocator reserves an expandable segment's range inside a malloc for
 * that device, on the thread that allocates: the device its thread used last. */
static void note_thread(struct rd *r, uint32_t thread, int device)
{
	if (device < 0 || thread >= 65536)
		return;
	if (thread >= r->nthr) {
		size_t n = (size_t)thread + 64;
		int16_t *p = realloc(r->thr_dev, n * sizeof *p);
		if (!p) {
			r->nomem = true;
			return;
		}
		for (size_t i = r->nthr; i < n; i++)
			p[i] = -1;
		r->thr_dev = p;
		r->nthr = n;
	}
	r->thr_dev[thread] = (int16_t)device;
}

static int thread_device(const struct rd *r, uint32_t thread)
{
	return thread < r->nthr ? r->thr_dev[thread] : -1;
}

static uint64_t pages(uint64_t size)
{
	return (size + WI_PAGE - 1) / WI_PAGE;
}

static void block_event(struct rd *r, const struct tlm_event *e, uint64_t t0)
{
	size_t di = dev_of(r, e->device);
	if (di == SIZE_MAX)
		return;
	note_thread(r, e->thread, e->device);
	struct wi_dev *d = &r->t->dev[di];
	if (e->op == TLM_OP_ALLOC && e->result) {
		struct wi_op *o = push_op(r, d);
		if (!o)
			return;
		*o = (struct wi_op){e->time_ns - t0, 0, e->size, e->aux, e->stream, 0, WI_OOM, 0};
		d->nooms++;
	} else if (e->op == TLM_OP_ALLOC) {
		struct wi_op *o = push_op(r, d);
		if (!o)
			return;
		*o = (struct wi_op){e->time_ns - t0, e->addr, e->size, e->aux, e->stream, 0, WI_ALLOC, e->stack_id};
		if (tlm__wi_table_put(&r->blocks[di], e->addr, d->nop))
			r->nomem = true;
		d->nalloc++;
		/* the driver allocation holding it is the allocator's */
		struct live *l = find_live(r, di, e->addr, TLM_KIND_DEVICE);
		if (!l)
			l = find_live(r, di, e->addr, TLM_KIND_VMM_RESERVE);
		if (l)
			r->ev[l->idx].mine = true;
	} else if (e->op == TLM_OP_FREE) {
		uint64_t a = tlm__wi_table_take(&r->blocks[di], e->addr);
		if (!a)
			return; /* allocated before tlm started: the model never had it */
		struct wi_op *o = push_op(r, d);
		if (!o)
			return;
		*o = (struct wi_op){e->time_ns - t0, e->addr, e->size, e->aux, e->stream, a - 1, WI_FREE, 0};
		d->nfree++;
	} else {
		return;
	}
	if (e->flags & TLM_EVF_NO_TOTALS)
		d->totals = false;
	if (e->stream > d->peak_reserved)
		d->peak_reserved = e->stream;
	if (e->aux > d->peak_allocated)
		d->peak_allocated = e->aux;
}

static void driver_event(struct rd *r, const struct tlm_event *e, uint64_t t0)
{
	int k = e->kind;
	if (k != TLM_KIND_DEVICE && k != TLM_KIND_VMM_PHYSICAL && k != TLM_KIND_VMM_RESERVE &&
	    k != TLM_KIND_VMM_MAPPING)
		return;
	if (e->op != TLM_OP_ALLOC && e->op != TLM_OP_FREE)
		return;
	if (e->api == TLM_API_cudaMallocAsync || e->api == TLM_API_cudaMallocAsync_ptsz ||
	    e->api == TLM_API_cuMemAllocAsync || e->api == TLM_API_cuMemAllocAsync_ptsz)
		r->t->async_allocs = true;
	/* cuMemAddressReserve and cuMemMap name no device: a mapping takes its
	 * handle's, a range the device of its first mapping (resolved below) */
	int device = e->device;
	struct live *res = NULL;
	if (k == TLM_KIND_VMM_MAPPING || k == TLM_KIND_VMM_RESERVE)
		res = find_live(r, 0, e->addr, TLM_KIND_VMM_RESERVE);
	if (k == TLM_KIND_VMM_MAPPING && e->op == TLM_OP_ALLOC) {
		struct live *h = find_live(r, 0, e->aux, TLM_KIND_VMM_PHYSICAL);
		if (h)
			device = r->t->dev[h->dev].device;
	} else if (res && res->dev != SIZE_MAX) {
		device = r->t->dev[res->dev].device;
	} else if (device < 0 && e->op == TLM_OP_FREE) {
		for (size_t i = r->nlive; i-- > 0;) /* a free takes its allocation's device */
			if (r->live[i].kind == k && r->live[i].start == e->addr && r->live[i].dev != SIZE_MAX) {
				device = r->t->dev[r->live[i].dev].device;
				break;
			}
	}
	bool unresolved = device < 0 && k == TLM_KIND_VMM_RESERVE && e->op == TLM_OP_ALLOC && !e->result;
	if (device < 0 && !unresolved)
		return;
	size_t di = unresolved ? SIZE_MAX : dev_of(r, device);
	if (di == SIZE_MAX && !unresolved)
		return;
	struct wi_dev *d = unresolved ? NULL : &r->t->dev[di];
	if (res && res->dev == SIZE_MAX && d && k == TLM_KIND_VMM_MAPPING && e->op == TLM_OP_ALLOC) {
		res->dev = di;
		struct drv_ev *rv = &r->ev[res->idx];
		rv->dev = di;
		/* reserved where its thread's device was then (an OOM can come
		 * between the reservation and the first mapping) */
		if (rv->guess != di)
			rv->nop = d->nop;
	}
	if (d)
		note_thread(r, e->thread, device);
	if (r->nev == r->capev) {
		size_t c = r->capev ? r->capev * 2 : 256;
		struct drv_ev *p = realloc(r->ev, c * sizeof *p);
		if (!p) {
			r->nomem = true;
			return;
		}
		r->ev = p;
		r->capev = c;
	}
	size_t idx = r->nev++;
	struct drv_ev *x = &r->ev[idx];
	*x = (struct drv_ev){di, d ? d->nop : 0, e->time_ns - t0, e->addr, e->size, 0, SIZE_MAX, (uint8_t)k, e->op,
			     e->result != 0, false};
	if (unresolved) {
		int g = thread_device(r, e->thread);
		size_t gi = SIZE_MAX;
		for (size_t i = 0; g >= 0 && i < r->t->ndev; i++)
			if (r->t->dev[i].device == g)
				gi = i;
		if (gi != SIZE_MAX) {
			x->guess = gi;
			x->nop = r->t->dev[gi].nop;
		}
	}
	/* d->nop counts block ops only until settle() merges the foreign ones in */
	if (e->op == TLM_OP_ALLOC && e->result) {
		if (k == TLM_KIND_DEVICE || k == TLM_KIND_VMM_PHYSICAL) {
			uint64_t used = r->used[di] + e->device_free / WI_PAGE;
			if (!d->memory && e->device_free)
				d->memory = used * WI_PAGE;
		}
		return;
	}
	if (e->op == TLM_OP_ALLOC) {
		x->owner = idx + 1;
		if (k == TLM_KIND_VMM_MAPPING) {
			struct live *l = find_live(r, di, e->addr, TLM_KIND_VMM_RESERVE);
			x->owner = l ? l->idx + 1 : 0;
			/* the physical handle mapped here follows its range */
			struct live *h = find_live(r, di, e->aux, TLM_KIND_VMM_PHYSICAL);
			if (h && l)
				r->ev[h->idx].owner = l->idx + 1;
		} else {
			if (k == TLM_KIND_DEVICE || k == TLM_KIND_VMM_PHYSICAL)
				r->used[di] += pages(e->size);
			add_live(r, di, e->addr, e->size, idx, (uint8_t)k);
		}
		if (d && k != TLM_KIND_VMM_PHYSICAL && (!d->va_base || e->addr < d->va_base))
			d->va_base = e->addr / WI_PAGE * WI_PAGE;
		return;
	}
	/* a free: find what it frees */
	if (k == TLM_KIND_VMM_MAPPING) {
		struct live *l = find_live(r, di, e->addr, TLM_KIND_VMM_RESERVE);
		x->owner = l ? l->idx + 1 : 0;
		return;
	}
	struct live *l = NULL;
	for (size_t i = r->nlive; i-- > 0;)
		if (r->live[i].dev == di && r->live[i].kind == k && r->live[i].start == e->addr) {
			l = &r->live[i];
			break;
		}
	if (!l) {
		x->owner = 0;
		return;
	}
	x->owner = l->idx + 1;
	x->size = r->ev[l->idx].size;
	if (k == TLM_KIND_DEVICE || k == TLM_KIND_VMM_PHYSICAL)
		r->used[di] -= pages(x->size);
	drop_live(r, l);
}

/* Whether driver event i is the allocator's: its owner (a segment or a
 * reserved range, or a handle mapped into one) held blocks. */
static bool is_mine(const struct rd *r, const struct drv_ev *x)
{
	if (!x->owner)
		return false;
	const struct drv_ev *o = &r->ev[x->owner - 1];
	if (o->kind == TLM_KIND_VMM_PHYSICAL && o->owner && o->owner - 1 != (size_t)(o - r->ev))
		o = &r->ev[o->owner - 1];
	return o->mine;
}

/* Settles each driver event: the allocator's go to the check list, the
 * others' memory becomes foreign ops, merged into the ops at their place. */
static int settle(struct rd *r)
{
	struct wi_trace *t = r->t;
	for (size_t di = 0; di < t->ndev; di++) {
		struct wi_dev *d = &t->dev[di];
		/* block-op index of each op, for the check's positions */
		size_t nf = 0;
		for (size_t i = 0; i < r->nev; i++) {
			const struct drv_ev *x = &r->ev[i];
			if (x->dev != di)
				continue;
			bool mine = is_mine(r, x);
			struct wi_devev e = {x->nop, x->addr, x->size, 0};
			if (x->failed) {
				/* the allocator's when the block op it precedes would ask
				 * the driver for that much (a segment, or a page) */
				const struct wi_op *o = x->nop < d->nop ? &d->op[x->nop] : NULL;
				bool req = o && (o->type == WI_ALLOC || o->type == WI_OOM);
				if (x->kind == TLM_KIND_DEVICE && req && tlm_wi_allocation_size(o->size) == x->size)
					e.what = WI_SEG_FAIL;
				else if (x->kind == TLM_KIND_VMM_PHYSICAL && req &&
					 (x->size == TLM_WI_SMALL_BUFFER || x->size == TLM_WI_LARGE_BUFFER))
					e.what = WI_CREATE_FAIL;
				e.addr = 0;
			} else if (mine) {
				bool a = x->op == TLM_OP_ALLOC;
				e.what = x->kind == TLM_KIND_DEVICE ? (a ? WI_SEG_ALLOC : WI_SEG_FREE)
					 : x->kind == TLM_KIND_VMM_RESERVE ? (a ? WI_RESERVE : WI_RESERVE_FREE)
					 : x->kind == TLM_KIND_VMM_MAPPING ? (a ? WI_MAP : WI_UNMAP) : 0;
				d->vmm |= x->kind == TLM_KIND_VMM_MAPPING;
				if (e.what == WI_RESERVE && (!d->reserve_min || e.size < d->reserve_min))
					d->reserve_min = e.size;
			} else if (x->kind == TLM_KIND_DEVICE || x->kind == TLM_KIND_VMM_PHYSICAL) {
				nf++;
			}
			if (e.what && tlm__wi_push_ev(&d->ev, &d->nev, &d->capev, &e))
				return -1;
		}
		/* torch.cuda.empty_cache(): segments given back before block op k
		 * (or at the end) without a failed allocation first: the malloc of
		 * op k frees cached segments only after one (or, with garbage
		 * collection, on its own: 1 = ambiguous, the replay decides) */
		uint8_t *empty = calloc(d->nop + 1, 1);
		if (!empty)
			return -1;
		size_t nempty = 0;
		for (size_t i = 0; i < d->nev; i++) {
			const struct wi_devev *e = &d->ev[i];
			bool fail = e->what == WI_SEG_FAIL || e->what == WI_CREATE_FAIL;
			bool gives = e->what == WI_SEG_FREE || e->what == WI_UNMAP || e->what == WI_RESERVE_FREE;
			if (i && d->ev[i - 1].at == e->at)
				continue; /* only the first call at each position decides */
			if (fail || !gives || e->at > d->nop)
				continue;
			bool alloc = e->at < d->nop && (d->op[e->at].type == WI_ALLOC || d->op[e->at].type == WI_OOM);
			empty[e->at] = alloc ? 1 : 2;
			nempty++;
		}
		if (!nf && !nempty) {
			free(empty);
			continue;
		}
		/* merge the foreign ops and the empty_cache() calls in */
		size_t n = d->nop + nf + nempty;
		struct wi_op *op = calloc(n, sizeof *op);
		uint64_t *newidx = calloc(d->nop + 1, sizeof *newidx);
		uint64_t *fidx = calloc(r->nev + 1, sizeof *fidx);
		if (!op || !newidx || !fidx) {
			free(op);
			free(newidx);
			free(fidx);
			free(empty);
			return -1;
		}
		size_t j = 0, src = 0;
		for (size_t i = 0; i <= r->nev; i++) {
			const struct drv_ev *x = i < r->nev ? &r->ev[i] : NULL;
			if (x && (x->dev != di || x->failed || is_mine(r, x) ||
				  (x->kind != TLM_KIND_DEVICE && x->kind != TLM_KIND_VMM_PHYSICAL)))
				continue;
			uint64_t until = x ? x->nop : d->nop + 1;
			for (; src < until && src <= d->nop; src++) {
				if (empty[src])
					op[j++] = (struct wi_op){src < d->nop ? d->op[src].t : 0, 0, empty[src], 0, 0, 0,
								 WI_EMPTY, 0};
				if (src == d->nop)
					continue;
				newidx[src] = j;
				op[j] = d->op[src];
				if (op[j].type == WI_FREE)
					op[j].partner = newidx[op[j].partner];
				j++;
			}
			if (!x)
				break;
			if (x->op == TLM_OP_ALLOC) {
				fidx[i] = j + 1;
				op[j++] = (struct wi_op){x->t, x->addr, x->size, 0, 0, 0, WI_FALLOC, 0};
			} else if (x->owner && fidx[x->owner - 1]) {
				op[j++] = (struct wi_op){x->t, x->addr, x->size, 0, 0, fidx[x->owner - 1] - 1, WI_FFREE, 0};
			}
		}
		free(d->op);
		free(newidx);
		free(fidx);
		free(empty);
		d->op = op;
		d->nop = j;
		d->capop = n;
	}
	return 0;
}

int tlm__wi_trace_read(const char *path, struct wi_trace *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	struct tlm_reader *rd = tlm_reader_open(path, err, errlen);
	if (!rd)
		return -1;
	uint64_t t0 = tlm_reader_header(rd)->start_monotonic_ns;
	struct tlm_record *rec = malloc(sizeof *rec);
	struct rd r = {.t = t};
	int rc = -1;
	if (!rec)
		goto nomem;
	while (tlm_reader_next(rd, rec) == 1) {
		if (rec->type == TLM_REC_PROP && !strcmp(rec->u.prop.key, "torch.alloc_conf")) {
			size_t n = strnlen(rec->u.prop.value, sizeof t->conf - 1);
			memcpy(t->conf, rec->u.prop.value, n);
			t->conf[n] = 0;
			t->has_conf = true;
		}
		int pd;
		unsigned long long total;
		char tail;
		if (rec->type == TLM_REC_PROP && sscanf(rec->u.prop.key, "device.%d.memor%c", &pd, &tail) == 2 &&
		    tail == 'y' && sscanf(rec->u.prop.value, "%llu", &total) == 1 && pd >= 0 && pd < 32768) {
			size_t di = dev_of(&r, pd);
			if (di != SIZE_MAX)
				t->dev[di].total = total;
		}
		if (rec->type == TLM_REC_DEVMEM && !(rec->u.devmem.flags & TLM_DEVMEM_F_BEFORE) &&
		    rec->u.devmem.device >= 0 && rec->u.devmem.device < 32768) {
			/* what the process held plus what the driver had free: the
			 * device less its context and other processes' memory */
			size_t di = dev_of(&r, rec->u.devmem.device);
			if (di != SIZE_MAX) {
				uint64_t m = r.used[di] * WI_PAGE + rec->u.devmem.free / WI_PAGE * WI_PAGE;
				if (!t->dev[di].sampled || m < t->dev[di].sampled)
					t->dev[di].sampled = m;
			}
		}
		if (rec->type != TLM_REC_EVENT)
			continue;
		if (rec->u.ev.kind == TLM_KIND_BLOCK)
			block_event(&r, &rec->u.ev, t0);
		else
			driver_event(&r, &rec->u.ev, t0);
		if (r.nomem)
			goto nomem;
	}
	if (settle(&r))
		goto nomem;
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory reading %s", path);
out:
	for (size_t i = 0; i < t->ndev && r.blocks; i++)
		tlm__wi_table_free(&r.blocks[i]);
	free(r.blocks);
	free(r.used);
	free(r.thr_dev);
	free(r.ev);
	free(r.live);
	free(rec);
	tlm_reader_close(rd);
	if (rc)
		tlm__wi_trace_free(t);
	return rc;
}

void tlm__wi_trace_free(struct wi_trace *t)
{
	for (size_t i = 0; i < t->ndev; i++) {
		free(t->dev[i].op);
		free(t->dev[i].ev);
	}
	free(t->dev);
	memset(t, 0, sizeof *t);
}
