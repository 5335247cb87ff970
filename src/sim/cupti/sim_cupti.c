// SPDX-License-Identifier: MIT
/*
 * libcupti.so.13 double: the callback API of CUPTI, driven by the simulated
 * driver. It registers itself as the driver's API observer
 * (tlm_sim_set_api_observer) and hands each memory call's ENTER and EXIT to
 * the enabled subscribers as CUpti_CallbackData, the parameters in the layout
 * of the toolkit's generated_cuda_meta.h / generated_cuda_runtime_api_meta.h
 * (src/common/cupti_abi.h, checked against the toolkit by
 * tests/cupti/abi_check.c).
 *
 * Like CUPTI up to 13.1 it takes one subscriber; a second cuptiSubscribe*
 * fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39) and
 * cuptiSubscribe_v2 names the holder. Knobs (docs/simulated-device.md):
 *   TLM_SIM_CUPTI_HOLDER=NAME   another tool holds CUPTI from the start
 *   TLM_SIM_CUPTI_VERSION=N     cuptiGetVersion (default 130001); from 130200 a
 *                               subscriber may ask for multiple subscribers
 *   TLM_SIM_CUPTI_LOG=PATH      one line per call made to this library
 *                               (subscribe, enable, unsubscribe, finalize)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cupti_abi.h"
#include "sim_driver.h"

#define PUBLIC __attribute__((visibility("default")))
#define MAX_SUBSCRIBERS 4
#define MAX_CBID 1024

struct tlm_cupti_subscriber_st {
	tlm_cupti_callback_fn cb;
	void *user;
	char name[64];
	bool allow_multiple;
	uint8_t on[2][MAX_CBID / 8]; /* [driver, runtime] enabled callback ids */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tlm_cupti_subscriber_st *subs[MAX_SUBSCRIBERS];
static _Atomic unsigned correlation;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	const char *path = getenv("TLM_SIM_CUPTI_LOG");
	if (!path || !*path)
		return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, (size_t)n);
	(void)w;
	close(fd);
}

static unsigned version(void)
{
	const char *v = getenv("TLM_SIM_CUPTI_VERSION");
	return v && *v ? (unsigned)strtoul(v, NULL, 10) : 130001u;
}

static const char *holder(void)
{
	const char *h = getenv("TLM_SIM_CUPTI_HOLDER");
	return h && *h ? h : NULL;
}

static bool enabled(const struct tlm_cupti_subscriber_st *s, int domain, uint32_t cbid)
{
	if (cbid >= MAX_CBID || (domain != TLM_CUPTI_CB_DOMAIN_DRIVER_API && domain != TLM_CUPTI_CB_DOMAIN_RUNTIME_API))
		return false;
	return s->on[domain - 1][cbid / 8] & (1u << (cbid % 8));
}

/* Per thread: the correlation of the calls in progress (ENTER pushes, EXIT pops). */
static __thread struct {
	uint32_t id;
	uint64_t data;
} corr[16];
static __thread unsigned ncorr;

static void observe(void *user, int domain, uint32_t cbid, int site, const char *name, const void *params,
		    const void *result)
{
	(void)user;
	struct tlm_cupti_subscriber_st *list[MAX_SUBSCRIBERS];
	unsigned n = 0;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < MAX_SUBSCRIBERS; i++)
		if (subs[i] && enabled(subs[i], domain, cbid))
			list[n++] = subs[i];
	pthread_mutex_unlock(&lock);
	unsigned k;
	if (site == TLM_CUPTI_API_ENTER) {
		k = ncorr < 16 ? ncorr++ : 15;
		corr[k].id = atomic_fetch_add(&correlation, 1) + 1;
		corr[k].data = 0;
	} else {
		k = ncorr ? --ncorr : 0;
	}
	CUcontext ctx = NULL;
	cuCtxGetCurrent(&ctx);
	struct tlm_cupti_cbdata d = {
		.callbackSite = site,
		.functionName = name,
		.functionParams = params,
		.functionReturnValue = (void *)(uintptr_t)result,
		.symbolName = NULL,
		.context = ctx,
		.contextUid = ctx ? 1 : 0,
		.correlationData = &corr[k].data,
		.correlationId = corr[k].id,
	};
	for (unsigned i = 0; i < n; i++)
		list[i]->cb(list[i]->user, domain, cbid, &d);
}

