/* SPDX-License-Identifier: MIT */
/*
 * trace_in.c - what a replay needs from a trace, record by record, in one
 * pass (replay_int.h, struct wi_feed): per device the block requests in order
 * (the tap's ALLOC, FREE and OOM events), the memory other code took from the
 * driver meanwhile, the allocator's own driver calls (for the check), and
 * the device's memory: what the process held from the driver plus the free
 * memory the driver reported, at failed allocations and device memory
 * samples.
 *
 * A driver allocation is the allocator's when a block lies inside it (a
 * cudaMalloc segment, or an address range reserved for an expandable segment
 * and the mappings inside it); the rest is others' memory. The allocator
 * makes its segment inside a malloc, under its lock, and reports the block
 * before any other block of that device: so the driver events since a
 * device's last block op wait in its window and are classed when the next
 * block op comes. A reserved range with nothing mapped (an OOM right after
 * the reservation) waits longer: the calls after it wait with it for the
 * check, up to WI_MAX_HELD. Memory: the live blocks, driver objects and
 * windows, each bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/replay_int.h"
#include "common/grow.h"

#define WINDOW_MAX 4096  /* driver events without a block op in between: classed then */
#define RANGES_MAX 4096  /* reserved ranges live at once */

enum cls { PEND = 0, MINE, OTHER };

struct item {               /* a live driver object */
	uint64_t key, size;     /* DEVICE: address; PHYSICAL: handle; RESERVE: start */
	size_t range;           /* PHYSICAL: the range item it is mapped into + 1, 0 none */
	uint32_t held;          /* RESERVE: calls waiting for its class */
	int16_t dev;            /* its device's ordinal, -1 not known yet */
	uint8_t kind, cls;
	bool mapped, used, dead;/* mapped: RESERVE with a mapping; dead: freed, kept while referenced */
};

struct pend {               /* a driver event waiting for the next block op */
	uint64_t addr, size;
	size_t item;            /* SIZE_MAX none */
	uint8_t kind, op;
	bool failed;
};

struct held {               /* a call for the check, in order */
	struct wi_devev e;
	size_t item;            /* the range whose class decides it, SIZE_MAX: the allocator's */
};

struct fdev {
	struct wi_facts f;
	struct wi_table blocks; /* live block address -> 1 */
	uint64_t used;          /* driver pages held (anyone's) */
	uint64_t nop;           /* block ops so far */
	uint64_t empty_at;      /* the position whose first call was seen, + 1 */
	struct pend *win;
	size_t nwin, capwin;
	struct held *held;
	size_t hhead, nheld, capheld;
	bool started;
};

struct wi_feed {
	struct wi_sink sink;
	uint64_t t0;
	struct fdev *dev;
	size_t ndev;
	struct item *it;
	size_t nit, capit, freeit; /* freeit: a hint where a free slot may be */
	struct wi_table by_addr;   /* DEVICE items: address -> item + 1 */
	struct wi_table by_handle; /* PHYSICAL items: handle -> item + 1 */
	size_t ranges[RANGES_MAX]; /* live RESERVE items */
	size_t nranges;
	struct pend unplaced[16];  /* ranges reserved before their thread named a device */
	size_t nunplaced;
	int16_t *thr_dev;          /* per trace thread: the device of its last event */
	size_t nthr;
	char conf[256];
	bool has_conf, async_allocs, nomem;
	char err[200];             /* a limit reached */
};

static uint64_t pages(uint64_t size)
{
	return (size + WI_PAGE - 1) / WI_PAGE;
}

static int limit(struct wi_feed *r, const char *what)
{
	snprintf(r->err, sizeof r->err, "%s", what);
	return -1;
}

static size_t dev_of(struct wi_feed *r, int device)
{
	for (size_t i = 0; i < r->ndev; i++)
		if (r->dev[i].f.device == device)
			return i;
	if (r->ndev == WI_MAX_DEVICES) {
		limit(r, "more than 64 devices");
		return SIZE_MAX;
	}
	struct fdev *d = realloc(r->dev, (r->ndev + 1) * sizeof *d);
	if (!d) {
		r->nomem = true;
		return SIZE_MAX;
	}
	r->dev = d;
	memset(&d[r->ndev], 0, sizeof *d);
	d[r->ndev].f.device = device;
	d[r->ndev].f.totals = true;
	return r->ndev++;
}

