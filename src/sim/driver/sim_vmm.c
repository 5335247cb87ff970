// SPDX-License-Identifier: MIT
/*
 * Virtual memory management (cuMemCreate / cuMemAddressReserve / cuMemMap).
 * Physical handles take pages from a device; reservations take VA from a
 * region of their own; a mapping ties part of a handle to part of a
 * reservation. As on real hardware, a handle's pages return to the device only
 * when it is released AND no mapping uses it any more. A handle's contents
 * (sim_backing.c) are a host mapping of its own, made at the first copy or
 * set through any mapping of it: every range mapped to one handle shows the
 * same bytes, and they last until the handle is gone.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "sim_internal.h"
#include "sim_machine.h"

struct vmm_handle {
	CUmemGenericAllocationHandle id;
	int dev;
	uint64_t pages;
	uint64_t maps; /* live mappings that reference this handle */
	bool released;
	uint8_t *back; /* contents; NULL until first touched */
};

static struct sim_vaspace reserve_va;
static bool reserve_va_ready;
static struct sim_tree handles;      /* key = handle value, val = struct vmm_handle * */
static struct sim_tree reservations; /* key = start, len = size */
static struct sim_tree mappings;     /* key = start, len = size, val = struct vmm_handle * */
static struct sim_tree map_offset;   /* key = mapping start, val = its offset in the handle */
/* Handles are opaque, distinct and never reused within a process; the base
 * keeps them out of the range of small integers a test might confuse them with. */
static CUmemGenericAllocationHandle next_handle = 0x7100000000000001ull;

static bool aligned(uint64_t v)
{
	return v % SIM_PAGE == 0;
}

static CUresult check_prop(const CUmemAllocationProp *prop)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_valid_device(prop->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

/* Drop a handle once it is both released and unmapped everywhere. */
static void handle_put(struct vmm_handle *h)
{
	if (h->released && h->maps == 0) {
		sim_dev[h->dev].used_pages -= h->pages;
		sim_machine_give(h->dev, h->pages);
		sim_tree_remove(&handles, h->id, NULL, NULL);
		if (h->back)
			munmap(h->back, h->pages * SIM_PAGE);
		free(h);
	}
}

CUresult sim_cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
					   int option)
{
	CUresult r = sim_enter(!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
						option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	if (r)
		return r;
	r = check_prop(prop);
	if (r)
		return r;
	*granularity = SIM_PAGE;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuMemGetAllocationGranularity);

CUresult simi_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			 const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct vmm_handle *h;
	struct sim_device *d;
	CUresult r = sim_enter(!handle || size == 0 || !aligned(size) || flags != 0);
	if (r)
		return r;
	r = check_prop(prop);
	if (r)
		return r;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->dev = prop->location.id;
	h->pages = size / SIM_PAGE;
	d = &sim_dev[h->dev];
	pthread_mutex_lock(&sim_lock);
	if (!sim_machine_take(h->dev, h->pages)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!sim_tree_insert(&handles, next_handle, 0, (uintptr_t)h)) {
		sim_machine_give(h->dev, h->pages);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		d->used_pages += h->pages;
		h->id = next_handle++;
		*handle = h->id;
	}
	pthread_mutex_unlock(&sim_lock);
	if (r)
		free(h);
	return r;
}
SIM_API(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
			    unsigned long long flags),
	(handle, size, prop, flags), {handle, size, prop, flags});

CUresult simi_cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct sim_node *n;
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	n = sim_tree_find(&handles, handle);
	if (!n || ((struct vmm_handle *)n->val)->released) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		struct vmm_handle *h = (struct vmm_handle *)n->val;
		h->released = true;
		handle_put(h);
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemRelease, (CUmemGenericAllocationHandle handle),
	(handle), {handle});

