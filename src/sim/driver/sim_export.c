// SPDX-License-Identifier: MIT
/*
 * cuGetExportTable: the driver's private tables NVIDIA's runtime asks for
 * (UUIDs, slots and meanings as observed and as publicly described by
 * vosen/ZLUDA; ../shared/notes/cuda-private-interface.md). A table is an
 * array of pointer-sized slots, slot 0 its size in bytes where the runtime
 * expects that. Slots whose meaning is unknown hold a function that returns
 * CUDA_ERROR_NOT_SUPPORTED and, with TLM_SIM_LOG_UNKNOWN=1, says which slot
 * was called. An unknown UUID is CUDA_ERROR_INVALID_VALUE, *table untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim_integrity.h"
#include "sim_internal.h"

typedef void (*slot_fn)(void);

/* ---- unknown slots: one function per (table, slot) so a log can tell ---- */

static void unknown_called(const char *table, int slot)
{
	const char *e = getenv("TLM_SIM_LOG_UNKNOWN");
	if (e && e[0] == '1')
		fprintf(stderr, "tlm-sim: export table %s slot %d called (not modelled)\n", table, slot);
}

#define UNKNOWN(tbl, n)                                                                            \
	static CUresult unk_##tbl##_##n(void)                                                      \
	{                                                                                          \
		unknown_called(#tbl, n);                                                           \
		return CUDA_ERROR_NOT_SUPPORTED;                                                   \
	}

/* ---- CUDART_INTERFACE 6bd5fb6c-5bf4-e74a-8987-d93912fd9df9 ---- */

/* [2]: the device's primary context, retained or not. */
static CUresult cudart_primary_ctx(CUcontext *out, CUdevice dev)
{
	CUresult r = sim_enter_device(!out, dev);
	if (r)
		return r;
	*out = sim_primary_ctx(dev);
	return CUDA_SUCCESS;
}

/* [7]: called with one word, returns nothing (publicly described, meaning unknown). */
static void cudart_slot7(uintptr_t arg)
{
	(void)arg;
}

/* [12]: loads the PTX compilers in the real driver; nothing to load here. */
static CUresult cudart_load_compilers(void)
{
	return CUDA_SUCCESS;
}

UNKNOWN(cudart, 1)
UNKNOWN(cudart, 3)
UNKNOWN(cudart, 4)
UNKNOWN(cudart, 5)
UNKNOWN(cudart, 6)
UNKNOWN(cudart, 8)
UNKNOWN(cudart, 9)
UNKNOWN(cudart, 10)
UNKNOWN(cudart, 11)

static const void *cudart_table[13] = {
	(void *)(uintptr_t)sizeof(cudart_table), (void *)unk_cudart_1, (void *)cudart_primary_ctx,
	(void *)unk_cudart_3, (void *)unk_cudart_4, (void *)unk_cudart_5, (void *)unk_cudart_6,
	(void *)cudart_slot7, (void *)unk_cudart_8, (void *)unk_cudart_9, (void *)unk_cudart_10,
	(void *)unk_cudart_11, (void *)cudart_load_compilers,
};

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS a094798c-2e74-2e74-93f2-0800200c0a66 ---- */

/* [2] and [6] hand out driver-owned scratch buffers (sizes as observed). */
static uint32_t hook_buf1[1024], hook_buf2[14];

static void hooks_buf1(void **buf, size_t *n)
{
	if (buf)
		*buf = hook_buf1;
	if (n)
		*n = sizeof(hook_buf1) / sizeof(hook_buf1[0]);
}

static void hooks_buf2(void **buf, size_t *n)
{
	if (buf)
		*buf = hook_buf2;
	if (n)
		*n = sizeof(hook_buf2) / sizeof(hook_buf2[0]);
}

UNKNOWN(hooks, 1)
UNKNOWN(hooks, 3)
UNKNOWN(hooks, 4)
UNKNOWN(hooks, 5)

static const void *hooks_table[7] = {
	(void *)(uintptr_t)sizeof(hooks_table), (void *)unk_hooks_1, (void *)hooks_buf1,
	(void *)unk_hooks_3, (void *)unk_hooks_4, (void *)unk_hooks_5, (void *)hooks_buf2,
};

/* ---- TOOLS_TLS 42d85a81-23f6-cb47-8298-f6e78a3aecdc ---- */

UNKNOWN(tls, 1)
UNKNOWN(tls, 2)
UNKNOWN(tls, 3)

static const void *tls_table[4] = {
	(void *)(uintptr_t)sizeof(tls_table), (void *)unk_tls_1, (void *)unk_tls_2, (void *)unk_tls_3,
};

/* ---- CONTEXT_LOCAL_STORAGE c693336e-1121-df11-a8c3-68f355d89593 ---- */

typedef void (*cls_dtor)(CUcontext, void *key, void *value);

struct cls_entry {
	CUcontext ctx;
	void *key, *value;
	cls_dtor dtor;
};

/* A handful of keys per context (one per runtime instance): a small array
 * scanned under its own lock is cheaper than anything cleverer. */
#define CLS_MAX 256
static struct cls_entry cls[CLS_MAX];
static int ncls;
static pthread_mutex_t cls_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult cls_ctx(CUcontext *ctx)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!*ctx)
		*ctx = sim_current_ctx();
	if (!*ctx || !sim_ctx_valid(*ctx, NULL))
		return CUDA_ERROR_INVALID_CONTEXT;
	return CUDA_SUCCESS;
}

