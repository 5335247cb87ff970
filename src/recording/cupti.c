/* SPDX-License-Identifier: MIT */
/*
 * cupti.c - CUPTI, the second source: its runtime and driver API callbacks
 * see the memory calls that reach CUDA without passing any entry point tlm
 * interposes (private export tables, a static runtime reaching the driver in a
 * way we did not foresee). docs/cupti.md describes the behaviour. This file
 * loads libcupti, subscribes and decides in the callbacks what to record;
 * cupti_events.c reads each callback's parameters (cupti_int.h).
 *
 * Contract:
 * - libcupti is loaded at run time, never linked, once CUDA is initialised:
 *   after the first successful cuInit through our wrapper, or from
 *   InitializeInjection when libtlm.so is named in CUDA_INJECTION64_PATH.
 *   Set-up runs once, on the thread that initialised CUDA, never inside a
 *   callback.
 * - De-duplication: our wrappers run the real call inside the guard
 *   (guard.h), so a driver callback outside it is a call no wrapper saw: it
 *   is recorded, with TLM_EVF_CUPTI (frees at the ENTER site, before the real free, allocations
 *   at EXIT). A runtime callback outside it opens a frame on its thread; if no
 *   driver memory callback (wrapped or not) happened inside it, the runtime
 *   call reached the driver by a path CUPTI's driver domain does not show
 *   either, and it is recorded at its EXIT, with TLM_EVF_RUNTIME too. So one
 *   user call is one event, at the layer that saw it.
 * - Coexistence: tlm never calls cuptiFinalize and never unsubscribes a
 *   working subscription; when another tool holds CUPTI it says so once and
 *   records with interposition alone.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cuda_abi.h"
#include "common/cupti_abi.h"
#include "recording/config.h"
#include "recording/cupti_int.h"
#include "recording/guard.h"
#include "recording/log.h"
#include "recording/realsym.h"
#include "recording/recorder.h"
#include "recording/vmm_refs.h"

static struct {
	tlm_cupti_result (*subscribe)(tlm_cupti_subscriber *, tlm_cupti_callback_fn, void *);
	tlm_cupti_result (*subscribe_v2)(tlm_cupti_subscriber *, tlm_cupti_callback_fn, void *,
					 struct tlm_cupti_subscriber_params *);
	tlm_cupti_result (*unsubscribe)(tlm_cupti_subscriber);
	tlm_cupti_result (*enable_callback)(uint32_t, tlm_cupti_subscriber, int, uint32_t);
	tlm_cupti_result (*result_string)(tlm_cupti_result, const char **);
	tlm_cupti_result (*version)(uint32_t *);
} api;

enum { SETUP_IDLE, SETUP_BUSY, SETUP_DONE };
static _Atomic int setup_state;
static tlm_cupti_subscriber subscriber;

static const uint32_t driver_cbids[] = {
	TLM_CUPTI_DRV_cuMemAlloc_v2, TLM_CUPTI_DRV_cuMemAllocPitch_v2, TLM_CUPTI_DRV_cuMemFree_v2,
	TLM_CUPTI_DRV_cuMemAllocHost_v2, TLM_CUPTI_DRV_cuMemHostAlloc, TLM_CUPTI_DRV_cuMemFreeHost,
	TLM_CUPTI_DRV_cuMemAllocManaged, TLM_CUPTI_DRV_cuMemAddressReserve, TLM_CUPTI_DRV_cuMemAddressFree,
	TLM_CUPTI_DRV_cuMemCreate, TLM_CUPTI_DRV_cuMemRelease, TLM_CUPTI_DRV_cuMemMap, TLM_CUPTI_DRV_cuMemUnmap,
	TLM_CUPTI_DRV_cuMemAllocAsync, TLM_CUPTI_DRV_cuMemAllocAsync_ptsz, TLM_CUPTI_DRV_cuMemFreeAsync,
	TLM_CUPTI_DRV_cuMemFreeAsync_ptsz, TLM_CUPTI_DRV_cuMemPoolTrimTo, TLM_CUPTI_DRV_cuMemPoolCreate,
	TLM_CUPTI_DRV_cuMemPoolDestroy, TLM_CUPTI_DRV_cuMemAllocFromPoolAsync,
	TLM_CUPTI_DRV_cuMemAllocFromPoolAsync_ptsz, TLM_CUPTI_DRV_cuMemRetainAllocationHandle,
	TLM_CUPTI_DRV_cuMemImportFromShareableHandle,
};
static const uint32_t runtime_cbids[] = {
	TLM_CUPTI_RT_cudaMalloc, TLM_CUPTI_RT_cudaMallocPitch, TLM_CUPTI_RT_cudaFree, TLM_CUPTI_RT_cudaMallocHost,
	TLM_CUPTI_RT_cudaFreeHost, TLM_CUPTI_RT_cudaHostAlloc, TLM_CUPTI_RT_cudaMalloc3D,
	TLM_CUPTI_RT_cudaMallocManaged, TLM_CUPTI_RT_cudaMallocAsync, TLM_CUPTI_RT_cudaMallocAsync_ptsz,
	TLM_CUPTI_RT_cudaFreeAsync, TLM_CUPTI_RT_cudaFreeAsync_ptsz, TLM_CUPTI_RT_cudaMallocFromPoolAsync,
	TLM_CUPTI_RT_cudaMallocFromPoolAsync_ptsz,
};
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define RESULT_UNKNOWN 999 /* CUDA_ERROR_UNKNOWN: no return value given */

