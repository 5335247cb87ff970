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
#include <unistd.h>

#include "sim_internal.h"
#include "sim_machine.h"
#include "sim_vmm.h"

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

/* Host locations (HOST, HOST_NUMA, HOST_NUMA_CURRENT): memory on the host's
 * NUMA nodes, which cuMemCreate does not model. */
static bool host_location(int type)
{
	return type >= CU_MEM_LOCATION_TYPE_HOST && type <= CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
}

static CUresult check_prop(const CUmemAllocationProp *prop, bool host_ok)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (host_ok && host_location(prop->location.type))
		return CUDA_SUCCESS;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_valid_device(prop->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

struct vmm_handle *sim_vmm_add(int dev, uint64_t pages, const CUmemAllocationProp *prop,
			       bool imported, int fd)
{
	struct vmm_handle *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	*h = (struct vmm_handle){.id = next_handle, .dev = dev, .pages = pages, .refs = 1,
				 .imported = imported, .fd = fd, .prop = *prop};
	if (!sim_tree_insert(&handles, next_handle, 0, (uintptr_t)h)) {
		free(h);
		return NULL;
	}
	next_handle++;
	return h;
}

struct vmm_handle *sim_vmm_find(CUmemGenericAllocationHandle id)
{
	struct sim_node *n = sim_tree_find(&handles, id);
	struct vmm_handle *h = n ? (struct vmm_handle *)n->val : NULL;
	return h && h->refs ? h : NULL;
}

/* Drop a handle once it has no reference and no mapping. */
static void handle_put(struct vmm_handle *h)
{
	if (h->refs == 0 && h->maps == 0) {
		if (!h->imported) {
			sim_dev[h->dev].used_pages -= h->pages;
			sim_machine_give(h->dev, h->pages);
		}
		sim_tree_remove(&handles, h->id, NULL, NULL);
		if (h->back)
			munmap(h->back, h->pages * SIM_PAGE);
		if (h->fd >= 0)
			close(h->fd);
		free(h);
	}
}

void sim_vmm_unref(struct vmm_handle *h)
{
	h->refs--;
	handle_put(h);
}

CUresult sim_cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
					   int option)
{
	CUresult r = sim_enter(!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
						option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	if (r)
		return r;
	r = check_prop(prop, true);
	if (r)
		return r;
	*granularity = SIM_PAGE; /* host locations too */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuMemGetAllocationGranularity);

CUresult simi_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			 const CUmemAllocationProp *prop, unsigned long long flags)
{
	CUresult r = sim_enter(!handle || size == 0 || !aligned(size) || flags != 0);
	if (r || (r = check_prop(prop, true)))
		return r;
	/* Host memory through cuMemCreate is not modelled: NCCL then keeps its
	 * host buffers in /dev/shm (its own fallback for hosts without NUMA). */
	if (host_location(prop->location.type))
		return CUDA_ERROR_NOT_SUPPORTED;
	int dev = prop->location.id;
	uint64_t pages = size / SIM_PAGE;
	pthread_mutex_lock(&sim_lock);
	if (!sim_machine_take(dev, pages)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		struct vmm_handle *h = sim_vmm_add(dev, pages, prop, false, -1);
		if (!h) {
			sim_machine_give(dev, pages);
			r = CUDA_ERROR_OUT_OF_MEMORY;
		} else {
			sim_dev[dev].used_pages += pages;
			*handle = h->id;
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
			    unsigned long long flags),
	(handle, size, prop, flags), {handle, size, prop, flags});

CUresult simi_cuMemRelease(CUmemGenericAllocationHandle handle)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct vmm_handle *h = sim_vmm_find(handle);
	if (!h)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		sim_vmm_unref(h);
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
	struct vmm_handle *h;
	CUresult r = sim_enter(size == 0 || !aligned(size) || !aligned(offset) || !aligned(ptr) ||
			       flags != 0);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	h = sim_vmm_find(handle);
	if (!h || offset / SIM_PAGE > h->pages ||
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

/* The handle's contents: its memfd's pages once it is shared, else a
 * private sparse mapping. */
static uint8_t *contents(struct vmm_handle *h)
{
	if (!h->back && h->fd >= 0) {
		void *p = mmap(NULL, h->pages * SIM_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd, 0);
		h->back = p == MAP_FAILED ? NULL : p;
	} else if (!h->back) {
		h->back = sim_backing_map(h->pages * SIM_PAGE);
	}
	return h->back;
}

CUresult sim_vmm_span(uint64_t p, uint8_t **host, uint64_t *avail)
{
	struct sim_node *m = sim_tree_floor(&mappings, p);
	if (!m || p - m->key >= m->len)
		return CUDA_ERROR_INVALID_VALUE;
	struct vmm_handle *h = (struct vmm_handle *)m->val;
	struct sim_node *o = sim_tree_find(&map_offset, m->key);
	if (!contents(h))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*host = h->back + (o ? o->val : 0) + (p - m->key);
	*avail = m->key + m->len - p;
	return CUDA_SUCCESS;
}

struct vmm_handle *sim_vmm_mapping(uint64_t p, uint64_t *start, uint64_t *len)
{
	struct sim_node *m = sim_tree_floor(&mappings, p);
	if (!m || p - m->key >= m->len)
		return NULL;
	if (start)
		*start = m->key;
	if (len)
		*len = m->len;
	return (struct vmm_handle *)m->val;
}

/* The handle mapped at addr, with one more reference (cuMemRelease drops
 * it); a handle released but still mapped becomes valid again. */
CUresult simi_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	CUresult r = sim_enter(!handle);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct vmm_handle *h = sim_vmm_mapping((uint64_t)(uintptr_t)addr, NULL, NULL);
	if (!h) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		h->refs++;
		*handle = h->id;
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_API(cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle *handle, void *addr),
	(handle, addr), {handle, addr});

CUresult sim_cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
						    CUmemGenericAllocationHandle handle)
{
	CUresult r = sim_enter(!prop);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct vmm_handle *h = sim_vmm_find(handle);
	if (!h)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*prop = h->prop;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemGetAllocationPropertiesFromHandle);
