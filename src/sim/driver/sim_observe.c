// SPDX-License-Identifier: MIT
/*
 * The simulated driver's API layer, as a profiler sees it: one observer (the
 * CUPTI double registers itself) notified at the entry and exit of every
 * memory entry point (SIM_API in sim_internal.h) and, through
 * tlm_sim_api_notify, of the runtime double's memory calls; private entry
 * points that no interposer can see; and CUDA_INJECTION64_PATH, which the
 * real driver loads inside cuInit.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

static _Atomic(tlm_sim_api_observer) observer;
static _Atomic(void *) observer_user;

void sim_tlm_sim_set_api_observer(tlm_sim_api_observer fn, void *user)
{
	atomic_store(&observer, NULL);
	atomic_store(&observer_user, user);
	atomic_store(&observer, fn);
}
SIM_EXPORT(tlm_sim_set_api_observer);

void sim_tlm_sim_api_notify(int domain, uint32_t cbid, int site, const char *name, const void *params,
			    const void *result)
{
	tlm_sim_api_observer fn = atomic_load_explicit(&observer, memory_order_acquire);
	if (fn)
		fn(atomic_load(&observer_user), domain, cbid, site, name, params, result);
}
SIM_EXPORT(tlm_sim_api_notify);

void sim_api_enter(uint32_t cbid, const char *name, const void *params)
{
	if (atomic_load_explicit(&observer, memory_order_relaxed))
		sim_tlm_sim_api_notify(TLM_CUPTI_CB_DOMAIN_DRIVER_API, cbid, TLM_CUPTI_API_ENTER, name, params, NULL);
}

void sim_api_exit(uint32_t cbid, const char *name, const void *params, CUresult result)
{
	if (atomic_load_explicit(&observer, memory_order_relaxed))
		sim_tlm_sim_api_notify(TLM_CUPTI_CB_DOMAIN_DRIVER_API, cbid, TLM_CUPTI_API_EXIT, name, params,
				       &result);
}

/* ---- private entry points ---- */

#define P(n) {#n, (void *)sim_##n, (void *)simi_##n}
static const struct {
	const char *name;
	void *api, *impl;
} private_table[] = {
	P(cuMemAlloc_v2), P(cuMemAllocPitch_v2), P(cuMemFree_v2), P(cuMemAllocManaged), P(cuMemAllocHost_v2),
	P(cuMemHostAlloc), P(cuMemFreeHost), P(cuMemAllocAsync), P(cuMemAllocAsync_ptsz),
	P(cuMemAllocFromPoolAsync), P(cuMemAllocFromPoolAsync_ptsz), P(cuMemFreeAsync), P(cuMemFreeAsync_ptsz),
	P(cuMemPoolCreate), P(cuMemPoolDestroy), P(cuMemPoolTrimTo), P(cuMemCreate), P(cuMemRelease),
	P(cuMemAddressReserve), P(cuMemAddressFree), P(cuMemMap), P(cuMemUnmap),
};
#undef P

void *sim_tlm_sim_private_entry(const char *name, int internal)
{
	for (size_t i = 0; name && i < sizeof private_table / sizeof private_table[0]; i++)
		if (!strcmp(private_table[i].name, name))
			return internal ? private_table[i].impl : private_table[i].api;
	return NULL;
}
SIM_EXPORT(tlm_sim_private_entry);

/* ---- CUDA_INJECTION64_PATH ---- */

static pthread_once_t injection_once = PTHREAD_ONCE_INIT;

static void load_injection(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		return;
	void *h = dlopen(path, RTLD_NOW);
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	if (!init) {
		fprintf(stderr, "tlm-sim: CUDA_INJECTION64_PATH: cannot use '%s'\n", path);
		return;
	}
	init();
}

void sim_injection_once(void)
{
	pthread_once(&injection_once, load_injection);
}