/* ------------------------------------------------------------ callbacks */

/* Per thread (default TLS model: libtlm.so may be dlopened as an injection
 * library, where static TLS is scarce). */
static __thread struct {
	uint32_t rt_cbid;   /* runtime call open outside the guard, 0 = none */
	bool rt_covered;    /* a driver memory callback ran inside it */
	unsigned npend;     /* frees begun at ENTER, committed at EXIT */
	struct {
		uint32_t cbid;
		struct tlm__rec rc;
	} pend[2];
} cs;

/* The references of a VMM handle (vmm_refs.c), as the hooks keep them: a
 * retain or an import adds one; a release that drops one of those frees
 * nothing. True when the callback is done with (nothing to record). */
static bool vmm_refs(uint32_t cbid, const struct tlm_cupti_cbdata *d)
{
	bool ok = d->callbackSite == TLM_CUPTI_API_EXIT && d->functionReturnValue &&
		  *(const int32_t *)d->functionReturnValue == 0;
	if (cbid == TLM_CUPTI_DRV_cuMemRetainAllocationHandle) {
		const struct tlm_cupti_p_cuMemRetainAllocationHandle *p = d->functionParams;
		if (ok && p->handle)
			tlm__vmm_retained(*p->handle);
		return true;
	}
	if (cbid == TLM_CUPTI_DRV_cuMemImportFromShareableHandle) {
		const struct tlm_cupti_p_cuMemImportFromShareableHandle *p = d->functionParams;
		if (ok && p->handle)
			tlm__vmm_imported(*p->handle);
		return true;
	}
	if (cbid == TLM_CUPTI_DRV_cuMemCreate && ok) {
		const struct tlm_cupti_p_cuMemCreate *p = d->functionParams;
		if (p->handle)
			tlm__vmm_created(*p->handle);
	}
	if (cbid == TLM_CUPTI_DRV_cuMemRelease && d->callbackSite == TLM_CUPTI_API_ENTER) {
		const struct tlm_cupti_p_cuMemRelease *p = d->functionParams;
		return !tlm__vmm_release_frees(p->handle);
	}
	return false;
}

static void on_driver(uint32_t cbid, const struct tlm_cupti_cbdata *d)
{
	if (cs.rt_cbid)
		cs.rt_covered = true;
	if (tlm__in_hook())
		return; /* inside one of our wrappers: interposition records it */
	struct tlm__evargs a;
	if (vmm_refs(cbid, d))
		return;
	struct tlm__guard g; /* our own CUDA calls from here are not the program's */
	if (d->callbackSite == TLM_CUPTI_API_ENTER) {
		(void)tlm__guard_enter(&g);
		if (tlm__cupti_driver_free(cbid, d->functionParams, &a) && tlm__recording() && cs.npend < N(cs.pend)) {
			a.flags |= TLM_EVF_CUPTI;
			if (tlm__free_begin(&cs.pend[cs.npend].rc, &a))
				cs.pend[cs.npend++].cbid = cbid;
		}
		tlm__leave(&g);
		return;
	}
	int32_t r = d->functionReturnValue ? *(const int32_t *)d->functionReturnValue : RESULT_UNKNOWN;
	if (cs.npend && cs.pend[cs.npend - 1].cbid == cbid) {
		cs.npend--;
		tlm__free_end(&cs.pend[cs.npend].rc, r);
		return;
	}
	(void)tlm__guard_enter(&g);
	if (tlm__cupti_driver_alloc(cbid, d->functionParams, r, &a) && tlm__recording()) {
		a.flags |= TLM_EVF_CUPTI;
		a.result = r;
		tlm__record(&a);
	}
	tlm__leave(&g);
}

