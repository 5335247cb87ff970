// SPDX-License-Identifier: MIT
/*
 * Simulated driver state: cuInit (the configuration comes from the machine,
 * sim_machine.c), device queries, contexts (a per-thread stack, as in the
 * real driver; each live context holds TLM_SIM_CONTEXT_MEMORY of its
 * device's memory, charged to the machine) and streams.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "sim_machine.h"

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;

/* Like a real driver, the simulated one survives a fork made while another
 * thread is inside it: fork waits for the lock, and both sides release it. */
static void fork_lock(void)
{
	pthread_mutex_lock(&sim_lock);
}
static void fork_unlock(void)
{
	pthread_mutex_unlock(&sim_lock);
}
static void fork_child_unlock(void)
{
	sim_machine_fork_child();
	pthread_mutex_unlock(&sim_lock);
}
__attribute__((constructor)) static void fork_safety(void)
{
	pthread_atfork(fork_lock, fork_unlock, fork_child_unlock);
}
int sim_ndev;
struct sim_device sim_dev[SIM_MAX_DEVICES];

#define CTX_MAGIC 0x746c6d63u /* "tlmc" */
#define CTX_STACK_MAX 64

struct CUctx_st {
	uint32_t magic;
	int dev;
	bool primary;
	bool destroyed; /* created contexts are never freed: other threads may still hold them */
	int refs;       /* primary contexts: retain count */
};

struct CUstream_st {
	int dev;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int initialized; /* read with __atomic, written once under init_once */
static struct CUctx_st primary_ctx[SIM_MAX_DEVICES];
static struct sim_tree ctx_set;    /* created contexts, key = address */
static struct sim_tree stream_set; /* live streams, key = address */

static __thread CUcontext ctx_stack[CTX_STACK_MAX];
static __thread int ctx_depth;

/* ---- configuration (parsing: sim_config.c) ---- */

static void configure(void)
{
	sim_machine_attach(); /* parses TLM_SIM_DEVICES and TLM_SIM_MEMORY */
	sim_ndev = sim_machine_ndev();
	for (int d = 0; d < sim_ndev; d++) {
		sim_dev[d].total_pages = sim_machine_total_pages(d);
		sim_dev[d].used_pages = 0;
		sim_vas_init(&sim_dev[d].va, SIM_VA_BASE + (uint64_t)d * SIM_VA_STRIDE, SIM_VA_STRIDE);
		primary_ctx[d].magic = CTX_MAGIC;
		primary_ctx[d].dev = d;
		primary_ctx[d].primary = true;
		sim_pools_init_device(d);
	}
	__atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
}

CUresult sim_cuInit(unsigned int flags)
{
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&init_once, configure);
	sim_injection_once(); /* after the driver is up, like the real driver */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuInit);

bool sim_valid_device(int dev)
{
	return dev >= 0 && dev < sim_ndev;
}

CUresult sim_enter(bool bad_args)
{
	if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	return bad_args ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult sim_enter_device(bool bad_args, int dev)
{
	CUresult r = sim_enter(bad_args);
	return r || sim_valid_device(dev) ? r : CUDA_ERROR_INVALID_DEVICE;
}

CUresult sim_cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = SIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDriverGetVersion);

/* ---- devices ---- */

CUresult sim_cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r = sim_enter_device(!device, ordinal);
	if (r)
		return r;
	*device = ordinal;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGet);

CUresult sim_cuDeviceGetCount(int *count)
{
	CUresult r = sim_enter(!count);
	if (r)
		return r;
	*count = sim_ndev;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetCount);

CUresult sim_cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r = sim_enter_device(!name || len <= 0, dev);
	if (r)
		return r;
	snprintf(name, (size_t)len, "tlm simulated device %d", dev);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetName);

CUresult sim_cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r = sim_enter_device(!bytes, dev);
	if (r)
		return r;
	*bytes = sim_dev[dev].total_pages * SIM_PAGE;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceTotalMem_v2);

/* ---- contexts ---- */

/* A context handle we issued and that is still usable. Caller holds sim_lock. */
static bool ctx_usable(CUcontext c)
{
	if (!c)
		return false;
	uintptr_t p = (uintptr_t)c, lo = (uintptr_t)&primary_ctx[0];
	if (p >= lo && p < lo + (uintptr_t)sim_ndev * sizeof(primary_ctx[0]))
		return true;
	return sim_tree_find(&ctx_set, (uint64_t)(uintptr_t)c) && !c->destroyed;
}

static bool ctx_check(CUcontext c)
{
	bool ok;
	pthread_mutex_lock(&sim_lock);
	ok = ctx_usable(c);
	pthread_mutex_unlock(&sim_lock);
	return ok;
}