static size_t item_new(struct wi_feed *r, uint8_t kind, uint64_t key, uint64_t size)
{
	size_t i = r->freeit;
	while (i < r->nit && r->it[i].used)
		i++;
	if (i == r->nit) {
		if (r->nit == (size_t)WI_MAX_LIVE * 4) {
			limit(r, "more than 1048576 driver allocations live at once");
			return SIZE_MAX;
		}
		if (r->nit == r->capit && tlm__grow(&r->it, &r->capit, r->nit + 1, sizeof *r->it, 256)) {
			r->nomem = true;
			return SIZE_MAX;
		}
		r->nit++;
	}
	r->freeit = i + 1;
	r->it[i] = (struct item){key, size, 0, 0, -1, kind, PEND, false, true, false};
	return i;
}

static void item_release(struct wi_feed *r, size_t i)
{
	struct item *x = &r->it[i];
	x->dead = true;
	if (x->held)
		return; /* calls still wait for its class */
	x->used = false;
	if (i < r->freeit)
		r->freeit = i;
}

static size_t range_at(const struct wi_feed *r, uint64_t addr)
{
	for (size_t k = r->nranges; k-- > 0;) {
		const struct item *x = &r->it[r->ranges[k]];
		if (addr >= x->key && addr - x->key < (x->size ? x->size : 1))
			return r->ranges[k];
	}
	return SIZE_MAX;
}

static void range_drop(struct wi_feed *r, size_t i)
{
	for (size_t k = 0; k < r->nranges; k++)
		if (r->ranges[k] == i) {
			r->ranges[k] = r->ranges[--r->nranges];
			return;
		}
}

/* The allocator reserves an expandable segment's range inside a malloc for
 * that device, on the thread that allocates: the device its thread used last. */
static void note_thread(struct wi_feed *r, uint32_t thread, int device)
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

static int push_win(struct wi_feed *r, struct fdev *d, const struct pend *p)
{
	if (d->nwin == d->capwin && tlm__grow(&d->win, &d->capwin, d->nwin + 1, sizeof *d->win, 64)) {
		r->nomem = true;
		return -1;
	}
	d->win[d->nwin++] = *p;
	if (p->item != SIZE_MAX && r->it[p->item].dev < 0)
		r->it[p->item].dev = (int16_t)d->f.device;
	return 0;
}

static int push_held(struct wi_feed *r, struct fdev *d, uint8_t what, uint64_t addr, uint64_t size, size_t item)
{
	if (d->hhead + d->nheld == d->capheld) {
		if (d->hhead) {
			memmove(d->held, d->held + d->hhead, d->nheld * sizeof *d->held);
			d->hhead = 0;
		} else if (tlm__grow(&d->held, &d->capheld, d->capheld + 1, sizeof *d->held, 64)) {
			r->nomem = true;
			return -1;
		}

	}
	d->held[d->hhead + d->nheld++] = (struct held){{d->nop, addr, size, what}, item};
	if (item != SIZE_MAX)
		r->it[item].held++;
	return 0;
}

/* Hands the calls whose class is known to the sink, in order; a range that
 * keeps too many calls waiting is taken for the allocator's. */
static int flush_held(struct wi_feed *r, struct fdev *d)
{
	while (d->nheld) {
		struct held *h = &d->held[d->hhead];
		struct item *x = h->item != SIZE_MAX ? &r->it[h->item] : NULL;
		if (x && x->cls == PEND) {
			if (d->nheld < WI_MAX_HELD)
				break;
			x->cls = MINE;
		}
		if ((!x || x->cls == MINE) && r->sink.call(r->sink.ctx, &d->f, &h->e))
			return -1;
		if (x && !--x->held && x->dead)
			item_release(r, h->item);
		d->hhead++;
		d->nheld--;
	}
	if (!d->nheld)
		d->hhead = 0;
	return 0;
}

