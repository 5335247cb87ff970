/* SPDX-License-Identifier: MIT */
/*
 * sim_internal.h - state and helpers shared by the simulated driver's files.
 *
 * Contract: every driver entry point is implemented once as a HIDDEN function
 * sim_<abi name> and exported under its ABI name with SIM_EXPORT, an alias of
 * the same code. Internal callers and the cuGetProcAddress table use the
 * sim_ names, which bind inside the library at link time: a preloaded library
 * defining cuMemAlloc_v2 can neither divert the simulator's own calls nor the
 * pointers it hands out. All simulator state is guarded by sim_lock, except
 * the per-thread context stack.
 */
#ifndef TLM_SIM_INTERNAL_H
#define TLM_SIM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/cupti_abi.h"
#include "sim_driver.h"
#include "sim_tree.h"
#include "sim_vaspace.h"

/* Export the hidden implementation sim_NAME under the ABI name NAME. The alias
 * has the same address, so &sim_NAME inside the library equals the address a
 * dlsym(handle, "NAME") caller sees. */
#define SIM_EXPORT(name)                                                                           \
	extern __typeof__(sim_##name) name                                                         \
		__attribute__((alias("sim_" #name), visibility("default")))

/* The driver API layer of a memory call: sim_NAME (exported as NAME, handed
 * out by cuGetProcAddress) runs the implementation simi_NAME between an ENTER
 * and an EXIT notification of the API observer (sim_observe.c), with the
 * call's parameters in the struct layout of CUPTI's generated_cuda_meta.h.
 * Internal callers use simi_NAME: like the real driver's internal calls, they
 * issue no callbacks. */
#define SIM_API(name, proto, args, ...)                                                            \
	CUresult sim_##name proto                                                                  \
	{                                                                                          \
		struct tlm_cupti_p_##name p_ = __VA_ARGS__;                                        \
		sim_api_enter(TLM_CUPTI_DRV_##name, #name, &p_);                                   \
		CUresult r_ = simi_##name args;                                                    \
		sim_api_exit(TLM_CUPTI_DRV_##name, #name, &p_, r_);                                \
		return r_;                                                                         \
	}                                                                                          \
	SIM_EXPORT(name)

#define SIM_PAGE (2ull << 20)     /* physical page and VMM granularity: 2 MiB */
#define SIM_MAX_DEVICES 16
#define SIM_DEFAULT_DEVICES 2
#define SIM_DEFAULT_MEMORY (1ull << 30)
#define SIM_MAX_MEMORY (256ull << 30) /* per device; keeps VA slack, see docs */
#define SIM_DRIVER_VERSION 13000
#define sim_driver_version() SIM_DRIVER_VERSION
/* Device d allocates from [SIM_VA_BASE + d*SIM_VA_STRIDE, +SIM_VA_STRIDE).
 * 0x2000'0000'0000.. lies far below where Linux places mmap (0x7f..), PIE
 * images (0x55..) and ASan's heap (0x6000'0000'0000), so device pointers never
 * alias host pointers in a trace. */
#define SIM_VA_BASE 0x200000000000ull
#define SIM_VA_STRIDE 0x020000000000ull /* 2 TiB per device */
/* VMM reservations (cuMemAddressReserve) come from one shared region. */
#define SIM_VMM_VA_BASE 0x400000000000ull
#define SIM_VMM_VA_SIZE 0x100000000000ull /* 16 TiB */
/* Module globals (cuLibraryGetGlobal): addresses outside every accounting. */
#define SIM_GLOBAL_VA_BASE 0x500000000000ull
#define SIM_GLOBAL_VA_SIZE 0x040000000000ull /* 4 TiB: 16384 globals 256 MiB apart */

#pragma GCC visibility push(hidden)

/* ---- implementations of the exported entry points ---- */
extern __typeof__(cuInit) sim_cuInit;
extern __typeof__(cuDriverGetVersion) sim_cuDriverGetVersion;
extern __typeof__(cuGetErrorName) sim_cuGetErrorName;
extern __typeof__(cuGetErrorString) sim_cuGetErrorString;
extern __typeof__(cuGetProcAddress) sim_cuGetProcAddress;
extern __typeof__(cuGetProcAddress_v2) sim_cuGetProcAddress_v2;
extern __typeof__(cuDeviceGet) sim_cuDeviceGet;
extern __typeof__(cuDeviceGetCount) sim_cuDeviceGetCount;
extern __typeof__(cuDeviceGetName) sim_cuDeviceGetName;
extern __typeof__(cuDeviceTotalMem_v2) sim_cuDeviceTotalMem_v2;
extern __typeof__(cuDevicePrimaryCtxRetain) sim_cuDevicePrimaryCtxRetain;
extern __typeof__(cuDevicePrimaryCtxRelease_v2) sim_cuDevicePrimaryCtxRelease_v2;
extern __typeof__(cuCtxCreate_v2) sim_cuCtxCreate_v2;
extern __typeof__(cuCtxCreate_v4) sim_cuCtxCreate_v4;
extern __typeof__(cuCtxDestroy_v2) sim_cuCtxDestroy_v2;
extern __typeof__(cuCtxSetCurrent) sim_cuCtxSetCurrent;
extern __typeof__(cuCtxGetCurrent) sim_cuCtxGetCurrent;
extern __typeof__(cuCtxPushCurrent_v2) sim_cuCtxPushCurrent_v2;
extern __typeof__(cuCtxPopCurrent_v2) sim_cuCtxPopCurrent_v2;
extern __typeof__(cuCtxGetDevice) sim_cuCtxGetDevice;
extern __typeof__(cuCtxGetDevice_v2) sim_cuCtxGetDevice_v2;
extern __typeof__(cuCtxSynchronize) sim_cuCtxSynchronize;
extern __typeof__(cuCtxSynchronize_v2) sim_cuCtxSynchronize_v2;
extern __typeof__(cuStreamCreate) sim_cuStreamCreate;
extern __typeof__(cuStreamDestroy_v2) sim_cuStreamDestroy_v2;
extern __typeof__(cuStreamSynchronize) sim_cuStreamSynchronize;
extern __typeof__(cuStreamSynchronize_ptsz) sim_cuStreamSynchronize_ptsz;
extern __typeof__(cuMemGetInfo_v2) sim_cuMemGetInfo_v2;
extern __typeof__(cuMemAlloc_v2) sim_cuMemAlloc_v2;
extern __typeof__(cuMemAllocPitch_v2) sim_cuMemAllocPitch_v2;
extern __typeof__(cuMemFree_v2) sim_cuMemFree_v2;
extern __typeof__(cuMemAllocManaged) sim_cuMemAllocManaged;
extern __typeof__(cuMemAllocHost_v2) sim_cuMemAllocHost_v2;
extern __typeof__(cuMemHostAlloc) sim_cuMemHostAlloc;
extern __typeof__(cuMemFreeHost) sim_cuMemFreeHost;
extern __typeof__(cuMemAllocAsync) sim_cuMemAllocAsync;
extern __typeof__(cuMemAllocAsync_ptsz) sim_cuMemAllocAsync_ptsz;
extern __typeof__(cuMemAllocFromPoolAsync) sim_cuMemAllocFromPoolAsync;
extern __typeof__(cuMemAllocFromPoolAsync_ptsz) sim_cuMemAllocFromPoolAsync_ptsz;
extern __typeof__(cuMemFreeAsync) sim_cuMemFreeAsync;
extern __typeof__(cuMemFreeAsync_ptsz) sim_cuMemFreeAsync_ptsz;
extern __typeof__(cuDeviceGetDefaultMemPool) sim_cuDeviceGetDefaultMemPool;
extern __typeof__(cuMemPoolCreate) sim_cuMemPoolCreate;
extern __typeof__(cuMemPoolDestroy) sim_cuMemPoolDestroy;
extern __typeof__(cuMemPoolTrimTo) sim_cuMemPoolTrimTo;
extern __typeof__(cuMemGetAllocationGranularity) sim_cuMemGetAllocationGranularity;
extern __typeof__(cuMemCreate) sim_cuMemCreate;
extern __typeof__(cuMemRelease) sim_cuMemRelease;
extern __typeof__(cuMemAddressReserve) sim_cuMemAddressReserve;
extern __typeof__(cuMemAddressFree) sim_cuMemAddressFree;
extern __typeof__(cuMemMap) sim_cuMemMap;
extern __typeof__(cuMemUnmap) sim_cuMemUnmap;
extern __typeof__(cuMemSetAccess) sim_cuMemSetAccess;
extern __typeof__(cuMemRetainAllocationHandle) sim_cuMemRetainAllocationHandle;
extern __typeof__(cuMemImportFromShareableHandle) sim_cuMemImportFromShareableHandle;
extern __typeof__(tlm_sim_used_pages) sim_tlm_sim_used_pages;
extern __typeof__(tlm_sim_pool_cached_bytes) sim_tlm_sim_pool_cached_bytes;
extern __typeof__(tlm_sim_set_api_observer) sim_tlm_sim_set_api_observer;
extern __typeof__(tlm_sim_machine_devices) sim_tlm_sim_machine_devices;
extern __typeof__(tlm_sim_machine_memory) sim_tlm_sim_machine_memory;
extern __typeof__(tlm_sim_machine_processes) sim_tlm_sim_machine_processes;
extern __typeof__(tlm_sim_device_ids) sim_tlm_sim_device_ids;
extern __typeof__(tlm_sim_context_bytes) sim_tlm_sim_context_bytes;
extern __typeof__(tlm_sim_api_notify) sim_tlm_sim_api_notify;
extern __typeof__(tlm_sim_private_entry) sim_tlm_sim_private_entry;

/* ---- the implementations behind the memory entry points (no callbacks) ---- */
extern __typeof__(cuMemAlloc_v2) simi_cuMemAlloc_v2;
extern __typeof__(cuMemAllocPitch_v2) simi_cuMemAllocPitch_v2;
extern __typeof__(cuMemFree_v2) simi_cuMemFree_v2;
extern __typeof__(cuMemAllocManaged) simi_cuMemAllocManaged;
extern __typeof__(cuMemAllocHost_v2) simi_cuMemAllocHost_v2;
extern __typeof__(cuMemHostAlloc) simi_cuMemHostAlloc;
extern __typeof__(cuMemFreeHost) simi_cuMemFreeHost;
extern __typeof__(cuMemAllocAsync) simi_cuMemAllocAsync;
extern __typeof__(cuMemAllocAsync_ptsz) simi_cuMemAllocAsync_ptsz;
extern __typeof__(cuMemAllocFromPoolAsync) simi_cuMemAllocFromPoolAsync;
extern __typeof__(cuMemAllocFromPoolAsync_ptsz) simi_cuMemAllocFromPoolAsync_ptsz;
extern __typeof__(cuMemFreeAsync) simi_cuMemFreeAsync;
extern __typeof__(cuMemFreeAsync_ptsz) simi_cuMemFreeAsync_ptsz;
extern __typeof__(cuMemPoolCreate) simi_cuMemPoolCreate;
extern __typeof__(cuMemPoolDestroy) simi_cuMemPoolDestroy;
extern __typeof__(cuMemPoolTrimTo) simi_cuMemPoolTrimTo;
extern __typeof__(cuMemCreate) simi_cuMemCreate;
extern __typeof__(cuMemRelease) simi_cuMemRelease;
extern __typeof__(cuMemAddressReserve) simi_cuMemAddressReserve;
extern __typeof__(cuMemAddressFree) simi_cuMemAddressFree;
extern __typeof__(cuMemMap) simi_cuMemMap;
extern __typeof__(cuMemRetainAllocationHandle) simi_cuMemRetainAllocationHandle;
extern __typeof__(cuMemImportFromShareableHandle) simi_cuMemImportFromShareableHandle;
extern __typeof__(cuMemUnmap) simi_cuMemUnmap;

/* ---- sim_observe.c: the API observer, private entry points, injection ---- */
void sim_api_enter(uint32_t cbid, const char *name, const void *params);
void sim_api_exit(uint32_t cbid, const char *name, const void *params, CUresult result);
/* cuInit's tail: loads $CUDA_INJECTION64_PATH once and calls its
 * InitializeInjection, as the real driver does. */
void sim_injection_once(void);

/* ---- sim_state.c: configuration, devices, contexts, streams ---- */

/* sim_config.c: TLM_SIM_MEMORY and TLM_SIM_DEVICES values (false / -1 if bad). */
bool sim_parse_memory(const char *s, uint64_t bytes[SIM_MAX_DEVICES]);
int sim_parse_devices(const char *s);
bool sim_parse_context_memory(const char *s, uint64_t *bytes);
#define SIM_DEFAULT_CONTEXT_MEMORY (8ull << 20) /* docs/simulated-device.md */


struct sim_device {
	uint64_t total_pages, used_pages; /* physical memory, in SIM_PAGE units */
	struct sim_vaspace va;            /* cuMemAlloc / pool block addresses */
	struct CUmemPoolHandle_st *default_pool;
	struct CUmemPoolHandle_st *current_pool; /* cuDeviceSetMemPool; default at first */
};

extern int sim_ndev;
extern struct sim_device sim_dev[SIM_MAX_DEVICES];
extern pthread_mutex_t sim_lock;

/* The argument-check prologue of every entry point, in one order:
 * CUDA_ERROR_NOT_INITIALIZED until cuInit has run, then
 * CUDA_ERROR_INVALID_VALUE when bad_args (a NULL output, a zero size, an
 * unknown flag: the caller's expression), then, for sim_enter_device,
 * CUDA_ERROR_INVALID_DEVICE when dev is not a device ordinal. */
CUresult sim_enter(bool bad_args);
CUresult sim_enter_device(bool bad_args, int dev);
/* Device of the calling thread's current context: CUDA_ERROR_NOT_INITIALIZED,
 * CUDA_ERROR_INVALID_CONTEXT (none, or destroyed) or CUDA_SUCCESS. */
CUresult sim_current_device(int *dev);
/* Device a stream belongs to; the NULL/legacy/per-thread streams mean the
 * current context's device. Takes sim_lock. */
CUresult sim_stream_device(CUstream s, int *dev);
bool sim_valid_device(int dev);
CUcontext sim_current_ctx(void);
CUcontext sim_primary_ctx(int dev);
bool sim_ctx_valid(CUcontext ctx, int *dev);
bool sim_primary_active(int dev);
void sim_primary_reset(int dev);

/* ---- sim_memory.c: physical pages, device blocks, the live-allocation table ---- */

/* Take `pages` physical pages plus a VA block on dev; OUT_OF_MEMORY when pages
 * are short. Caller holds sim_lock. */
CUresult sim_block_alloc(int dev, uint64_t pages, uint64_t *va);
void sim_block_free(int dev, uint64_t va, uint64_t pages);
/* Record a live device allocation (for cuMemFree); pool may be NULL. */
CUresult sim_live_add(uint64_t va, uint64_t bytes, struct CUmemPoolHandle_st *pool);
int sim_va_device(uint64_t va);
enum { SIM_PTR_NONE, SIM_PTR_DEVICE, SIM_PTR_MANAGED, SIM_PTR_HOST };
int sim_ptr_lookup(uint64_t p, uint64_t *base, uint64_t *size);
#define SIM_ERROR_HOST_MEMORY_ALREADY_REGISTERED ((CUresult)712)
#define SIM_ERROR_HOST_MEMORY_NOT_REGISTERED ((CUresult)713)
CUresult sim_host_register(uint64_t p, uint64_t n);
CUresult sim_host_unregister(uint64_t p);
/* cuMemFreeAsync's core: frees device and pool allocations, not managed ones. */
CUresult sim_free_async(CUdeviceptr dptr);

/* The live allocation holding p: its base and length (whole pages). Caller
 * holds sim_lock. */
bool sim_live_span(uint64_t p, uint64_t *base, uint64_t *len);
/* Whether the live allocation at base came from a pool. Caller holds sim_lock. */
bool sim_live_pooled(uint64_t base);

/* ---- sim_backing.c: device memory contents (callers hold sim_lock) ---- */
bool sim_is_device_va(uint64_t p);
/* Host memory behind p and the contiguous bytes from there; host pointers
 * are themselves. INVALID_VALUE for device addresses nothing live covers. */
CUresult sim_backing_span(uint64_t p, uint8_t **host, uint64_t *avail);
/* SUCCESS when all of [p, p+n) resolves (live allocations or host memory). */
CUresult sim_backing_check(uint64_t p, uint64_t n);
/* An allocation at va of `bytes` is gone: its contents become zeros again. */
void sim_backing_free(uint64_t va, uint64_t bytes);
/* A sparse zero-filled host mapping (NULL, with one stderr line, if refused). */
uint8_t *sim_backing_map(uint64_t bytes);
void sim_backing_zero(uint8_t *p, uint64_t n);
/* sim_vmm.c: the same for a VMM reservation address. */
CUresult sim_vmm_span(uint64_t p, uint8_t **host, uint64_t *avail);

/* ---- sim_graph.c: stream capture and graphs ---- */
#define SIM_ERROR_ILLEGAL_STATE ((CUresult)401)
#define SIM_ERROR_STREAM_CAPTURE_UNSUPPORTED ((CUresult)900)
struct sim_graph;
/* Around one async call on stream s: while the stream is being captured,
 * the copies, sets and host functions of that call are recorded (the
 * sim_capture_* calls return true) instead of run. Takes sim_lock. */
struct sim_graph *sim_capture_begin_call(CUstream s);
void sim_capture_end_call(void);
bool sim_capture_copy(uint64_t dst, uint64_t dpitch, uint64_t src, uint64_t spitch, uint64_t width,
		      uint64_t rows, CUresult *r);
bool sim_capture_set(uint64_t dst, uint64_t pitch, uint64_t width, uint64_t height, unsigned value,
		     unsigned elem, CUresult *r);
bool sim_capture_host(void (*fn)(void *), void *user, CUresult *r);
/* The graph capturing s, or NULL. Takes sim_lock. */
void *sim_stream_capturing(CUstream s);
/* s was destroyed: its capture, if any, ends. Takes sim_lock. */
void sim_capture_stream_gone(CUstream s);
/* sim_copy.c: rows of a copy or set (2D/3D flatten to these), run now. */
CUresult sim_copy_rows(uint64_t dst, uint64_t dpitch, uint64_t src, uint64_t spitch, uint64_t width,
		       uint64_t rows);
CUresult sim_set_rows(uint64_t dst, size_t pitch, size_t width, size_t height, unsigned value,
		      unsigned elem);

/* ---- sim_pool.c ---- */
void sim_pools_init_device(int dev); /* creates the default pool; at cuInit */
/* A pool allocation came back (cuMemFree/cuMemFreeAsync). Holds sim_lock. */
void sim_pool_return(struct CUmemPoolHandle_st *pool, uint64_t va, uint64_t pages);
/* Synchronisation point on dev: pools drop cached memory above their release
 * threshold, which is 0. Takes sim_lock. */
void sim_pools_sync(int dev);

/* ---- sim_procaddr.c ---- */
/* The simulator's own code for an ABI name ("cuMemAlloc_v2"), or NULL. */
void *sim_lookup_abi(const char *abi);

/* ---- sim_device.c ---- */
/* The device's UUID and PCI location, as cuDeviceGetUuid and the PCI
 * attributes report them (and the integrity check hashes them). */
void sim_device_uuid(int dev, uint8_t uuid[16]);
int sim_device_pci_bus(int dev);

/* ---- sim_module.c ---- */
bool sim_is_global(uint64_t addr);

/* ---- sim_errors.c ---- */
const char *sim_error_name(CUresult e);

#pragma GCC visibility pop

#endif