static CUresult cls_put(CUcontext ctx, void *key, void *value, cls_dtor dtor)
{
	CUresult r = cls_ctx(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&cls_lock);
	for (int i = 0; i < ncls; i++)
		if (cls[i].ctx == ctx && cls[i].key == key) {
			cls[i].value = value, cls[i].dtor = dtor;
			pthread_mutex_unlock(&cls_lock);
			return CUDA_SUCCESS;
		}
	if (ncls == CLS_MAX) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		cls[ncls++] = (struct cls_entry){ctx, key, value, dtor};
	}
	pthread_mutex_unlock(&cls_lock);
	return r;
}

static CUresult cls_delete(CUcontext ctx, void *key)
{
	CUresult r = cls_ctx(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&cls_lock);
	for (int i = 0; i < ncls; i++)
		if (cls[i].ctx == ctx && cls[i].key == key) {
			cls[i] = cls[--ncls];
			break;
		}
	pthread_mutex_unlock(&cls_lock);
	return CUDA_SUCCESS;
}

static CUresult cls_get(void **value, CUcontext ctx, void *key)
{
	CUresult r = cls_ctx(&ctx);
	if (r)
		return r;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	r = CUDA_ERROR_INVALID_HANDLE; /* not there: the runtime then sets it up */
	pthread_mutex_lock(&cls_lock);
	for (int i = 0; i < ncls; i++)
		if (cls[i].ctx == ctx && cls[i].key == key) {
			*value = cls[i].value;
			r = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&cls_lock);
	return r;
}

UNKNOWN(cls, 3)

static const void *cls_table[4] = {
	(void *)cls_put, (void *)cls_delete, (void *)cls_get, (void *)unk_cls_3,
};

/* ---- CONTEXT_CHECKS 263e8860-7cd2-6143-92f6-bbd5006dfa7e ---- */

static CUresult checks_ctx(CUcontext ctx, uint32_t *out, void **unused)
{
	(void)ctx, (void)unused;
	if (out)
		*out = 0;
	return CUDA_SUCCESS;
}

static uint32_t checks_3(void)
{
	return 0;
}

UNKNOWN(checks, 1)

static const void *checks_table[4] = {
	(void *)(uintptr_t)sizeof(checks_table), (void *)unk_checks_1, (void *)checks_ctx,
	(void *)checks_3,
};

/* ---- INTEGRITY_CHECK d4082055-bde6-704b-8d34-ba123c66e1f2 ---- */

static CUresult integrity(uint32_t version, uint64_t seconds, uint64_t out[2]);

/* The runtime versions whose start-up was checked on this driver (CUDA x.y
 * as 1000 x + 10 y). A runtime passes its own version (+0, +1, +2) to the
 * integrity check, which is how the driver learns it. */
/* 13.2: the PyTorch 2.15 wheel's libcudart; 13.3: its NCCL's static one; 13.4:
 * its cuDNN 9.26's (tests/nccl, tests/torch/real claims) */
static const unsigned known_runtimes[] = {12090, 13000, 13020, 13030, 13040, 13050};

