// SPDX-License-Identifier: MIT
/*
 * Context, stream and event queries, occupancy and limits: the calls a
 * runtime, cuBLAS or PyTorch make that have no memory effect. Work is
 * complete the moment it is issued, so every event and stream is ready,
 * elapsed times are 0, nothing is ever being captured, and host callbacks
 * run at once on the calling thread. Limits read back what was set.
 */
#include <stdlib.h>

#include "sim_internal.h"

/* ---- contexts ---- */

static CUresult need_ctx(void)
{
	int dev;
	return sim_current_device(&dev);
}

CUresult sim_cuCtxGetFlags(unsigned *flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetFlags);

CUresult sim_cuCtxSetFlags(unsigned flags)
{
	(void)flags;
	return need_ctx();
}
SIM_EXPORT(cuCtxSetFlags);

CUresult sim_cuCtxGetApiVersion(CUcontext ctx, unsigned *version)
{
	CUresult r = sim_enter(!version);
	if (r)
		return r;
	if (!ctx)
		ctx = sim_current_ctx();
	if (!ctx || !sim_ctx_valid(ctx, NULL))
		return CUDA_ERROR_INVALID_CONTEXT;
	*version = 3020; /* the context ABI version every current driver reports */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetApiVersion);

CUresult sim_cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
	int dev;
	CUresult r = sim_enter(!id);
	if (r)
		return r;
	if (!ctx)
		ctx = sim_current_ctx();
	if (!ctx || !sim_ctx_valid(ctx, &dev))
		return CUDA_ERROR_INVALID_CONTEXT;
	*id = (unsigned long long)(uintptr_t)ctx;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetId);

/* CUlimit 0..9: stack, printf FIFO, malloc heap, sync depth, pending
 * launches, L2 fetch granularity, persisting L2, CIG shmem, CIG, fallback. */
static size_t limits[10] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0, 0, 0, 0};
static pthread_mutex_t limit_lock = PTHREAD_MUTEX_INITIALIZER;

CUresult sim_cuCtxGetLimit(size_t *value, int limit)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!value || limit < 0 || limit >= 10)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&limit_lock);
	*value = limits[limit];
	pthread_mutex_unlock(&limit_lock);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetLimit);

CUresult sim_cuCtxSetLimit(int limit, size_t value)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (limit < 0 || limit >= 7) /* 7..9 can only be queried */
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&limit_lock);
	limits[limit] = value;
	pthread_mutex_unlock(&limit_lock);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxSetLimit);

CUresult sim_cuCtxGetCacheConfig(int *config)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	*config = 0; /* CU_FUNC_CACHE_PREFER_NONE */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetCacheConfig);

CUresult sim_cuCtxSetCacheConfig(int config)
{
	(void)config;
	return need_ctx();
}
SIM_EXPORT(cuCtxSetCacheConfig);

CUresult sim_cuCtxGetSharedMemConfig(int *config)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	*config = 1; /* CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetSharedMemConfig);

CUresult sim_cuCtxSetSharedMemConfig(int config)
{
	(void)config;
	return need_ctx();
}
SIM_EXPORT(cuCtxSetSharedMemConfig);

CUresult sim_cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetStreamPriorityRange);

CUresult sim_cuCtxResetPersistingL2Cache(void)
{
	return need_ctx();
}
SIM_EXPORT(cuCtxResetPersistingL2Cache);

CUresult sim_cuProfilerStart(void)
{
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuProfilerStart);

CUresult sim_cuProfilerStop(void)
{
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuProfilerStop);

/* ---- streams ---- */

static CUresult stream_ok(CUstream s)
{
	int dev;
	return sim_stream_device(s, &dev);
}

CUresult sim_cuStreamCreateWithPriority(CUstream *ph, unsigned flags, int priority)
{
	(void)priority;
	return sim_cuStreamCreate(ph, flags);
}
SIM_EXPORT(cuStreamCreateWithPriority);

