// SPDX-License-Identifier: MIT
/*
 * cuGetProcAddress: resolve a base name (e.g. "cuMemAlloc") for a requested
 * CUDA version to the ABI flavour that version means (cuMemAlloc_v2 from
 * 3020), then to the simulator's own code for that ABI name, if it has it.
 *
 * The (name, version) -> ABI name mapping is CUDA's whole ABI history
 * (sim_abi_history.inc, generated from the toolkit's typedef headers); the
 * ABI name -> code mapping is every entry point the simulator defines
 * (sim_exports.h). A name in the history that the simulator does not
 * implement is CUDA_ERROR_NOT_FOUND, as a driver lacking it would answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exports.h"
#include "sim_internal.h"

struct abi_row {
	const char *name; /* base name, as passed to cuGetProcAddress */
	int version;      /* CUDA version this flavour (or its per-thread variant) appeared */
	const char *abi;  /* the ABI symbol that version means */
	const char *pt;   /* "_ptds"/"_ptsz" when the per-thread variant exists from here */
};

#define H(n, v, a, p) {n, v, a, p},
static const struct abi_row history[] = {
#include "sim_abi_history.inc"
};
#undef H
#define NHIST (sizeof(history) / sizeof(history[0]))

static int cmp_export(const void *key, const void *e)
{
	return strcmp(key, ((const struct sim_export *)e)->name);
}

void *sim_lookup_abi(const char *abi)
{
	const struct sim_export *e =
		bsearch(abi, sim_exports, sim_nexports, sizeof(sim_exports[0]), cmp_export);
	return e ? (void *)e->fn : NULL;
}

/* Whether CU_GET_PROC_ADDRESS_DEFAULT means per-thread: the process was
 * compiled (or configured) for the per-thread default stream. */
static bool default_is_ptds(void)
{
	const char *e = getenv("CUDA_API_PER_THREAD_DEFAULT_STREAM");
	return e && strcmp(e, "1") == 0;
}

/* The history is sorted by name, then version: find the first row of name. */
static size_t first_row(const char *name)
{
	size_t lo = 0, hi = NHIST;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(history[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* TLM_SIM_HIDE=name,name: base names cuGetProcAddress answers as unknown, so
 * tests can stand in for a driver that lacks them. */
static bool hidden(const char *symbol)
{
	const char *h = getenv("TLM_SIM_HIDE");
	size_t n = strlen(symbol);
	for (const char *p = h; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, symbol, n) == 0)
			return true;
		p = end ? end + 1 : p + len;
	}
	return false;
}

static CUresult resolve(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
			CUdriverProcAddressQueryResult *status)
{
	const struct abi_row *best = NULL;
	bool known = false, ptds;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (cudaVersion > sim_driver_version()) {
		/* A runtime or library built for a newer CUDA: say so once. */
		static int said;
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			fprintf(stderr,
				"tlm-sim: %s asked for at CUDA %d.%d, newer than this simulated driver (%d.%d): "
				"CUDA_ERROR_INVALID_VALUE\n",
				symbol, cudaVersion / 1000, cudaVersion % 1000 / 10, sim_driver_version() / 1000,
				sim_driver_version() % 1000 / 10);
		return CUDA_ERROR_INVALID_VALUE; /* newer than this driver, as documented */
	}
	if (flags == CU_GET_PROC_ADDRESS_DEFAULT)
		ptds = default_is_ptds();
	else if (flags == CU_GET_PROC_ADDRESS_LEGACY_STREAM)
		ptds = false;
	else if (flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
		ptds = true;
	else
		return CUDA_ERROR_INVALID_VALUE;
	if (hidden(symbol))
		return CUDA_ERROR_NOT_FOUND;
	const char *pt = NULL;
	for (size_t i = first_row(symbol); i < NHIST && strcmp(history[i].name, symbol) == 0; i++) {
		known = true;
		if (history[i].version <= cudaVersion)
			best = &history[i];
	}
	if (best) {
		/* The per-thread variant of best's flavour, if any version has it. */
		for (size_t i = first_row(symbol); i < NHIST && strcmp(history[i].name, symbol) == 0; i++)
			if (history[i].pt[0] && strcmp(history[i].abi, best->abi) == 0 &&
			    history[i].version <= cudaVersion)
				pt = history[i].pt;
	}
	if (!best) {
		if (status)
			*status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
					: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return CUDA_ERROR_NOT_FOUND;
	}
	void *fn = NULL;
	if (ptds && pt) {
		char buf[128];
		size_t n = strlen(best->abi);
		if (n + strlen(pt) < sizeof(buf)) {
			memcpy(buf, best->abi, n);
			strcpy(buf + n, pt);
			fn = sim_lookup_abi(buf);
		}
	}
	if (!fn)
		fn = sim_lookup_abi(best->abi);
	if (!fn) {
		const char *e = getenv("TLM_SIM_LOG_UNKNOWN");
		if (e && e[0] == '1')
			fprintf(stderr, "tlm-sim: cuGetProcAddress(%s, %d) -> %s%s: not modelled\n", symbol,
				cudaVersion, best->abi, ptds && pt ? pt : "");
		return CUDA_ERROR_NOT_FOUND; /* status: SYMBOL_NOT_FOUND, not implemented here */
	}
	*pfn = fn;
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
