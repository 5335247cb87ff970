// SPDX-License-Identifier: MIT
/*
 * Simulated device memory: physical pages per device, device VA blocks, the
 * table of live device allocations, and the plain allocation entry points
 * (cuMemAlloc/Pitch/Free, managed and pinned host memory, cuMemGetInfo).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "sim_internal.h"
#include "sim_machine.h"

/* Live device allocations (cuMemAlloc*, pool allocations): key = address,
 * len = bytes held (whole pages), val = owning struct CUmemPoolHandle_st * or 0. */
static struct sim_tree live;
/* Managed and pinned host allocations: key = address, len = mapped bytes;
 * in `host`, val = 1 marks a registered range (cuMemHostRegister), which is
 * the caller's memory and never unmapped here. */
static struct sim_tree managed, host;

static uint64_t pages_for(uint64_t bytes)
{
	return bytes / SIM_PAGE + (bytes % SIM_PAGE != 0);
}

int sim_va_device(uint64_t va)
{
	if (va < SIM_VA_BASE)
		return -1;
	uint64_t d = (va - SIM_VA_BASE) / SIM_VA_STRIDE;
	return d < (uint64_t)sim_ndev ? (int)d : -1;
}

CUresult sim_block_alloc(int dev, uint64_t pages, uint64_t *va)
{
	struct sim_device *d = &sim_dev[dev];
	/* the machine: every process's holdings and contexts on dev */
	if (!sim_machine_take(dev, pages))
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* Free VA always exceeds free physical memory by far (see SIM_VA_STRIDE),
	 * so with pages available a VA block is found unless the host is out of
	 * memory for tree nodes. */
	if (!sim_vas_alloc(&d->va, pages * SIM_PAGE, SIM_PAGE, 0, va)) {
		sim_machine_give(dev, pages);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	d->used_pages += pages;
	return CUDA_SUCCESS;
}

void sim_block_free(int dev, uint64_t va, uint64_t pages)
{
	sim_vas_release(&sim_dev[dev].va, va, pages * SIM_PAGE);
	sim_dev[dev].used_pages -= pages;
	sim_machine_give(dev, pages);
}

CUresult sim_live_add(uint64_t va, uint64_t bytes, struct CUmemPoolHandle_st *pool)
{
	return sim_tree_insert(&live, va, bytes, (uintptr_t)pool) ? CUDA_SUCCESS
								    : CUDA_ERROR_OUT_OF_MEMORY;
}

bool sim_live_pooled(uint64_t base)
{
	struct sim_node *n = sim_tree_find(&live, base);
	return n && n->val;
}

bool sim_live_span(uint64_t p, uint64_t *base, uint64_t *len)
{
	struct sim_node *n = sim_tree_floor(&live, p);
	if (!n || p - n->key >= n->len)
		return false;
	*base = n->key;
	*len = n->len;
	return true;
}

/* cuMemAlloc's core; caller holds sim_lock. */
static CUresult alloc_plain(int dev, uint64_t bytes, CUdeviceptr *dptr)
{
	uint64_t va, pages = pages_for(bytes);
	CUresult r = sim_block_alloc(dev, pages, &va);
	if (r)
		return r;
	r = sim_live_add(va, pages * SIM_PAGE, NULL);
	if (r) {
		sim_block_free(dev, va, pages);
		return r;
	}
	*dptr = va;
	return CUDA_SUCCESS;
}

CUresult simi_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	int dev;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	if (!dptr || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	r = alloc_plain(dev, bytesize, dptr);
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize),
	(dptr, bytesize), {dptr, bytesize});