#define STREAM_PAIR(name, proto, args)                                                             \
	CUresult sim_##name##_ptsz proto                                                           \
	{                                                                                          \
		return sim_##name args;                                                            \
	}                                                                                          \
	SIM_EXPORT(name##_ptsz)

CUresult sim_cuStreamQuery(CUstream s)
{
	return stream_ok(s);
}
SIM_EXPORT(cuStreamQuery);
STREAM_PAIR(cuStreamQuery, (CUstream s), (s));

CUresult sim_cuStreamGetPriority(CUstream s, int *priority)
{
	CUresult r = stream_ok(s);
	if (r)
		return r;
	if (!priority)
		return CUDA_ERROR_INVALID_VALUE;
	*priority = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamGetPriority);
STREAM_PAIR(cuStreamGetPriority, (CUstream s, int *p), (s, p));

CUresult sim_cuStreamGetFlags(CUstream s, unsigned *flags)
{
	CUresult r = stream_ok(s);
	if (r)
		return r;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamGetFlags);
STREAM_PAIR(cuStreamGetFlags, (CUstream s, unsigned *f), (s, f));

CUresult sim_cuStreamGetId(CUstream s, unsigned long long *id)
{
	CUresult r = stream_ok(s);
	if (r)
		return r;
	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	*id = (unsigned long long)(uintptr_t)s;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamGetId);
STREAM_PAIR(cuStreamGetId, (CUstream s, unsigned long long *id), (s, id));

CUresult sim_cuStreamGetDevice(CUstream s, CUdevice *dev)
{
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	return sim_stream_device(s, dev);
}
SIM_EXPORT(cuStreamGetDevice);
STREAM_PAIR(cuStreamGetDevice, (CUstream s, CUdevice *d), (s, d));

CUresult sim_cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
	int dev;
	CUresult r = sim_stream_device(s, &dev);
	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = sim_current_ctx();
	if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD) {
		int cur;
		if (!*pctx || !sim_ctx_valid(*pctx, &cur) || cur != dev)
			*pctx = sim_primary_ctx(dev);
	}
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamGetCtx);
STREAM_PAIR(cuStreamGetCtx, (CUstream s, CUcontext *c), (s, c));

CUresult sim_cuStreamGetCtx_v2(CUstream s, CUcontext *pctx, void **green)
{
	if (green)
		*green = NULL;
	return sim_cuStreamGetCtx(s, pctx);
}
SIM_EXPORT(cuStreamGetCtx_v2);
STREAM_PAIR(cuStreamGetCtx_v2, (CUstream s, CUcontext *c, void **g), (s, c, g));

CUresult sim_cuStreamWaitEvent(CUstream s, void *ev, unsigned flags)
{
	(void)flags;
	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	return stream_ok(s);
}
SIM_EXPORT(cuStreamWaitEvent);
STREAM_PAIR(cuStreamWaitEvent, (CUstream s, void *e, unsigned f), (s, e, f));

CUresult sim_cuStreamIsCapturing(CUstream s, int *status)
{
	CUresult r = stream_ok(s);
	if (r)
		return r;
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	*status = sim_stream_capturing(s) ? 1 : 0; /* CU_STREAM_CAPTURE_STATUS_ACTIVE / NONE */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamIsCapturing);
STREAM_PAIR(cuStreamIsCapturing, (CUstream s, int *st), (s, st));

CUresult sim_cuStreamGetCaptureInfo_v3(CUstream s, int *status, unsigned long long *id, void **graph,
				       const void **deps, const void **edges, size_t *ndeps)
{
	CUresult r = sim_cuStreamIsCapturing(s, status);
	if (r)
		return r;
	void *g = *status ? sim_stream_capturing(s) : NULL;
	if (id)
		*id = (unsigned long long)(uintptr_t)g; /* unique while the capture lasts */
	if (graph)
		*graph = g;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (ndeps)
		*ndeps = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamGetCaptureInfo_v3);
STREAM_PAIR(cuStreamGetCaptureInfo_v3,
	    (CUstream s, int *st, unsigned long long *id, void **g, const void **d, const void **e,
	     size_t *n),
	    (s, st, id, g, d, e, n));