static int emit_op(struct wi_feed *r, struct fdev *d, uint8_t type, uint64_t addr, uint64_t size)
{
	struct wi_op o = {0, addr, size, 0, 0, 0, type, 0};
	return r->sink.op(r->sink.ctx, &d->f, &o);
}

/* Classes the window's driver events now that block op `next` (NULL: none,
 * the end or a full window) comes, and hands on what follows from them:
 * the allocator's calls, others' memory, an inferred empty_cache(). */
static int resolve(struct wi_feed *r, size_t di, const struct wi_op *next)
{
	struct fdev *d = &r->dev[di];
	bool req = next && (next->type == WI_ALLOC || next->type == WI_OOM);
	bool blk = next && next->type == WI_ALLOC;
	/* a segment or a range with a mapping is the allocator's when the block
	 * lands in it, else others' (a range with nothing mapped waits) */
	for (size_t k = 0; k < d->nwin; k++) {
		struct pend *p = &d->win[k];
		struct item *x = p->item != SIZE_MAX ? &r->it[p->item] : NULL;
		if (!x || x->cls != PEND || p->op != TLM_OP_ALLOC || p->failed)
			continue;
		bool in = blk && next->addr >= x->key && next->addr - x->key < x->size;
		if (p->kind == TLM_KIND_DEVICE)
			x->cls = in ? MINE : OTHER;
		else if (p->kind == TLM_KIND_VMM_RESERVE && (in || x->mapped))
			x->cls = in ? MINE : OTHER;
	}
	for (size_t i = 0; i < r->nranges; i++) { /* a range reserved before, mapped now */
		struct item *x = &r->it[r->ranges[i]];
		if (x->cls == PEND && blk && next->addr >= x->key && next->addr - x->key < x->size)
			x->cls = MINE;
	}
	size_t before = d->nheld;
	for (size_t k = 0; k < d->nwin; k++) {
		struct pend *p = &d->win[k];
		struct item *x = p->item != SIZE_MAX ? &r->it[p->item] : NULL;
		int rc = 0;
		bool alloc = p->op == TLM_OP_ALLOC;
		if (p->failed) {
			if (p->kind == TLM_KIND_DEVICE && req && tlm_wi_allocation_size(next->size) == p->size)
				rc = push_held(r, d, WI_SEG_FAIL, 0, p->size, SIZE_MAX);
			else if (p->kind == TLM_KIND_VMM_PHYSICAL && req &&
				 (p->size == TLM_WI_SMALL_BUFFER || p->size == TLM_WI_LARGE_BUFFER))
				rc = push_held(r, d, WI_CREATE_FAIL, 0, p->size, SIZE_MAX);
		} else if (!x) {
			continue; /* a free of something tlm never saw allocated */
		} else if (p->kind == TLM_KIND_DEVICE) {
			if (x->cls == MINE)
				rc = push_held(r, d, alloc ? WI_SEG_ALLOC : WI_SEG_FREE, x->key, x->size, SIZE_MAX);
			else
				rc = emit_op(r, d, alloc ? WI_FALLOC : WI_FFREE, x->key, x->size);
			if (!alloc)
				item_release(r, p->item);
		} else if (p->kind == TLM_KIND_VMM_PHYSICAL) {
			if (alloc && x->cls == PEND) {
				const struct item *g = x->range ? &r->it[x->range - 1] : NULL;
				x->cls = g && g->cls == MINE ? MINE : OTHER;
			}
			if (x->cls == OTHER)
				rc = emit_op(r, d, alloc ? WI_FALLOC : WI_FFREE, x->key, x->size);
			if (!alloc)
				item_release(r, p->item);
		} else if (p->kind == TLM_KIND_VMM_RESERVE) {
			if (alloc && x->cls != OTHER)
				rc = push_held(r, d, WI_RESERVE, x->key, x->size, p->item);
			else if (!alloc && x->cls == MINE)
				rc = push_held(r, d, WI_RESERVE_FREE, x->key, x->size, SIZE_MAX);
			if (!alloc) {
				if (x->cls == PEND)
					x->cls = OTHER; /* freed with nothing ever inside: not the allocator's */
				item_release(r, p->item);
			}
		} else if (p->kind == TLM_KIND_VMM_MAPPING && x->cls == MINE) {
			rc = push_held(r, d, alloc ? WI_MAP : WI_UNMAP, p->addr, p->size, SIZE_MAX);
			d->f.vmm = true;
		}
		if (rc)
			return -1;
	}
	d->nwin = 0;
	/* torch.cuda.empty_cache(): the first allocator call at this position
	 * gives memory back, without a failed allocation first (the malloc of
	 * an allocation frees cached segments only after one, or, with garbage
	 * collection, on its own: 1 = ambiguous, the replay decides) */
	bool gives = false;
	if (d->nheld > before && d->empty_at != d->nop + 1) {
		uint8_t w = d->held[d->hhead + before].e.what;
		gives = w == WI_SEG_FREE || w == WI_UNMAP || w == WI_RESERVE_FREE;
		d->empty_at = d->nop + 1;
	}
	if (next && !d->started) {
		d->started = true;
		if (r->sink.first_op(r->sink.ctx, &d->f))
			return -1;
	}
	if (!d->started) /* no block op yet: the calls and others' memory wait for it */
		return flush_held(r, d);
	if (flush_held(r, d))
		return -1;
	if (gives && emit_op(r, d, WI_EMPTY, 0, req ? 1 : 2))
		return -1;
	return 0;
}

