// SPDX-License-Identifier: MIT
/*
 * Stream-ordered memory pools. A pool keeps the physical pages (and VA) of
 * freed blocks cached for its own later allocations, like the real driver's
 * pools; cached pages still count as used in cuMemGetInfo. Cached memory goes
 * back to the device on cuMemPoolTrimTo, at every stream/context synchronise
 * (release threshold 0), and when the pool itself runs short of pages.
 */
#include <stdlib.h>

#include "sim_internal.h"

#define POOL_MAGIC 0x746c6d70u /* "tlmp" */

struct CUmemPoolHandle_st {
	uint32_t magic;
	int dev;
	bool is_default, destroyed;
	uint64_t max_bytes;                 /* CUmemPoolProps.maxSize; 0 = device size */
	uint64_t threshold;                 /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, default 0 */
	uint64_t reserved_high, used_high;  /* watermarks, in bytes */
	int reuse[3];                       /* the three reuse policy flags (not modelled) */
	uint8_t access[SIM_MAX_DEVICES];    /* cuMemPoolSetAccess flags per device (0, 1, 3) */
	uint64_t used_pages, cached_pages; /* in live allocations / in the cache */
	/* Cached blocks: key = pages << 32 | page index in the device VA region,
	 * so the smallest key >= (n << 32) is the best-fitting block (lowest
	 * address among equals). val = block address. */
	struct sim_tree cache;
	struct CUmemPoolHandle_st *next; /* all pools ever created, for sync */
};

/* Pools are never freed: allocations may outlive a destroyed pool and still
 * point at it. `pools` lists every pool; `valid` holds the live handles so a
 * stale or bogus handle is rejected without dereferencing it. */
static struct CUmemPoolHandle_st *pools;
static struct sim_tree valid;

static uint64_t block_key(int dev, uint64_t va, uint64_t pages)
{
	uint64_t idx = (va - SIM_VA_BASE - (uint64_t)dev * SIM_VA_STRIDE) / SIM_PAGE;
	return pages << 32 | idx;
}

static CUmemoryPool pool_new(int dev, bool is_default, uint64_t max_bytes)
{
	CUmemoryPool p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->magic = POOL_MAGIC;
	p->dev = dev;
	p->is_default = is_default;
	p->max_bytes = max_bytes;
	p->reuse[0] = p->reuse[1] = p->reuse[2] = 1; /* the real defaults */
	p->access[dev] = 3;                          /* its own device: read-write */
	p->cache.rng = 0x2545f491u ^ (uint32_t)dev;
	if (!sim_tree_insert(&valid, (uint64_t)(uintptr_t)p, 0, 0)) {
		free(p);
		return NULL;
	}
	p->next = pools;
	pools = p;
	return p;
}

void sim_pools_init_device(int dev)
{
	sim_dev[dev].default_pool = pool_new(dev, true, 0);
	sim_dev[dev].current_pool = sim_dev[dev].default_pool;
}

/* Caller holds sim_lock. */
static CUmemoryPool pool_lookup(CUmemoryPool p)
{
	return p && sim_tree_find(&valid, (uint64_t)(uintptr_t)p) ? p : NULL;
}

/* Return cached blocks, largest first, while the pool keeps at least `keep`
 * bytes reserved (used + cached), the cuMemPoolTrimTo contract. */
static void trim(CUmemoryPool p, uint64_t keep)
{
	uint64_t reserved = (p->used_pages + p->cached_pages) * SIM_PAGE;
	struct sim_node *n = sim_tree_max(&p->cache);
	while (n) {
		uint64_t key = n->key, pages = key >> 32, va = n->val;
		struct sim_node *prev = key ? sim_tree_floor(&p->cache, key - 1) : NULL;
		uint64_t bytes = pages * SIM_PAGE;
		if (reserved - bytes >= keep) {
			sim_tree_remove(&p->cache, key, NULL, NULL);
			sim_block_free(p->dev, va, pages);
			p->cached_pages -= pages;
			reserved -= bytes;
		}
		n = prev; /* still valid: only `key`'s node may have been freed */
	}
}

/* Reuse a cached block that fits (splitting off the rest), else take fresh
 * pages, else give back this pool's cache and try once more. */
static CUresult pool_alloc(CUmemoryPool p, uint64_t bytes, CUdeviceptr *dptr)
{
	uint64_t pages = bytes / SIM_PAGE + (bytes % SIM_PAGE != 0), va;
	struct sim_node *n = sim_tree_ceil(&p->cache, pages << 32);
	CUresult r;
	if (n) {
		uint64_t have = n->key >> 32;
		va = n->val;
		sim_tree_remove(&p->cache, n->key, NULL, NULL);
		if (have > pages) {
			uint64_t rest = va + pages * SIM_PAGE;
			if (!sim_tree_insert(&p->cache, block_key(p->dev, rest, have - pages), 0,
					     rest)) {
				/* keep accounting exact even if the host is out of memory */
				sim_block_free(p->dev, rest, have - pages);
				p->cached_pages -= have - pages;
			}
		}
		p->cached_pages -= pages;
	} else {
		uint64_t limit = p->max_bytes ? p->max_bytes / SIM_PAGE : UINT64_MAX;
		if (p->used_pages + p->cached_pages + pages > limit)
			trim(p, 0);
		if (p->used_pages + p->cached_pages + pages > limit)
			return CUDA_ERROR_OUT_OF_MEMORY;
		r = sim_block_alloc(p->dev, pages, &va);
		if (r == CUDA_ERROR_OUT_OF_MEMORY && p->cached_pages) {
			trim(p, 0);
			r = sim_block_alloc(p->dev, pages, &va);
		}
		if (r)
			return r;
	}
	r = sim_live_add(va, pages * SIM_PAGE, p);
	if (r) {
		sim_block_free(p->dev, va, pages);
		return r;
	}
	p->used_pages += pages;
	*dptr = va;
	return CUDA_SUCCESS;
}