CUresult simi_cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
				 CUdeviceptr addr, unsigned long long flags)
{
	uint64_t va;
	CUresult r = sim_enter(!ptr || size == 0 || !aligned(size) || flags != 0 ||
			       (alignment & (alignment - 1)) || !aligned(addr));
	if (r)
		return r;
	if (alignment < SIM_PAGE)
		alignment = SIM_PAGE;
	pthread_mutex_lock(&sim_lock);
	if (!reserve_va_ready) {
		sim_vas_init(&reserve_va, SIM_VMM_VA_BASE, SIM_VMM_VA_SIZE);
		reserve_va_ready = true;
	}
	if (!sim_vas_alloc(&reserve_va, size, alignment, addr, &va)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!sim_tree_insert(&reservations, va, size, 0)) {
		sim_vas_release(&reserve_va, va, size);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		*ptr = va;
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemAddressReserve, (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			    unsigned long long flags),
	(ptr, size, alignment, addr, flags), {ptr, size, alignment, addr, flags});

/* First mapping overlapping [ptr, ptr+size), or NULL. Caller holds sim_lock. */
static struct sim_node *first_overlap(uint64_t ptr, uint64_t size)
{
	struct sim_node *m = sim_tree_floor(&mappings, ptr);
	if (m && m->key + m->len > ptr)
		return m;
	m = sim_tree_ceil(&mappings, ptr);
	return m && m->key < ptr + size ? m : NULL;
}

CUresult simi_cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct sim_node *n;
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	n = sim_tree_find(&reservations, ptr);
	/* The whole reservation, and nothing may still be mapped inside it. */
	if (!n || n->len != size || first_overlap(ptr, size)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		sim_tree_remove(&reservations, ptr, NULL, NULL);
		sim_vas_release(&reserve_va, ptr, size);
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemAddressFree, (CUdeviceptr ptr, size_t size),
	(ptr, size), {ptr, size});

/* True when [ptr, ptr+size) lies inside one reservation. Caller holds sim_lock. */
static bool reserved(uint64_t ptr, uint64_t size)
{
	struct sim_node *n = sim_tree_floor(&reservations, ptr);
	return n && ptr - n->key < n->len && n->len - (ptr - n->key) >= size;
}

CUresult simi_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		      CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct sim_node *n;
	struct vmm_handle *h;
	CUresult r = sim_enter(size == 0 || !aligned(size) || !aligned(offset) || !aligned(ptr) ||
			       flags != 0);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	n = sim_tree_find(&handles, handle);
	h = n ? (struct vmm_handle *)n->val : NULL;
	if (!h || h->released || offset / SIM_PAGE > h->pages ||
	    size / SIM_PAGE > h->pages - offset / SIM_PAGE || !reserved(ptr, size))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (first_overlap(ptr, size))
		r = CUDA_ERROR_ALREADY_MAPPED;
	else if (!sim_tree_insert(&map_offset, ptr, 0, offset))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if (!sim_tree_insert(&mappings, ptr, size, (uintptr_t)h)) {
		sim_tree_remove(&map_offset, ptr, NULL, NULL);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else
		h->maps++;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
			    unsigned long long flags),
	(ptr, size, offset, handle, flags), {ptr, size, offset, handle, flags});

/* True when [ptr, ptr+size) is covered, without gaps, by whole mappings when
 * `whole` (unmap), or by any mappings when not (set access). */
static bool covered(uint64_t ptr, uint64_t size, bool whole)
{
	uint64_t at = ptr, end = ptr + size;
	struct sim_node *m;
	if (size > UINT64_MAX - ptr)
		return false;
	m = whole ? sim_tree_find(&mappings, ptr) : sim_tree_floor(&mappings, ptr);
	while (at < end) {
		if (!m || m->key > at || m->key + m->len <= at)
			return false;
		at = m->key + m->len;
		if (whole && at > end)
			return false;
		if (at < end)
			m = sim_tree_find(&mappings, at);
	}
	return true;
}

CUresult simi_cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult r = sim_enter(size == 0);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (!covered(ptr, size, true)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		uint64_t at = ptr;
		while (at < ptr + size) {
			uint64_t len;
			uintptr_t val;
			sim_tree_remove(&mappings, at, &len, &val);
			sim_tree_remove(&map_offset, at, NULL, NULL);
			struct vmm_handle *h = (struct vmm_handle *)val;
			h->maps--;
			handle_put(h);
			at += len;
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemUnmap, (CUdeviceptr ptr, size_t size),
	(ptr, size), {ptr, size});

CUresult sim_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
			    size_t count)
{
	CUresult r = sim_enter(size == 0 || !desc || count == 0);
	if (r)
		return r;
	for (size_t i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
			return CUDA_ERROR_INVALID_VALUE;
		if (!sim_valid_device(desc[i].location.id))
			return CUDA_ERROR_INVALID_DEVICE;
	}
	pthread_mutex_lock(&sim_lock);
	if (!covered(ptr, size, false))
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemSetAccess);

CUresult sim_vmm_span(uint64_t p, uint8_t **host, uint64_t *avail)
{
	struct sim_node *m = sim_tree_floor(&mappings, p);
	if (!m || p - m->key >= m->len)
		return CUDA_ERROR_INVALID_VALUE;
	struct vmm_handle *h = (struct vmm_handle *)m->val;
	struct sim_node *o = sim_tree_find(&map_offset, m->key);
	if (!h->back && !(h->back = sim_backing_map(h->pages * SIM_PAGE)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*host = h->back + (o ? o->val : 0) + (p - m->key);
	*avail = m->key + m->len - p;
	return CUDA_SUCCESS;
}