static void memory_figure(struct fdev *d, uint64_t *figure, uint64_t free_bytes)
{
	uint64_t m = (d->used + free_bytes / WI_PAGE) * WI_PAGE;
	if (!*figure || m < *figure)
		*figure = m;
}

static int block_event(struct wi_feed *r, const struct tlm_event *e)
{
	size_t di = dev_of(r, e->device);
	if (di == SIZE_MAX)
		return -1;
	note_thread(r, e->thread, e->device);
	struct fdev *d = &r->dev[di];
	struct wi_op o = {e->time_ns - r->t0, e->addr, e->size, e->aux, e->stream, 0, 0, 0};
	if (e->op == TLM_OP_ALLOC && e->result) {
		o.type = WI_OOM;
		o.addr = 0;
		d->f.nooms++;
	} else if (e->op == TLM_OP_ALLOC) {
		o.type = WI_ALLOC;
		o.stack = e->stack_id;
		if (d->blocks.n >= WI_MAX_LIVE)
			return limit(r, "more than 262144 blocks live at once on one device");
		if (tlm__wi_table_put(&d->blocks, e->addr, 1)) {
			r->nomem = true;
			return -1;
		}
		d->f.nalloc++;
	} else if (e->op == TLM_OP_FREE) {
		if (!tlm__wi_table_take(&d->blocks, e->addr))
			return 0; /* allocated before tlm started: the model never had it */
		o.type = WI_FREE;
		d->f.nfree++;
	} else {
		return 0;
	}
	if (e->flags & TLM_EVF_NO_TOTALS)
		d->f.totals = false;
	if (e->stream > d->f.peak_reserved)
		d->f.peak_reserved = e->stream;
	if (e->aux > d->f.peak_allocated)
		d->f.peak_allocated = e->aux;
	if (o.type != WI_FREE && e->size > d->f.biggest)
		d->f.biggest = e->size;
	if (resolve(r, di, &o) || r->sink.op(r->sink.ctx, &d->f, &o))
		return -1;
	d->nop++;
	return 0;
}

