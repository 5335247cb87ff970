// SPDX-License-Identifier: MIT
/*
 * Pool attributes and access: cuMemPoolSetAttribute, cuMemPoolGetAttribute,
 * cuMemPoolSetAccess, cuMemPoolGetAccess; graph memory's figures (all 0).
 *
 * Contract: the release threshold is kept and honoured (a synchronise trims
 * the pool down to it, sim_pool.c), as PyTorch's cudaMallocAsync backend
 * sets it to UINT64_MAX to keep its memory cached; the reserved and used
 * figures and their high-water marks are exact (pages x 2 MiB, a high mark
 * reset by setting 0, as the driver allows); the three reuse policies are
 * stored and read back but change nothing (every block is reusable at once
 * here). Access: the pool's own device has read-write access, others none
 * unless set; what was set is validated and accepted, not tracked (peer
 * access is not modelled). Kept apart from sim_pool.c, which calls
 * sim_pool_attr_update() after each allocation.
 */
#include "sim_internal.h"

enum { /* CUmemPool_attribute */
	ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
	ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
	ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
	ATTR_RELEASE_THRESHOLD = 4,
	ATTR_RESERVED_MEM_CURRENT = 5,
	ATTR_RESERVED_MEM_HIGH = 6,
	ATTR_USED_MEM_CURRENT = 7,
	ATTR_USED_MEM_HIGH = 8,
};

void sim_pool_attr_update(struct sim_pool_attrs *a, uint64_t used_pages, uint64_t cached_pages)
{
	uint64_t used = used_pages * SIM_PAGE, reserved = (used_pages + cached_pages) * SIM_PAGE;
	if (used > a->used_high)
		a->used_high = used;
	if (reserved > a->reserved_high)
		a->reserved_high = reserved;
}

CUresult sim_cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult sim_cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value)
{
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t used, cached;
	pthread_mutex_lock(&sim_lock);
	struct sim_pool_attrs *a = sim_pool_attrs_of(pool, &used, &cached);
	if (!a) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (attr >= ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES && attr <= ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES) {
		a->reuse_off[attr - 1] = *(const int *)value == 0;
	} else if (attr == ATTR_RELEASE_THRESHOLD) {
		a->release_threshold = *(const uint64_t *)value;
	} else if ((attr == ATTR_RESERVED_MEM_HIGH || attr == ATTR_USED_MEM_HIGH) &&
		   *(const uint64_t *)value == 0) {
		/* a reset: the mark starts again from the current figure */
		if (attr == ATTR_RESERVED_MEM_HIGH)
			a->reserved_high = (used + cached) * SIM_PAGE;
		else
			a->used_high = used * SIM_PAGE;
	} else {
		r = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemPoolSetAttribute);

CUresult sim_cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult sim_cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value)
{
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t used, cached;
	pthread_mutex_lock(&sim_lock);
	struct sim_pool_attrs *a = sim_pool_attrs_of(pool, &used, &cached);
	if (!a)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (attr >= ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES && attr <= ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)
		*(int *)value = !a->reuse_off[attr - 1];
	else if (attr == ATTR_RELEASE_THRESHOLD)
		*(uint64_t *)value = a->release_threshold;
	else if (attr == ATTR_RESERVED_MEM_CURRENT)
		*(uint64_t *)value = (used + cached) * SIM_PAGE;
	else if (attr == ATTR_RESERVED_MEM_HIGH)
		*(uint64_t *)value = a->reserved_high;
	else if (attr == ATTR_USED_MEM_CURRENT)
		*(uint64_t *)value = used * SIM_PAGE;
	else if (attr == ATTR_USED_MEM_HIGH)
		*(uint64_t *)value = a->used_high;
	else
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemPoolGetAttribute);

CUresult sim_cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count);
CUresult sim_cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (count && !map)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || map[i].location.id < 0 ||
		    map[i].location.id >= sim_ndev || (map[i].flags != 0 && map[i].flags != 1 &&
							map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
			return CUDA_ERROR_INVALID_VALUE;
	uint64_t used, cached;
	pthread_mutex_lock(&sim_lock);
	if (!sim_pool_attrs_of(pool, &used, &cached))
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemPoolSetAccess);

CUresult sim_cuMemPoolGetAccess(int *flags, CUmemoryPool pool, CUmemLocation *location);
CUresult sim_cuMemPoolGetAccess(int *flags, CUmemoryPool pool, CUmemLocation *location)
{
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t used, cached;
	CUdevice dev = -1;
	pthread_mutex_lock(&sim_lock);
	if (!sim_pool_attrs_of(pool, &used, &cached))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		dev = sim_pool_device(pool);
	pthread_mutex_unlock(&sim_lock);
	if (!r)
		*flags = location->id == dev ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : 0;
	return r;
}
SIM_EXPORT(cuMemPoolGetAccess);

/* Graph memory (cudaGraph memory nodes): the simulator runs no graph, so
 * every figure is 0; PyTorch's cudaMallocAsync backend reads them for its
 * memory_stats(). CUgraphMem_attribute 0..3: used current/high, reserved
 * current/high, each a cuuint64_t; the highs can be reset with 0. */
static CUresult graph_dev_ok(CUdevice device)
{
	CUresult r = sim_check_init();
	if (r)
		return r;
	return device < 0 || device >= sim_ndev ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult sim_cuDeviceGetGraphMemAttribute(CUdevice device, int attr, void *value);
CUresult sim_cuDeviceGetGraphMemAttribute(CUdevice device, int attr, void *value)
{
	CUresult r = graph_dev_ok(device);
	if (r)
		return r;
	if (!value || attr < 0 || attr > 3)
		return CUDA_ERROR_INVALID_VALUE;
	*(uint64_t *)value = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetGraphMemAttribute);

CUresult sim_cuDeviceSetGraphMemAttribute(CUdevice device, int attr, void *value);
CUresult sim_cuDeviceSetGraphMemAttribute(CUdevice device, int attr, void *value)
{
	CUresult r = graph_dev_ok(device);
	if (r)
		return r;
	if (!value || (attr != 1 && attr != 3) || *(const uint64_t *)value != 0)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceSetGraphMemAttribute);

CUresult sim_cuDeviceGraphMemTrim(CUdevice device);
CUresult sim_cuDeviceGraphMemTrim(CUdevice device)
{
	return graph_dev_ok(device);
}
SIM_EXPORT(cuDeviceGraphMemTrim);