CUresult simi_cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				size_t Height, unsigned int ElementSizeBytes)
{
	int dev;
	size_t pitch;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0 ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (WidthInBytes > SIZE_MAX - 511)
		return CUDA_ERROR_INVALID_VALUE;
	pitch = (WidthInBytes + 511) & ~(size_t)511; /* rows start 512-byte aligned */
	if (Height > SIZE_MAX / pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&sim_lock);
	r = alloc_plain(dev, (uint64_t)pitch * Height, dptr);
	pthread_mutex_unlock(&sim_lock);
	if (!r)
		*pPitch = pitch;
	return r;
}
SIM_API(cuMemAllocPitch_v2, (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
			    unsigned int ElementSizeBytes),
	(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes), {dptr, pPitch, WidthInBytes, Height, ElementSizeBytes});

/* Free a device or pool allocation; `allow_managed` says whether a managed
 * pointer is acceptable (cuMemFree yes, cuMemFreeAsync no). */
static CUresult free_any(CUdeviceptr dptr, bool allow_managed)
{
	uint64_t len = 0;
	uintptr_t pool = 0;
	pthread_mutex_lock(&sim_lock);
	if (sim_tree_remove(&live, dptr, &len, &pool)) {
		sim_backing_free(dptr, len);
		if (pool)
			sim_pool_return((struct CUmemPoolHandle_st *)pool, dptr, len / SIM_PAGE);
		else
			sim_block_free(sim_va_device(dptr), dptr, len / SIM_PAGE);
		pthread_mutex_unlock(&sim_lock);
		return CUDA_SUCCESS;
	}
	if (allow_managed && sim_tree_remove(&managed, dptr, &len, NULL)) {
		pthread_mutex_unlock(&sim_lock);
		munmap((void *)(uintptr_t)dptr, len);
		return CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&sim_lock);
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult simi_cuMemFree_v2(CUdeviceptr dptr)
{
	/* TLM_SIM_SLOW_FREE_MS: on a thread named "slowfree", cuMemFree_v2
	 * blocks that long first (a free that waits, as a device synchronisation
	 * does); for tests of threads stuck inside a free. Read once: getenv and
	 * its strncmp were 539 instructions per free (callgrind, bench_shim).
	 * Threads racing on the first read store the same value. */
	static _Atomic long slow_ms = -1; /* -1: not read yet; 0: off */
	long ms = atomic_load_explicit(&slow_ms, memory_order_relaxed);
	if (ms < 0) {
		const char *slow = getenv("TLM_SIM_SLOW_FREE_MS");
		ms = slow && *slow ? atol(slow) : 0;
		ms = ms > 0 ? ms : 0;
		atomic_store_explicit(&slow_ms, ms, memory_order_relaxed);
	}
	char name[16] = "";
	if (ms > 0 && prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && !strcmp(name, "slowfree")) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		nanosleep(&ts, NULL); /* a cancellation point */
	}
	int dev;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	if (dptr == 0)
		return CUDA_SUCCESS; /* as the real driver: cuBLAS relies on it */
	return free_any(dptr, true);
}
SIM_API(cuMemFree_v2, (CUdeviceptr dptr),
	(dptr), {dptr});

/* cuMemFreeAsync's core (the pool file owns the entry points). */
CUresult sim_free_async(CUdeviceptr dptr)
{
	return free_any(dptr, false);
}

/* ---- host-backed memory: managed and pinned ---- */

static CUresult host_map(struct sim_tree *table, size_t bytesize, void **out)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t len;
	void *p;
	if (bytesize > SIZE_MAX - pg)
		return CUDA_ERROR_OUT_OF_MEMORY;
	len = (bytesize + pg - 1) / pg * pg;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&sim_lock);
	bool ok = sim_tree_insert(table, (uint64_t)(uintptr_t)p, len, 0);
	pthread_mutex_unlock(&sim_lock);
	if (!ok) {
		munmap(p, len);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = p;
	return CUDA_SUCCESS;
}

CUresult simi_cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	int dev;
	void *p;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	if (!dptr || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	r = host_map(&managed, bytesize, &p);
	if (!r)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}
SIM_API(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags),
	(dptr, bytesize, flags), {dptr, bytesize, flags});

CUresult simi_cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	int dev;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	if (!pp || bytesize == 0 ||
	    (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				 CU_MEMHOSTALLOC_WRITECOMBINED)))
		return CUDA_ERROR_INVALID_VALUE;
	return host_map(&host, bytesize, pp);
}
SIM_API(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags),
	(pp, bytesize, Flags), {pp, bytesize, Flags});

CUresult simi_cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return simi_cuMemHostAlloc(pp, bytesize, 0);
}
SIM_API(cuMemAllocHost_v2, (void **pp, size_t bytesize),
	(pp, bytesize), {pp, bytesize});

CUresult simi_cuMemFreeHost(void *p)
{
	int dev;
	uint64_t len;
	bool found;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct sim_node *n = p ? sim_tree_find(&host, (uint64_t)(uintptr_t)p) : NULL;
	found = n && n->val == 0 && sim_tree_remove(&host, (uint64_t)(uintptr_t)p, &len, NULL);
	pthread_mutex_unlock(&sim_lock);
	if (!found)
		return CUDA_ERROR_INVALID_VALUE;
	munmap(p, len);
	return CUDA_SUCCESS;
}
SIM_API(cuMemFreeHost, (void *p),
	(p), {p});

/* cuMemHostRegister/Unregister: registered ranges are host memory to the
 * pointer queries (cuMemHostGetDevicePointer gives the same address). */
CUresult sim_host_register(uint64_t p, uint64_t n)
{
	CUresult r = CUDA_SUCCESS;
	if (n > UINT64_MAX - p)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	struct sim_node *f = sim_tree_floor(&host, p), *c = sim_tree_ceil(&host, p);
	if ((f && f->key + f->len > p) || (c && c->key < p + n))
		r = SIM_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	else if (!sim_tree_insert(&host, p, n, 1))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_unlock(&sim_lock);
	return r;
}

CUresult sim_host_unregister(uint64_t p)
{
	pthread_mutex_lock(&sim_lock);
	struct sim_node *n = sim_tree_find(&host, p);
	bool ok = n && n->val == 1 && sim_tree_remove(&host, p, NULL, NULL);
	pthread_mutex_unlock(&sim_lock);
	return ok ? CUDA_SUCCESS : SIM_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/* ---- pointer queries (sim_pointer.c) ---- */

/* What p points into: SIM_PTR_DEVICE (a live cuMemAlloc or pool block),
 * SIM_PTR_MANAGED, SIM_PTR_HOST (pinned) or SIM_PTR_NONE; base and size of
 * the block (whole pages for device blocks, mapped bytes for host ones). */
int sim_ptr_lookup(uint64_t p, uint64_t *base, uint64_t *size)
{
	static struct sim_tree *const tables[] = {&live, &managed, &host};
	static const int kinds[] = {SIM_PTR_DEVICE, SIM_PTR_MANAGED, SIM_PTR_HOST};
	int kind = SIM_PTR_NONE;
	pthread_mutex_lock(&sim_lock);
	for (int i = 0; i < 3 && kind == SIM_PTR_NONE; i++) {
		struct sim_node *n = sim_tree_floor(tables[i], p);
		if (n && p - n->key < n->len) {
			kind = kinds[i];
			if (base)
				*base = n->key;
			if (size)
				*size = n->len;
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return kind;
}

/* ---- accounting ---- */

CUresult sim_cuMemGetInfo_v2(size_t *free, size_t *total)
{
	int dev;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	/* free: after every process's memory and contexts on the machine */
	*total = sim_dev[dev].total_pages * SIM_PAGE;
	*free = (sim_dev[dev].total_pages - sim_machine_used_pages(dev)) * SIM_PAGE;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuMemGetInfo_v2);

long long sim_tlm_sim_used_pages(int dev)
{
	long long n;
	if (sim_enter_device(false, dev))
		return -1;
	pthread_mutex_lock(&sim_lock);
	n = (long long)sim_dev[dev].used_pages;
	pthread_mutex_unlock(&sim_lock);
	return n;
}
SIM_EXPORT(tlm_sim_used_pages);