static tlm_cupti_result subscribe(const char *fn, tlm_cupti_subscriber *out, tlm_cupti_callback_fn cb, void *user,
				  struct tlm_cupti_subscriber_params *p)
{
	if (!out)
		return TLM_CUPTI_ERROR_INVALID_PARAMETER;
	bool multi = p && p->structSize >= TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI &&
		     version() >= TLM_CUPTI_API_VERSION_MULTI && p->allowMultipleSubscribers;
	pthread_mutex_lock(&lock);
	const char *held = holder();
	unsigned free_slot = MAX_SUBSCRIBERS, n = 0;
	for (unsigned i = 0; i < MAX_SUBSCRIBERS; i++) {
		if (subs[i]) {
			n++;
			if (!held)
				held = subs[i]->name;
		} else if (free_slot == MAX_SUBSCRIBERS) {
			free_slot = i;
		}
	}
	/* the holder (an earlier tool) must have allowed sharing too: here it
	 * always has when the version supports it */
	if ((held && !multi) || free_slot == MAX_SUBSCRIBERS) {
		if (p && p->oldSubscriberName && p->oldSubscriberSize) {
			snprintf(p->oldSubscriberName, p->oldSubscriberSize, "%s", held ? held : "?");
		}
		pthread_mutex_unlock(&lock);
		logf_("%s %d%s", fn, TLM_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, multi ? " multi" : "");
		return TLM_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	struct tlm_cupti_subscriber_st *s = calloc(1, sizeof *s);
	if (!s) {
		pthread_mutex_unlock(&lock);
		return TLM_CUPTI_ERROR_UNKNOWN;
	}
	s->cb = cb;
	s->user = user;
	s->allow_multiple = multi;
	snprintf(s->name, sizeof s->name, "CUPTI for %s", p && p->subscriberName ? p->subscriberName : "?");
	subs[free_slot] = s;
	pthread_mutex_unlock(&lock);
	tlm_sim_set_api_observer(observe, NULL);
	*out = s;
	logf_("%s 0%s%s", fn, multi ? " multi" : "", n ? " shared" : "");
	return TLM_CUPTI_SUCCESS;
}

PUBLIC tlm_cupti_result cuptiSubscribe(tlm_cupti_subscriber *subscriber, tlm_cupti_callback_fn callback, void *userdata)
{
	return subscribe("subscribe", subscriber, callback, userdata, NULL);
}

PUBLIC tlm_cupti_result cuptiSubscribe_v2(tlm_cupti_subscriber *subscriber, tlm_cupti_callback_fn callback,
					  void *userdata, struct tlm_cupti_subscriber_params *params)
{
	if (params && params->structSize < TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE)
		return TLM_CUPTI_ERROR_INVALID_PARAMETER;
	return subscribe("subscribe_v2", subscriber, callback, userdata, params);
}

static bool known(tlm_cupti_subscriber s)
{
	for (unsigned i = 0; i < MAX_SUBSCRIBERS; i++)
		if (s && subs[i] == s)
			return true;
	return false;
}

PUBLIC tlm_cupti_result cuptiUnsubscribe(tlm_cupti_subscriber subscriber)
{
	pthread_mutex_lock(&lock);
	bool ok = known(subscriber);
	for (unsigned i = 0; ok && i < MAX_SUBSCRIBERS; i++)
		if (subs[i] == subscriber)
			subs[i] = NULL; /* not freed: a callback in flight may still use it */
	pthread_mutex_unlock(&lock);
	logf_("unsubscribe %d", ok ? 0 : TLM_CUPTI_ERROR_INVALID_PARAMETER);
	return ok ? TLM_CUPTI_SUCCESS : TLM_CUPTI_ERROR_INVALID_PARAMETER;
}

PUBLIC tlm_cupti_result cuptiEnableCallback(uint32_t enable, tlm_cupti_subscriber subscriber, int domain, uint32_t cbid)
{
	pthread_mutex_lock(&lock);
	bool ok = known(subscriber) && cbid < MAX_CBID &&
		  (domain == TLM_CUPTI_CB_DOMAIN_DRIVER_API || domain == TLM_CUPTI_CB_DOMAIN_RUNTIME_API);
	if (ok) {
		uint8_t *b = &subscriber->on[domain - 1][cbid / 8];
		if (enable)
			*b |= (uint8_t)(1u << (cbid % 8));
		else
			*b &= (uint8_t)~(1u << (cbid % 8));
	}
	pthread_mutex_unlock(&lock);
	logf_("enable_callback %u %d %u %d", enable, domain, cbid, ok ? 0 : TLM_CUPTI_ERROR_INVALID_PARAMETER);
	return ok ? TLM_CUPTI_SUCCESS : TLM_CUPTI_ERROR_INVALID_PARAMETER;
}

PUBLIC tlm_cupti_result cuptiEnableDomain(uint32_t enable, tlm_cupti_subscriber subscriber, int domain)
{
	pthread_mutex_lock(&lock);
	bool ok = known(subscriber) &&
		  (domain == TLM_CUPTI_CB_DOMAIN_DRIVER_API || domain == TLM_CUPTI_CB_DOMAIN_RUNTIME_API);
	if (ok)
		memset(subscriber->on[domain - 1], enable ? 0xff : 0, sizeof subscriber->on[0]);
	pthread_mutex_unlock(&lock);
	logf_("enable_domain %u %d %d", enable, domain, ok ? 0 : TLM_CUPTI_ERROR_INVALID_PARAMETER);
	return ok ? TLM_CUPTI_SUCCESS : TLM_CUPTI_ERROR_INVALID_PARAMETER;
}

PUBLIC tlm_cupti_result cuptiGetResultString(tlm_cupti_result result, const char **str)
{
	if (!str)
		return TLM_CUPTI_ERROR_INVALID_PARAMETER;
	switch (result) {
	case TLM_CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
	case TLM_CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
	case TLM_CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
	case TLM_CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
	case TLM_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	default: *str = "CUPTI_ERROR_UNKNOWN"; return TLM_CUPTI_ERROR_INVALID_PARAMETER;
	}
	return TLM_CUPTI_SUCCESS;
}

PUBLIC tlm_cupti_result cuptiGetVersion(uint32_t *v)
{
	if (!v)
		return TLM_CUPTI_ERROR_INVALID_PARAMETER;
	*v = version();
	return TLM_CUPTI_SUCCESS;
}

/* Counted in the log: a test asserts that tlm never calls it. */
PUBLIC tlm_cupti_result cuptiFinalize(void)
{
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < MAX_SUBSCRIBERS; i++)
		subs[i] = NULL;
	pthread_mutex_unlock(&lock);
	tlm_sim_set_api_observer(NULL, NULL);
	logf_("finalize");
	return TLM_CUPTI_SUCCESS;
}
