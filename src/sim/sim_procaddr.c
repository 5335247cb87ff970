// SPDX-License-Identifier: MIT
/*
 * cuGetProcAddress: resolve a base name (e.g. "cuMemAlloc") for a requested
 * CUDA version to the entry point the real driver would return, e.g.
 * cuMemAlloc_v2 for 3020 and later. Every pointer in the table is a hidden
 * sim_ symbol bound at link time, i.e. the library's own code at the address
 * of its exported alias, whatever a preloaded library may define.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

typedef void (*sim_fn)(void);

struct proc_entry {
	const char *name; /* base name, as passed to cuGetProcAddress */
	int version;      /* minimum CUDA version this flavour answers */
	sim_fn fn;        /* legacy default-stream flavour */
	sim_fn ptsz;      /* per-thread default-stream flavour, or NULL */
};

#define E(n, v, f) {n, v, (sim_fn)sim_##f, NULL}
#define P(n, v, f) {n, v, (sim_fn)sim_##f, (sim_fn)sim_##f##_ptsz}

/* Grouped by base name; a name may appear once per version. Minimum versions
 * are the real driver's (cudaTypedefs.h PFN_<name>_v<version>). */
static const struct proc_entry table[] = {
	E("cuInit", 2000, cuInit),
	E("cuDriverGetVersion", 2020, cuDriverGetVersion),
	E("cuGetErrorName", 6000, cuGetErrorName),
	E("cuGetErrorString", 6000, cuGetErrorString),
	E("cuGetProcAddress", 11030, cuGetProcAddress),
	E("cuGetProcAddress", 12000, cuGetProcAddress_v2),
	E("cuDeviceGet", 2000, cuDeviceGet),
	E("cuDeviceGetCount", 2000, cuDeviceGetCount),
	E("cuDeviceGetName", 2000, cuDeviceGetName),
	E("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
	E("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
	E("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
	E("cuCtxCreate", 3020, cuCtxCreate_v2),
	E("cuCtxCreate", 12050, cuCtxCreate_v4),
	E("cuCtxDestroy", 4000, cuCtxDestroy_v2),
	E("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
	E("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
	E("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
	E("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
	E("cuCtxGetDevice", 2000, cuCtxGetDevice),
	E("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
	E("cuCtxSynchronize", 2000, cuCtxSynchronize),
	E("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
	E("cuStreamCreate", 2000, cuStreamCreate),
	E("cuStreamDestroy", 4000, cuStreamDestroy_v2),
	P("cuStreamSynchronize", 2000, cuStreamSynchronize),
	E("cuMemGetInfo", 3020, cuMemGetInfo_v2),
	E("cuMemAlloc", 3020, cuMemAlloc_v2),
	E("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
	E("cuMemFree", 3020, cuMemFree_v2),
	E("cuMemAllocManaged", 6000, cuMemAllocManaged),
	E("cuMemAllocHost", 3020, cuMemAllocHost_v2),
	E("cuMemHostAlloc", 2020, cuMemHostAlloc),
	E("cuMemFreeHost", 2000, cuMemFreeHost),
	P("cuMemAllocAsync", 11020, cuMemAllocAsync),
	P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
	P("cuMemFreeAsync", 11020, cuMemFreeAsync),
	E("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
	E("cuMemPoolCreate", 11020, cuMemPoolCreate),
	E("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
	E("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo),
	E("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
	E("cuMemCreate", 10020, cuMemCreate),
	E("cuMemRelease", 10020, cuMemRelease),
	E("cuMemAddressReserve", 10020, cuMemAddressReserve),
	E("cuMemAddressFree", 10020, cuMemAddressFree),
	E("cuMemMap", 10020, cuMemMap),
	E("cuMemUnmap", 10020, cuMemUnmap),
	E("cuMemSetAccess", 10020, cuMemSetAccess),
};

#undef E
#undef P

/* Whether CU_GET_PROC_ADDRESS_DEFAULT means per-thread: the process was
 * compiled (or configured) for the per-thread default stream. */
static bool default_is_ptds(void)
{
	const char *e = getenv("CUDA_API_PER_THREAD_DEFAULT_STREAM");
	return e && strcmp(e, "1") == 0;
}

static CUresult resolve(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			CUdriverProcAddressQueryResult *status)
{
	const struct proc_entry *best = NULL;
	bool known = false, ptds;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (cudaVersion > SIM_DRIVER_VERSION)
		return CUDA_ERROR_INVALID_VALUE; /* newer than this driver, as documented */
	if (flags == CU_GET_PROC_ADDRESS_DEFAULT)
		ptds = default_is_ptds();
	else if (flags == CU_GET_PROC_ADDRESS_LEGACY_STREAM)
		ptds = false;
	else if (flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
		ptds = true;
	else
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].name, symbol) != 0)
			continue;
		known = true;
		if (table[i].version <= cudaVersion && (!best || table[i].version > best->version))
			best = &table[i];
	}
	if (!best) {
		if (status)
			*status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
					: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return CUDA_ERROR_NOT_FOUND;
	}
	/* Function pointer to void * is how the CUDA API itself hands them out. */
	*pfn = (void *)(ptds && best->ptsz ? best->ptsz : best->fn);
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

CUresult sim_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *symbolStatus)
{
	return resolve(symbol, pfn, cudaVersion, flags, symbolStatus);
}
SIM_EXPORT(cuGetProcAddress_v2);

CUresult sim_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return resolve(symbol, pfn, cudaVersion, flags, NULL);
}
SIM_EXPORT(cuGetProcAddress);