CUresult sim_cuStreamGetCaptureInfo_v2(CUstream s, int *status, unsigned long long *id, void **graph,
				       const void **deps, size_t *ndeps)
{
	return sim_cuStreamGetCaptureInfo_v3(s, status, id, graph, deps, NULL, ndeps);
}
SIM_EXPORT(cuStreamGetCaptureInfo_v2);
STREAM_PAIR(cuStreamGetCaptureInfo_v2,
	    (CUstream s, int *st, unsigned long long *id, void **g, const void **d, size_t *n),
	    (s, st, id, g, d, n));

CUresult sim_cuStreamGetCaptureInfo(CUstream s, int *status, unsigned long long *id)
{
	return sim_cuStreamGetCaptureInfo_v3(s, status, id, NULL, NULL, NULL, NULL);
}
SIM_EXPORT(cuStreamGetCaptureInfo);
STREAM_PAIR(cuStreamGetCaptureInfo, (CUstream s, int *st, unsigned long long *id), (s, st, id));

static __thread int capture_mode; /* CU_STREAM_CAPTURE_MODE_GLOBAL */

CUresult sim_cuThreadExchangeStreamCaptureMode(int *mode)
{
	if (!mode || *mode < 0 || *mode > 2)
		return CUDA_ERROR_INVALID_VALUE;
	int old = capture_mode;
	capture_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuThreadExchangeStreamCaptureMode);

CUresult sim_cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *user)
{
	CUresult r = stream_ok(s);
	if (r)
		return r;
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	sim_capture_begin_call(s);
	bool recorded = sim_capture_host(fn, user, &r);
	sim_capture_end_call();
	if (!recorded)
		fn(user); /* the stream is always idle: it runs now */
	return r;
}
SIM_EXPORT(cuLaunchHostFunc);
STREAM_PAIR(cuLaunchHostFunc, (CUstream s, void (*fn)(void *), void *u), (s, fn, u));

CUresult sim_cuStreamAddCallback(CUstream s, void (*cb)(CUstream, CUresult, void *), void *user,
				 unsigned flags)
{
	CUresult r = stream_ok(s);
	if (r)
		return r;
	if (!cb || flags)
		return CUDA_ERROR_INVALID_VALUE;
	cb(s, CUDA_SUCCESS, user);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamAddCallback);
STREAM_PAIR(cuStreamAddCallback, (CUstream s, void (*cb)(CUstream, CUresult, void *), void *u, unsigned f),
	    (s, cb, u, f));

/* ---- events ---- */

#define EVENT_MAGIC 0x746c6d65u /* "tlme" */

struct sim_event {
	uint32_t magic;
};

static bool event_ok(const void *e)
{
	return e && ((const struct sim_event *)e)->magic == EVENT_MAGIC;
}

CUresult sim_cuEventCreate(void **ev, unsigned flags)
{
	CUresult r = need_ctx();
	if (r)
		return r;
	if (!ev || (flags & ~0x7u))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_event *e = malloc(sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = EVENT_MAGIC;
	*ev = e;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuEventCreate);

CUresult sim_cuEventDestroy_v2(void *ev)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!event_ok(ev))
		return CUDA_ERROR_INVALID_HANDLE;
	((struct sim_event *)ev)->magic = 0;
	free(ev);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuEventDestroy_v2);

CUresult sim_cuEventRecord(void *ev, CUstream s)
{
	if (!event_ok(ev))
		return CUDA_ERROR_INVALID_HANDLE;
	return stream_ok(s);
}
SIM_EXPORT(cuEventRecord);
STREAM_PAIR(cuEventRecord, (void *e, CUstream s), (e, s));

CUresult sim_cuEventRecordWithFlags(void *ev, CUstream s, unsigned flags)
{
	(void)flags;
	return sim_cuEventRecord(ev, s);
}
SIM_EXPORT(cuEventRecordWithFlags);
STREAM_PAIR(cuEventRecordWithFlags, (void *e, CUstream s, unsigned f), (e, s, f));