static void check_runtime_version(uint32_t version)
{
	static int said;
	unsigned v = version - version % 10;
	const char *list = getenv("TLM_SIM_KNOWN_RUNTIMES"); /* tests: e.g. "13000" */
	bool known = false;
	if (list) {
		for (const char *p = list; *p;) {
			char *end;
			unsigned long x = strtoul(p, &end, 10);
			if (end == p)
				break;
			known |= x == v;
			p = *end == ',' ? end + 1 : end;
		}
	} else {
		for (size_t i = 0; i < sizeof(known_runtimes) / sizeof(known_runtimes[0]); i++)
			known |= known_runtimes[i] == v;
	}
	if (!known && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr,
			"tlm-sim: CUDA runtime %u.%u is not one this simulated driver was checked with "
			"(12.9, 13.0, 13.2, 13.3, 13.4, 13.5): its private interface may differ and it may "
			"fail\n",
			v / 1000, v % 1000 / 10);
}

UNKNOWN(integrity, 2)

static const void *integrity_table[3] = {
	(void *)(uintptr_t)sizeof(integrity_table), (void *)integrity, (void *)unk_integrity_2,
};

static CUresult integrity(uint32_t version, uint64_t seconds, uint64_t out[2])
{
	struct sim_integrity_device devs[SIM_MAX_DEVICES];
	CUresult r = sim_enter(!out);
	if (r)
		return r;
	check_runtime_version(version);
	struct sim_integrity_header h = {
		.driver_version = (uint32_t)sim_driver_version(),
		.version = version,
		.pid = (uint32_t)getpid(),
		.thread = (uint32_t)pthread_self(),
		.cudart_table = cudart_table,
		.integrity_table = integrity_table,
		.integrity_fn = integrity_table[1],
		.seconds = seconds,
	};
	for (int d = 0; d < sim_ndev; d++) {
		sim_device_uuid(d, devs[d].uuid);
		devs[d].pci_domain = 0;
		devs[d].pci_bus = sim_device_pci_bus(d);
		devs[d].pci_device = 0;
	}
	sim_integrity_compute(&h, devs, sim_ndev, out);
	return CUDA_SUCCESS;
}

/* ---- 21318c60-9714-3248-8ca6-41ff7324c8f2: asked at start-up by the 13.5
 * runtime (which needs only that it exists: no slot was called) and by cuBLAS
 * GEMM. No public description: every slot is unknown. ---- */
UNKNOWN(t2131, 1)
UNKNOWN(t2131, 2)
UNKNOWN(t2131, 3)
UNKNOWN(t2131, 4)
UNKNOWN(t2131, 5)
UNKNOWN(t2131, 6)
UNKNOWN(t2131, 7)
static const void *t2131_table[8] = {
	(void *)(uintptr_t)sizeof(t2131_table), (void *)unk_t2131_1, (void *)unk_t2131_2, (void *)unk_t2131_3,
	(void *)unk_t2131_4, (void *)unk_t2131_5, (void *)unk_t2131_6, (void *)unk_t2131_7,
};

/* ---- the directory ---- */

static const struct {
	uint8_t uuid[16];
	const void *const *table;
} tables[] = {
	{{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d,
	  0xf9},
	 cudart_table},
	{{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a,
	  0x66},
	 hooks_table},
	{{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec,
	  0xdc},
	 tls_table},
	{{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95,
	  0x93},
	 cls_table},
	{{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa,
	  0x7e},
	 checks_table},
	{{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1,
	  0xf2},
	 integrity_table},
	{{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8,
	  0xf2},
	 t2131_table},
};

CUresult sim_cuGetExportTable(const void **ppExportTable, const CUuuid_sim *pExportTableId)
{
	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (memcmp(tables[i].uuid, pExportTableId->bytes, 16) == 0) {
			*ppExportTable = tables[i].table;
			return CUDA_SUCCESS;
		}
	const char *e = getenv("TLM_SIM_LOG_UNKNOWN");
	if (e && e[0] == '1') {
		const unsigned char *u = pExportTableId->bytes;
		fprintf(stderr,
			"tlm-sim: export table %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x"
			" not modelled\n",
			u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
			u[13], u[14], u[15]);
	}
	return CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuGetExportTable);