static int driver_event(struct wi_feed *r, const struct tlm_event *e)
{
	int k = e->kind;
	if (k != TLM_KIND_DEVICE && k != TLM_KIND_VMM_PHYSICAL && k != TLM_KIND_VMM_RESERVE &&
	    k != TLM_KIND_VMM_MAPPING)
		return 0;
	if (e->op != TLM_OP_ALLOC && e->op != TLM_OP_FREE)
		return 0;
	if (e->api == TLM_API_cudaMallocAsync || e->api == TLM_API_cudaMallocAsync_ptsz ||
	    e->api == TLM_API_cuMemAllocAsync || e->api == TLM_API_cuMemAllocAsync_ptsz)
		r->async_allocs = true;
	bool alloc = e->op == TLM_OP_ALLOC;
	struct pend p = {e->addr, e->size, SIZE_MAX, (uint8_t)k, e->op, alloc && e->result != 0};
	/* what it is or belongs to, and so its device: cuMemAddressReserve and
	 * cuMemMap name none; a free may not either */
	int device = e->device;
	size_t x = SIZE_MAX;
	if (k == TLM_KIND_VMM_MAPPING) {
		x = range_at(r, e->addr);
		uint64_t h = alloc ? tlm__wi_table_get(&r->by_handle, e->aux) : 0;
		if (h && x != SIZE_MAX) {
			r->it[h - 1].range = x + 1;
			r->it[x].mapped = true;
		}
		if (h && r->it[h - 1].dev >= 0) /* a mapping takes its handle's device */
			device = r->it[h - 1].dev;
	} else if (k == TLM_KIND_VMM_RESERVE && !alloc) {
		x = range_at(r, e->addr);
		if (x != SIZE_MAX && r->it[x].key != e->addr)
			x = SIZE_MAX;
		if (x != SIZE_MAX)
			range_drop(r, x);
	} else if (!alloc) {
		uint64_t v = tlm__wi_table_take(k == TLM_KIND_DEVICE ? &r->by_addr : &r->by_handle, e->addr);
		x = v ? v - 1 : SIZE_MAX;
	}
	p.item = x;
	/* a free or a mapping takes its object's device; a range its thread's */
	if (device < 0 && x != SIZE_MAX && r->it[x].dev >= 0)
		device = r->it[x].dev;
	if (device < 0 && k == TLM_KIND_VMM_RESERVE && alloc && e->thread < r->nthr)
		device = r->thr_dev[e->thread];
	if (!p.failed && alloc) {
		if (k == TLM_KIND_DEVICE || k == TLM_KIND_VMM_PHYSICAL) {
			x = item_new(r, (uint8_t)k, e->addr, e->size);
			if (x == SIZE_MAX)
				return -1;
			if (tlm__wi_table_put(k == TLM_KIND_DEVICE ? &r->by_addr : &r->by_handle, e->addr, x + 1)) {
				r->nomem = true;
				return -1;
			}
		} else if (k == TLM_KIND_VMM_RESERVE) {
			if (r->nranges == RANGES_MAX)
				return limit(r, "more than 4096 address ranges reserved at once");
			x = item_new(r, (uint8_t)k, e->addr, e->size);
			if (x == SIZE_MAX)
				return -1;
			r->ranges[r->nranges++] = x;
		}
		p.item = x;
	}
	if (device < 0) { /* a range before its thread named a device: with its next event */
		if (r->nunplaced == sizeof r->unplaced / sizeof r->unplaced[0])
			return 0;
		r->unplaced[r->nunplaced++] = p;
		return 0;
	}
	size_t di = dev_of(r, device);
	if (di == SIZE_MAX)
		return -1;
	note_thread(r, e->thread, device);
	struct fdev *d = &r->dev[di];
	for (size_t i = 0; i < r->nunplaced; i++)
		if (push_win(r, d, &r->unplaced[i]))
			return -1;
	r->nunplaced = 0;
	if (k == TLM_KIND_DEVICE || k == TLM_KIND_VMM_PHYSICAL) {
		if (p.failed)
			memory_figure(d, &d->f.failure, e->device_free);
		else if (alloc)
			d->used += pages(e->size);
		else if (x != SIZE_MAX)
			d->used -= pages(r->it[x].size) <= d->used ? pages(r->it[x].size) : d->used;
	}
	if (alloc && !p.failed && k != TLM_KIND_VMM_PHYSICAL && (!d->f.va_base || e->addr < d->f.va_base))
		d->f.va_base = e->addr / WI_PAGE * WI_PAGE;
	if (alloc && !p.failed && k == TLM_KIND_VMM_RESERVE && (!d->f.reserve_min || e->size < d->f.reserve_min))
		d->f.reserve_min = e->size;
	if (push_win(r, d, &p))
		return -1;
	return d->nwin >= WINDOW_MAX ? resolve(r, di, NULL) : 0;
}