CUresult sim_cuEventQuery(void *ev)
{
	return event_ok(ev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuEventQuery);

CUresult sim_cuEventSynchronize(void *ev)
{
	return event_ok(ev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuEventSynchronize);

CUresult sim_cuEventElapsedTime(float *ms, void *start, void *end)
{
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	if (!event_ok(start) || !event_ok(end))
		return CUDA_ERROR_INVALID_HANDLE;
	*ms = 0.0f;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuEventElapsedTime);

CUresult sim_cuEventElapsedTime_v2(float *ms, void *start, void *end)
{
	return sim_cuEventElapsedTime(ms, start, end);
}
SIM_EXPORT(cuEventElapsedTime_v2);

/* ---- occupancy (the H100 model of sim_device.c) ---- */

#define SM_THREADS 2048
#define SM_BLOCKS 32
#define SM_SHMEM 233472
#define BLOCK_RESERVED_SHMEM 1024

static int blocks_per_sm(int block, size_t dyn)
{
	if (block <= 0 || block > 1024)
		return 0;
	int warps = (block + 31) / 32;
	int n = SM_THREADS / (warps * 32);
	if (n > SM_BLOCKS)
		n = SM_BLOCKS;
	size_t per = dyn + BLOCK_RESERVED_SHMEM;
	if ((size_t)n * per > SM_SHMEM)
		n = (int)(SM_SHMEM / per);
	return n;
}

CUresult sim_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, void *f, int block,
								  size_t dyn, unsigned flags)
{
	(void)flags;
	if (!n || !f)
		return CUDA_ERROR_INVALID_VALUE;
	*n = blocks_per_sm(block, dyn);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);

CUresult sim_cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t dyn)
{
	return sim_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, f, block, dyn, 0);
}
SIM_EXPORT(cuOccupancyMaxActiveBlocksPerMultiprocessor);

CUresult sim_cuOccupancyAvailableDynamicSMemPerBlock(size_t *out, void *f, int nblocks, int block)
{
	if (!out || !f || nblocks <= 0 || block <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	size_t per = SM_SHMEM / (size_t)nblocks;
	*out = per > BLOCK_RESERVED_SHMEM ? per - BLOCK_RESERVED_SHMEM : 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuOccupancyAvailableDynamicSMemPerBlock);

CUresult sim_cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGrid, int *blockSize, void *f,
						       size_t (*dynFn)(int), size_t dyn, int limit,
						       unsigned flags)
{
	(void)flags;
	if (!minGrid || !blockSize || !f)
		return CUDA_ERROR_INVALID_VALUE;
	int b = limit > 0 && limit < 1024 ? limit : 1024;
	if (b >= 32)
		b -= b % 32;
	size_t d = dynFn ? dynFn(b) : dyn;
	int n = blocks_per_sm(b, d);
	*blockSize = b;
	*minGrid = n * 132;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuOccupancyMaxPotentialBlockSizeWithFlags);

CUresult sim_cuOccupancyMaxPotentialBlockSize(int *minGrid, int *blockSize, void *f,
					      size_t (*dynFn)(int), size_t dyn, int limit)
{
	return sim_cuOccupancyMaxPotentialBlockSizeWithFlags(minGrid, blockSize, f, dynFn, dyn, limit, 0);
}
SIM_EXPORT(cuOccupancyMaxPotentialBlockSize);

CUresult sim_cuOccupancyMaxActiveClusters(int *n, void *f, const void *config)
{
	if (!n || !f || !config)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 16;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuOccupancyMaxActiveClusters);

CUresult sim_cuOccupancyMaxPotentialClusterSize(int *n, void *f, const void *config)
{
	if (!n || !f || !config)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 8;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuOccupancyMaxPotentialClusterSize);

/* ---- context creation with execution affinity (CUDA 11.4 flavour) ---- */

/* Affinity (SM count limits) is not modelled: the context is a plain one. */
CUresult sim_cuCtxCreate_v3(CUcontext *pctx, const void *params, int nparams, unsigned flags,
			    CUdevice dev)
{
	if (nparams < 0 || (nparams > 0 && !params))
		return CUDA_ERROR_INVALID_VALUE;
	return sim_cuCtxCreate_v2(pctx, flags, dev);
}
SIM_EXPORT(cuCtxCreate_v3);