static void on_runtime(uint32_t cbid, const struct tlm_cupti_cbdata *d)
{
	if (tlm__in_hook())
		return; /* inside our runtime hook */
	if (d->callbackSite == TLM_CUPTI_API_ENTER) {
		if (!cs.rt_cbid) {
			cs.rt_cbid = cbid;
			cs.rt_covered = false;
		}
		return;
	}
	if (cs.rt_cbid != cbid)
		return;
	cs.rt_cbid = 0;
	if (cs.rt_covered)
		return; /* its driver call was recorded (by a wrapper or above) */
	int32_t r = d->functionReturnValue ? *(const int32_t *)d->functionReturnValue : RESULT_UNKNOWN;
	struct tlm__evargs a;
	struct tlm__guard g;
	(void)tlm__guard_enter(&g);
	if (tlm__cupti_runtime_event(cbid, d->functionParams, r, &a) && tlm__recording()) {
		a.flags |= TLM_EVF_CUPTI;
		tlm__record(&a);
	}
	tlm__leave(&g);
}

static void on_callback(void *user, int domain, uint32_t cbid, const void *data)
{
	(void)user;
	if (!data)
		return;
	if (domain == TLM_CUPTI_CB_DOMAIN_DRIVER_API)
		on_driver(cbid, data);
	else if (domain == TLM_CUPTI_CB_DOMAIN_RUNTIME_API)
		on_runtime(cbid, data);
}

/* ------------------------------------------------------------ loading */

static void *try_open(const char *path, char *where, size_t n)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		snprintf(where, n, "%s", path);
	return h;
}

struct sites {
	char dir[4][400];
	unsigned n;
};

/* pip layouts: the site-packages directories of the libraries loaded now
 * (libcudart, libtorch, ... live under .../site-packages/). */
static int find_sites(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct sites *s = arg;
	const char *name = info->dlpi_name;
	const char *k = name ? strstr(name, "/site-packages/") : NULL;
	if (!k)
		k = name ? strstr(name, "/dist-packages/") : NULL;
	if (!k || s->n == 4)
		return 0;
	size_t len = (size_t)(strchr(k + 1, '/') - name);
	if (len >= sizeof s->dir[0])
		return 0;
	for (unsigned i = 0; i < s->n; i++)
		if (strlen(s->dir[i]) == len && !strncmp(s->dir[i], name, len))
			return 0;
	memcpy(s->dir[s->n], name, len);
	s->dir[s->n++][len] = 0;
	return 0;
}

/* An already loaded copy first, then $CUDA_HOME, the toolkit, the pip wheels,
 * the dynamic loader's own search; majors from the driver's down to 12. */