struct wi_feed *tlm__wi_feed_new(const struct wi_sink *sink, uint64_t t0)
{
	struct wi_feed *r = calloc(1, sizeof *r);
	if (r) {
		r->sink = *sink;
		r->t0 = t0;
	}
	return r;
}

static int done(struct wi_feed *r, int rc, char *err, size_t errlen)
{
	if (r->nomem)
		snprintf(err, errlen, "out of memory");
	else if (r->err[0])
		snprintf(err, errlen, "%s: stopped (tlm whatif keeps the live state in memory)", r->err);
	return rc || r->nomem || r->err[0] ? -1 : 0;
}

int tlm__wi_feed_record(struct wi_feed *r, const struct tlm_record *rec, char *err, size_t errlen)
{
	int rc = 0;
	if (rec->type == TLM_REC_PROP && !strcmp(rec->u.prop.key, "torch.alloc_conf")) {
		size_t n = strnlen(rec->u.prop.value, sizeof r->conf - 1);
		memcpy(r->conf, rec->u.prop.value, n);
		r->conf[n] = 0;
		r->has_conf = true;
	}
	int pd;
	unsigned long long total;
	char tail;
	if (rec->type == TLM_REC_PROP && sscanf(rec->u.prop.key, "device.%d.memor%c", &pd, &tail) == 2 &&
	    tail == 'y' && sscanf(rec->u.prop.value, "%llu", &total) == 1 && pd >= 0 && pd < 32768) {
		size_t di = dev_of(r, pd);
		if (di != SIZE_MAX)
			r->dev[di].f.total = total;
	}
	if (rec->type == TLM_REC_DEVMEM && !(rec->u.devmem.flags & TLM_DEVMEM_F_BEFORE) &&
	    rec->u.devmem.device >= 0 && rec->u.devmem.device < 32768) {
		/* what the process held plus what the driver had free: the device
		 * less its context and other processes' memory */
		size_t di = dev_of(r, rec->u.devmem.device);
		if (di != SIZE_MAX)
			memory_figure(&r->dev[di], &r->dev[di].f.sampled, rec->u.devmem.free);
	}
	if (rec->type == TLM_REC_EVENT)
		rc = rec->u.ev.kind == TLM_KIND_BLOCK ? block_event(r, &rec->u.ev) : driver_event(r, &rec->u.ev);
	return done(r, rc, err, errlen);
}

int tlm__wi_feed_end(struct wi_feed *r, char *err, size_t errlen)
{
	int rc = 0;
	for (size_t i = 0; i < r->ndev && !rc; i++) {
		rc = resolve(r, i, NULL);
		for (size_t k = 0; k < r->nranges; k++) /* ranges that never held a block: not the allocator's */
			if (r->it[r->ranges[k]].cls == PEND)
				r->it[r->ranges[k]].cls = OTHER;
		if (!rc && r->dev[i].started)
			rc = flush_held(r, &r->dev[i]);
	}
	return done(r, rc, err, errlen);
}

const char *tlm__wi_feed_conf(const struct wi_feed *r) { return r->has_conf ? r->conf : NULL; }
bool tlm__wi_feed_async(const struct wi_feed *r) { return r->async_allocs; }
size_t tlm__wi_feed_ndev(const struct wi_feed *r) { return r->ndev; }
const struct wi_facts *tlm__wi_feed_facts(const struct wi_feed *r, size_t i) { return &r->dev[i].f; }

void tlm__wi_feed_free(struct wi_feed *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ndev; i++) {
		tlm__wi_table_free(&r->dev[i].blocks);
		free(r->dev[i].win);
		free(r->dev[i].held);
	}
	free(r->dev);
	free(r->it);
	tlm__wi_table_free(&r->by_addr);
	tlm__wi_table_free(&r->by_handle);
	free(r->thr_dev);
	free(r);
}