CUresult sim_cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = sim_enter_device(!pctx, dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	/* the first retain makes the context live: it costs device memory */
	if (primary_ctx[dev].refs == 0 && !sim_machine_ctx_take(dev))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else
		primary_ctx[dev].refs++;
	pthread_mutex_unlock(&sim_lock);
	if (!r)
		*pctx = &primary_ctx[dev];
	return r;
}
SIM_EXPORT(cuDevicePrimaryCtxRetain);

CUresult sim_cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = sim_enter_device(false, dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (primary_ctx[dev].refs == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (--primary_ctx[dev].refs == 0)
		sim_machine_ctx_give(dev); /* the last release destroys it */
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuDevicePrimaryCtxRelease_v2);

/* cuDevicePrimaryCtxReset: the context is destroyed (its cost comes back);
 * the next retain makes a new one. Allocations are not freed (see
 * docs/simulated-device.md). */
void sim_primary_reset(int dev)
{
	pthread_mutex_lock(&sim_lock);
	if (primary_ctx[dev].refs > 0) {
		primary_ctx[dev].refs = 0;
		sim_machine_ctx_give(dev);
	}
	pthread_mutex_unlock(&sim_lock);
}

static CUresult push_ctx(CUcontext c)
{
	if (ctx_depth == CTX_STACK_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	ctx_stack[ctx_depth++] = c;
	return CUDA_SUCCESS;
}

CUresult sim_cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	CUresult r = sim_enter_device(!pctx, dev);
	struct CUctx_st *c;
	(void)flags; /* scheduling flags have no meaning without kernels */
	if (r)
		return r;
	if (ctx_depth == CTX_STACK_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->magic = CTX_MAGIC;
	c->dev = dev;
	pthread_mutex_lock(&sim_lock);
	if (!sim_machine_ctx_take(dev)) { /* a real context costs device memory */
		pthread_mutex_unlock(&sim_lock);
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!sim_tree_insert(&ctx_set, (uint64_t)(uintptr_t)c, 0, 0)) {
		sim_machine_ctx_give(dev);
		pthread_mutex_unlock(&sim_lock);
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&sim_lock);
	*pctx = c;
	return push_ctx(c); /* the real driver makes the new context current */
}
SIM_EXPORT(cuCtxCreate_v2);

CUresult sim_cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
			    unsigned int flags, CUdevice dev)
{
	(void)ctxCreateParams; /* affinity / CIG parameters: nothing to simulate */
	return sim_cuCtxCreate_v2(pctx, flags, dev);
}
SIM_EXPORT(cuCtxCreate_v4);

CUresult sim_cuCtxDestroy_v2(CUcontext ctx)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (!ctx || !sim_tree_find(&ctx_set, (uint64_t)(uintptr_t)ctx) || ctx->destroyed)
		r = CUDA_ERROR_INVALID_CONTEXT; /* also rejects primary contexts */
	else {
		__atomic_store_n(&ctx->destroyed, true, __ATOMIC_RELAXED);
		sim_machine_ctx_give(ctx->dev);
	}
	pthread_mutex_unlock(&sim_lock);
	if (!r) {
		/* Popped from this thread's stack wherever it sits, as the real driver does. */
		int j = 0;
		for (int i = 0; i < ctx_depth; i++)
			if (ctx_stack[i] != ctx)
				ctx_stack[j++] = ctx_stack[i];
		ctx_depth = j;
	}
	return r;
}
SIM_EXPORT(cuCtxDestroy_v2);

CUresult sim_cuCtxSetCurrent(CUcontext ctx)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!ctx) {
		if (ctx_depth > 0)
			ctx_depth--;
		return CUDA_SUCCESS;
	}
	if (!ctx_check(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx_depth == 0)
		ctx_depth = 1;
	ctx_stack[ctx_depth - 1] = ctx;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxSetCurrent);

CUresult sim_cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = sim_enter(!pctx);
	if (r)
		return r;
	*pctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetCurrent);

CUresult sim_cuCtxPushCurrent_v2(CUcontext ctx)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!ctx_check(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	return push_ctx(ctx);
}
SIM_EXPORT(cuCtxPushCurrent_v2);

CUresult sim_cuCtxPopCurrent_v2(CUcontext *pctx)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (ctx_depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_depth--;
	if (pctx)
		*pctx = ctx_stack[ctx_depth];
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxPopCurrent_v2);