#define DIR_MAX 600
static void *open_cupti(int major, char *where, size_t n)
{
	char path[DIR_MAX + 32];
	if (tlm__cfg.cupti_library[0])
		return try_open(tlm__cfg.cupti_library, where, n);
	if (major < 12 || major > 99)
		major = 13;
	for (int m = major; m >= 12; m--) {
		snprintf(path, sizeof path, "libcupti.so.%d", m);
		void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			snprintf(where, n, "%s (already loaded)", path);
			return h;
		}
	}
	const char *home = getenv("CUDA_HOME");
	char dirs[12][DIR_MAX];
	unsigned nd = 0;
	if (home && *home) {
		snprintf(dirs[nd++], sizeof dirs[0], "%s/extras/CUPTI/lib64", home);
		snprintf(dirs[nd++], sizeof dirs[0], "%s/lib64", home);
	}
	snprintf(dirs[nd++], sizeof dirs[0], "/usr/local/cuda/extras/CUPTI/lib64");
	snprintf(dirs[nd++], sizeof dirs[0], "/usr/local/cuda/lib64");
	snprintf(dirs[nd++], sizeof dirs[0], "/usr/local/cuda/lib");
	struct sites s = {.n = 0};
	dl_iterate_phdr(find_sites, &s);
	for (unsigned i = 0; i < s.n && nd + 2 <= N(dirs); i++) {
		snprintf(dirs[nd++], sizeof dirs[0], "%s/nvidia/cu%d/lib", s.dir[i], major);
		snprintf(dirs[nd++], sizeof dirs[0], "%s/nvidia/cuda_cupti/lib", s.dir[i]);
	}
	for (unsigned i = 0; i < nd; i++)
		for (int m = major; m >= 12; m--) {
			int k = snprintf(path, sizeof path, "%s/libcupti.so.%d", dirs[i], m);
			if (k > 0 && (size_t)k < sizeof path && access(path, R_OK) == 0) {
				void *h = try_open(path, where, n);
				if (h)
					return h;
			}
		}
	for (int m = major; m >= 12; m--) {
		snprintf(path, sizeof path, "libcupti.so.%d", m);
		void *h = try_open(path, where, n);
		if (h)
			return h;
	}
	return NULL;
}