void sim_pool_return(CUmemoryPool p, uint64_t va, uint64_t pages)
{
	p->used_pages -= pages;
	if (p->destroyed || !sim_tree_insert(&p->cache, block_key(p->dev, va, pages), 0, va)) {
		sim_block_free(p->dev, va, pages);
		return;
	}
	p->cached_pages += pages;
}

void sim_pools_sync(int dev)
{
	pthread_mutex_lock(&sim_lock);
	for (CUmemoryPool p = pools; p; p = p->next)
		if (p->dev == dev && !p->destroyed && p->cached_pages)
			trim(p, p->threshold); /* keep up to the release threshold */
	pthread_mutex_unlock(&sim_lock);
}

static void watermarks(CUmemoryPool p);

/* ---- entry points ---- */

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s,
			    bool ptsz)
{
	int dev, cur;
	CUresult r = sim_current_device(&cur);
	if (r)
		return r;
	if (ptsz && !s)
		s = CU_STREAM_PER_THREAD;
	r = sim_stream_device(s, &dev);
	if (r)
		return r;
	if (!dptr || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_stream_capturing(s))
		return SIM_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* graph memory nodes: not modelled */
	pthread_mutex_lock(&sim_lock);
	if (!pool)
		pool = sim_dev[cur].current_pool; /* the current device's */
	else if (!pool_lookup(pool))
		r = CUDA_ERROR_INVALID_VALUE;
	if (!r)
		r = pool_alloc(pool, bytesize, dptr);
	if (!r)
		watermarks(pool);
	pthread_mutex_unlock(&sim_lock);
	return r;
}

CUresult simi_cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_async(dptr, bytesize, NULL, hStream, false);
}
SIM_API(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream),
	(dptr, bytesize, hStream), {dptr, bytesize, hStream});

CUresult simi_cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_async(dptr, bytesize, NULL, hStream, true);
}
SIM_API(cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream),
	(dptr, bytesize, hStream), {dptr, bytesize, hStream});

CUresult simi_cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				     CUstream hStream)
{
	if (!pool)
		return sim_enter(true);
	return alloc_async(dptr, bytesize, pool, hStream, false);
}
SIM_API(cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
	(dptr, bytesize, pool, hStream), {dptr, bytesize, pool, hStream});

CUresult simi_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
					  CUstream hStream)
{
	if (!pool)
		return sim_enter(true);
	return alloc_async(dptr, bytesize, pool, hStream, true);
}
SIM_API(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
	(dptr, bytesize, pool, hStream), {dptr, bytesize, pool, hStream});

static CUresult free_async(CUdeviceptr dptr, CUstream s, bool ptsz)
{
	int dev;
	CUresult r;
	if (ptsz && !s)
		s = CU_STREAM_PER_THREAD;
	r = sim_stream_device(s, &dev);
	if (r)
		return r;
	if (sim_stream_capturing(s))
		return SIM_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return sim_free_async(dptr);
}

CUresult simi_cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return free_async(dptr, hStream, false);
}
SIM_API(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream),
	(dptr, hStream), {dptr, hStream});

CUresult simi_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return free_async(dptr, hStream, true);
}
SIM_API(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream),
	(dptr, hStream), {dptr, hStream});

CUresult sim_cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	CUresult r = sim_enter_device(!pool_out, dev);
	if (r)
		return r;
	*pool_out = sim_dev[dev].default_pool;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetDefaultMemPool);

CUresult simi_cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	CUmemoryPool p;
	CUresult r = sim_enter(!pool || !poolProps ||
			       poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
			       poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE);
	if (r || (r = sim_enter_device(false, poolProps->location.id)))
		return r;
	pthread_mutex_lock(&sim_lock);
	p = pool_new(poolProps->location.id, false, poolProps->maxSize);
	pthread_mutex_unlock(&sim_lock);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pool = p;
	return CUDA_SUCCESS;
}
SIM_API(cuMemPoolCreate, (CUmemoryPool *pool, const CUmemPoolProps *poolProps),
	(pool, poolProps), {(void **)pool, poolProps});