CUresult sim_current_device(int *dev)
{
	CUresult r = sim_enter(false);
	CUcontext c;
	if (r)
		return r;
	if (ctx_depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	c = ctx_stack[ctx_depth - 1];
	/* Created contexts are never freed, so reading `destroyed` is safe; the
	 * flag only ever goes from false to true. */
	if (__atomic_load_n(&c->destroyed, __ATOMIC_RELAXED))
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = c->dev;
	return CUDA_SUCCESS;
}

/* For the export tables and the context queries (sim_export.c,
 * sim_query.c): the thread's current context, or NULL. */
CUcontext sim_current_ctx(void)
{
	return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

/* The primary context of dev, whether or not it is retained (NULL for a bad
 * device). */
CUcontext sim_primary_ctx(int dev)
{
	return sim_valid_device(dev) ? &primary_ctx[dev] : NULL;
}

/* Whether ctx is a context handle the driver issued and has not destroyed;
 * its device in *dev. */
bool sim_ctx_valid(CUcontext ctx, int *dev)
{
	if (!ctx_check(ctx))
		return false;
	if (dev)
		*dev = ctx->dev;
	return true;
}

/* Primary context state: retained at least once. */
bool sim_primary_active(int dev)
{
	bool on;
	pthread_mutex_lock(&sim_lock);
	on = sim_valid_device(dev) && primary_ctx[dev].refs > 0;
	pthread_mutex_unlock(&sim_lock);
	return on;
}

/* The device of ctx, or of the current context when ctx is NULL. */
static CUresult ctx_device(CUcontext ctx, int *dev)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!ctx)
		return sim_current_device(dev);
	if (!ctx_check(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = ctx->dev;
	return CUDA_SUCCESS;
}

CUresult sim_cuCtxGetDevice(CUdevice *device)
{
	return sim_cuCtxGetDevice_v2(device, NULL);
}
SIM_EXPORT(cuCtxGetDevice);

CUresult sim_cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	int dev;
	CUresult r = ctx_device(ctx, &dev);
	if (r)
		return r;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = dev;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxGetDevice_v2);

CUresult sim_cuCtxSynchronize(void)
{
	return sim_cuCtxSynchronize_v2(NULL);
}
SIM_EXPORT(cuCtxSynchronize);

CUresult sim_cuCtxSynchronize_v2(CUcontext ctx)
{
	int dev;
	CUresult r = ctx_device(ctx, &dev);
	if (r)
		return r;
	sim_pools_sync(dev); /* work is always complete; only pools react */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuCtxSynchronize_v2);

/* ---- streams ---- */

CUresult sim_cuStreamCreate(CUstream *phStream, unsigned int flags)
{
	int dev;
	struct CUstream_st *s;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	s = malloc(sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->dev = dev;
	pthread_mutex_lock(&sim_lock);
	if (!sim_tree_insert(&stream_set, (uint64_t)(uintptr_t)s, 0, 0)) {
		pthread_mutex_unlock(&sim_lock);
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&sim_lock);
	*phStream = s;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamCreate);

CUresult sim_cuStreamDestroy_v2(CUstream hStream)
{
	int dev;
	bool found;
	CUresult r = sim_current_device(&dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	found = hStream && sim_tree_remove(&stream_set, (uint64_t)(uintptr_t)hStream, NULL, NULL);
	pthread_mutex_unlock(&sim_lock);
	if (!found)
		return CUDA_ERROR_INVALID_HANDLE;
	sim_capture_stream_gone(hStream);
	free(hStream);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamDestroy_v2);

CUresult sim_stream_device(CUstream s, int *dev)
{
	int cur;
	CUresult r = sim_current_device(&cur);
	if (r)
		return r;
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
		*dev = cur;
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&sim_lock);
	if (sim_tree_find(&stream_set, (uint64_t)(uintptr_t)s))
		*dev = s->dev;
	else
		r = CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_unlock(&sim_lock);
	return r;
}

static CUresult stream_sync(CUstream s)
{
	int dev;
	CUresult r = sim_stream_device(s, &dev);
	if (r)
		return r;
	sim_pools_sync(dev);
	return CUDA_SUCCESS;
}

CUresult sim_cuStreamSynchronize(CUstream hStream)
{
	return stream_sync(hStream);
}
SIM_EXPORT(cuStreamSynchronize);

/* Per-thread default stream flavour: stream 0 means this thread's stream, which
 * in the simulator behaves exactly like the legacy one. */
CUresult sim_cuStreamSynchronize_ptsz(CUstream hStream)
{
	return stream_sync(hStream ? hStream : CU_STREAM_PER_THREAD);
}
SIM_EXPORT(cuStreamSynchronize_ptsz);