static const char *result_name(tlm_cupti_result r)
{
	const char *s = NULL;
	if (api.result_string && api.result_string(r, &s) == TLM_CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

/* What became of CUPTI goes into the trace (PROP records "cupti" and
 * "cupti.detail", docs/trace-format.md), so that the report can say whether
 * calls that bypass the hooks could have been seen at all. */
static void outcome(const char *state, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outcome(const char *state, const char *fmt, ...)
{
	char detail[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	tlm__writer_prop("cupti.detail", detail);
	tlm__writer_prop("cupti", state);
}

static void set_up(bool injected)
{
	bool verbose = tlm__cfg.cupti == TLM__CUPTI_ON;
	if (tlm__cfg.disabled)
		return;
	if (tlm__cfg.cupti == TLM__CUPTI_OFF) {
		outcome("off", "TLM_CUPTI=off");
		return;
	}
	/* CUPTI attaches through the driver's export tables: a driver without
	 * them (a stub) cannot host it, and tlm's simulator (which serves only the
	 * runtime's tables, not CUPTI's; it exports tlm_sim_used_pages) cannot
	 * either. On the simulator even TLM_CUPTI=on or an injection does not
	 * load NVIDIA's CUPTI: PyTorch's CUPTI 13.2 asks again for a table it is
	 * refused until its stack overflows, killing the program. Only a library
	 * named in TLM_CUPTI_LIBRARY is tried there (tlm's CUPTI double). */
	if (!tlm__cfg.cupti_library[0] && tlm__libcuda_sym("tlm_sim_used_pages")) {
		outcome("skipped", "the driver is tlm's simulator, which serves the runtime's "
				   "export tables but not CUPTI's");
		if (verbose || injected)
			tlm__log("CUPTI not used: NVIDIA's CUPTI cannot run on tlm's simulated driver; "
				 "recording with interposition alone");
		return;
	}
	if (!verbose && !injected && !tlm__cfg.cupti_library[0] && !tlm__libcuda_sym("cuGetExportTable")) {
		outcome("skipped", "the driver has no export tables: a stub driver");
		return;
	}
	int version = 0;
	CUresult (*get_version)(int *) = (CUresult(*)(int *))tlm__libcuda_sym("cuDriverGetVersion");
	if (get_version)
		get_version(&version);
	char where[sizeof tlm__cfg.cupti_library + 32] = "";
	void *h = open_cupti(version / 1000, where, sizeof where);
	if (!h) {
		if (verbose)
			tlm__log("CUPTI not found; recording with interposition alone");
		if (tlm__cfg.cupti_library[0])
			outcome("absent", "cannot load %s (TLM_CUPTI_LIBRARY)", tlm__cfg.cupti_library);
		else if (version > 0)
			outcome("absent", "no libcupti.so.%d or older found; driver %d.%d", version / 1000,
				version / 1000, version % 1000 / 10);
		else
			outcome("absent", "no libcupti found (driver version unknown)");
		return;
	}
	tlm__resolve_dlsym();
	*(void **)&api.subscribe = tlm__real_dlsym(h, "cuptiSubscribe");
	*(void **)&api.subscribe_v2 = tlm__real_dlsym(h, "cuptiSubscribe_v2");
	*(void **)&api.unsubscribe = tlm__real_dlsym(h, "cuptiUnsubscribe");
	*(void **)&api.enable_callback = tlm__real_dlsym(h, "cuptiEnableCallback");
	*(void **)&api.result_string = tlm__real_dlsym(h, "cuptiGetResultString");
	*(void **)&api.version = tlm__real_dlsym(h, "cuptiGetVersion");
	if (!api.enable_callback || (!api.subscribe && !api.subscribe_v2)) {
		if (verbose)
			tlm__log("CUPTI at %s lacks the callback API; recording with interposition alone", where);
		outcome("unusable", "%s lacks the callback API", where);
		return;
	}
	char holder[TLM_CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
	tlm_cupti_result r;
	if (api.subscribe_v2) {
		uint32_t v = 0;
		if (api.version)
			api.version(&v);
		bool multi = v >= TLM_CUPTI_API_VERSION_MULTI; /* 13.2: share CUPTI with other tools */
		struct tlm_cupti_subscriber_params p = {
			.structSize = multi ? TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI : TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE,
			.subscriberName = "tlm",
			.oldSubscriberName = holder,
			.oldSubscriberSize = sizeof holder,
			.allowMultipleSubscribers = multi,
		};
		r = api.subscribe_v2(&subscriber, on_callback, NULL, &p);
	} else {
		r = api.subscribe(&subscriber, on_callback, NULL);
	}
	if (r == TLM_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		holder[sizeof holder - 1] = 0;
		for (char *c = holder; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (holder[0])
			tlm__log("CUPTI is held by another tool (%s); continuing with interposition alone", holder);
		else
			tlm__log("CUPTI is held by another tool; continuing with interposition alone");
		outcome("held", "%s", holder);
		return;
	}
	if (r != TLM_CUPTI_SUCCESS) {
		if (verbose)
			tlm__log("CUPTI: cuptiSubscribe failed (%s); recording with interposition alone", result_name(r));
		outcome("unusable", "cuptiSubscribe failed: %s", result_name(r));
		return;
	}
	unsigned on = 0, want = 0;
	for (size_t i = 0; i < N(driver_cbids); i++, want++)
		on += api.enable_callback(1, subscriber, TLM_CUPTI_CB_DOMAIN_DRIVER_API, driver_cbids[i]) ==
		      TLM_CUPTI_SUCCESS;
	for (size_t i = 0; i < N(runtime_cbids); i++, want++)
		on += api.enable_callback(1, subscriber, TLM_CUPTI_CB_DOMAIN_RUNTIME_API, runtime_cbids[i]) ==
		      TLM_CUPTI_SUCCESS;
	if (on == 0) {
		if (api.unsubscribe)
			api.unsubscribe(subscriber); /* ours, and useless: let another tool have it */
		if (verbose)
			tlm__log("CUPTI: no callback could be enabled; recording with interposition alone");
		outcome("unusable", "%s: no callback could be enabled", where);
		return;
	}
	if (verbose)
		tlm__log("CUPTI: %s, %u of %u callbacks on", where, on, want);
	outcome("attached", "%s, %u of %u callbacks%s", where, on, want, injected ? ", injected" : "");
}

static void set_up_once(bool injected)
{
	int expect = SETUP_IDLE;
	if (!atomic_compare_exchange_strong(&setup_state, &expect, SETUP_BUSY))
		return; /* done, or another thread is at it */
	tlm__config_ensure();
	struct tlm__guard g; /* CUDA calls made while CUPTI attaches are not the program's */
	(void)tlm__guard_enter(&g);
	set_up(injected);
	tlm__leave(&g);
	atomic_store(&setup_state, SETUP_DONE);
}

void tlm__cupti_after_init(void)
{
	if (TLM_LIKELY(atomic_load_explicit(&setup_state, memory_order_relaxed) != SETUP_IDLE))
		return;
	set_up_once(false);
}

/* CUDA_INJECTION64_PATH=libtlm.so: the driver calls this inside cuInit. */
TLM_EXPORT int InitializeInjection(void)
{
	set_up_once(true);
	return 1;
}