CUresult simi_cuMemPoolDestroy(CUmemoryPool pool)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (!pool_lookup(pool) || pool->is_default) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		/* Cached memory goes back now; blocks still allocated go back to
		 * the device when they are freed (sim_pool_return). */
		trim(pool, 0);
		pool->destroyed = true;
		if (sim_dev[pool->dev].current_pool == pool)
			sim_dev[pool->dev].current_pool = sim_dev[pool->dev].default_pool;
		sim_tree_remove(&valid, (uint64_t)(uintptr_t)pool, NULL, NULL);
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemPoolDestroy, (CUmemoryPool pool),
	(pool), {pool});

CUresult simi_cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (!pool_lookup(pool))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		trim(pool, minBytesToKeep);
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemPoolTrimTo, (CUmemoryPool pool, size_t minBytesToKeep),
	(pool, minBytesToKeep), {pool, minBytesToKeep});

long long sim_tlm_sim_pool_cached_bytes(CUmemoryPool pool)
{
	long long n = -1;
	if (sim_enter(false))
		return -1;
	pthread_mutex_lock(&sim_lock);
	if (pool_lookup(pool))
		n = (long long)(pool->cached_pages * SIM_PAGE);
	pthread_mutex_unlock(&sim_lock);
	return n;
}
SIM_EXPORT(tlm_sim_pool_cached_bytes);

/* ---- pool attributes and the device's current pool ---- */

static void watermarks(CUmemoryPool p)
{
	uint64_t used = p->used_pages * SIM_PAGE, reserved = used + p->cached_pages * SIM_PAGE;
	if (used > p->used_high)
		p->used_high = used;
	if (reserved > p->reserved_high)
		p->reserved_high = reserved;
}

/* CUmemPool_attribute: 1..3 reuse flags (int), 4 release threshold, 5/6
 * reserved current/high, 7/8 used current/high (cuuint64_t). The high marks
 * are updated at every allocation from the pool. */
CUresult sim_cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value)
{
	CUresult r = sim_enter(!value);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	CUmemoryPool p = pool_lookup(pool);
	if (!p)
		r = CUDA_ERROR_INVALID_VALUE;
	else {
		watermarks(p);
		uint64_t used = p->used_pages * SIM_PAGE, reserved = used + p->cached_pages * SIM_PAGE;
		switch (attr) {
		case 1: case 2: case 3: *(int *)value = p->reuse[attr - 1]; break;
		case 4: *(uint64_t *)value = p->threshold; break;
		case 5: *(uint64_t *)value = reserved; break;
		case 6: *(uint64_t *)value = p->reserved_high; break;
		case 7: *(uint64_t *)value = used; break;
		case 8: *(uint64_t *)value = p->used_high; break;
		default: r = CUDA_ERROR_INVALID_VALUE;
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemPoolGetAttribute);

/* Settable: the reuse flags (kept, not modelled), the release threshold
 * (modelled: a synchronisation keeps up to that many bytes reserved) and
 * resetting the high watermarks to 0. */
CUresult sim_cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value)
{
	CUresult r = sim_enter(!value);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	CUmemoryPool p = pool_lookup(pool);
	if (!p)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (attr >= 1 && attr <= 3)
		p->reuse[attr - 1] = *(int *)value != 0;
	else if (attr == 4)
		p->threshold = *(uint64_t *)value;
	else if ((attr == 6 || attr == 8) && *(uint64_t *)value == 0)
		*(attr == 6 ? &p->reserved_high : &p->used_high) = 0;
	else
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemPoolSetAttribute);

CUresult sim_cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CUresult r = sim_enter_device(!pool, dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	*pool = sim_dev[dev].current_pool;
	pthread_mutex_unlock(&sim_lock);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetMemPool);

/* cuMemAllocAsync then allocates from `pool` on that device. */
CUresult sim_cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	CUresult r = sim_enter_device(false, dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	CUmemoryPool p = pool_lookup(pool);
	if (!p || p->destroyed || p->dev != dev)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		sim_dev[dev].current_pool = p;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuDeviceSetMemPool);

/* ---- access from other devices (CUmemAccessDesc: location type, id, flags) ---- */

struct access_desc {
	int type, id; /* CU_MEM_LOCATION_TYPE_DEVICE = 1 */
	int flags;    /* 0 none, 1 read, 3 read-write */
};

CUresult sim_cuMemPoolSetAccess(CUmemoryPool pool, const struct access_desc *map, size_t count)
{
	CUresult r = sim_enter(!map && count);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (!pool_lookup(pool))
		r = CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count && !r; i++)
		if (map[i].type != 1 || !sim_valid_device(map[i].id) ||
		    (map[i].flags != 0 && map[i].flags != 1 && map[i].flags != 3) ||
		    (map[i].id == pool->dev && map[i].flags != 3)) /* its own device stays RW */
			r = CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count && !r; i++)
		pool->access[map[i].id] = (uint8_t)map[i].flags;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemPoolSetAccess);

CUresult sim_cuMemPoolGetAccess(int *flags, CUmemoryPool pool, const struct access_desc *loc)
{
	CUresult r = sim_enter(!flags || !loc || loc->type != 1 || !sim_valid_device(loc->id));
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (!pool_lookup(pool))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*flags = pool->access[loc->id];
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemPoolGetAccess);
