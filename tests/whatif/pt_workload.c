/* SPDX-License-Identifier: MIT */
/*
 * pt_workload.c - a PyTorch-like program for the replay's self-consistency:
 * it allocates through the allocator model itself (src/whatif/model.h),
 * configured from PYTORCH_CUDA_ALLOC_CONF as torch is, taking its segments
 * from the simulated CUDA runtime (cudaMalloc/cudaFree) or, with expandable
 * segments, the simulated driver's VMM calls, and reports every block through
 * c10::reportMemoryUsageToProfiler and every OOM through
 * c10::reportOutOfMemoryToProfiler (found with dlsym: libtlm.so defines
 * them). Run under libtlm.so, its trace holds what a PyTorch run's holds.
 *
 * usage: pt_workload frag|churn [N]   (device 1; TLM_SIM_MEMORY sets its size)
 *  frag:  small tensors, a 40 MiB block cached then split by a 12 MiB one, a
 *         30 MiB request (OOM with the defaults, not with max_split_size_mb:32
 *         or expandable segments), then a training-like tail.
 *  churn: N (4000) requests of mixed sizes with random lifetimes (LCG).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_driver.h"
#include "sim_runtime.h"
#include "whatif/model.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define DEV 1

typedef void (*mem_fn)(void *, int64_t, size_t, size_t, uint64_t);
typedef void (*oom_fn)(int64_t, size_t, size_t, uint64_t);
static mem_fn report_mem;
static oom_fn report_oom;
static struct tlm_wi_model *M;
static const uint64_t device_word = 1 | (DEV << 16); /* c10::Device{CUDA, 1}, 16-bit index */

/* ---- the driver: the simulated CUDA ---------------------------------------- */

static int seg_alloc(void *ctx, uint64_t size, uint64_t *addr)
{
	(void)ctx;
	void *p = NULL;
	if (cudaMalloc(&p, size) != 0) {
		cudaGetLastError();
		return -1;
	}
	*addr = (uint64_t)(uintptr_t)p;
	return 0;
}

static void seg_free(void *ctx, uint64_t addr, uint64_t size)
{
	(void)ctx;
	(void)size;
	cudaFree((void *)(uintptr_t)addr);
}

static int va_reserve(void *ctx, uint64_t size, uint64_t align, uint64_t *addr)
{
	(void)ctx;
	(void)align;
	CUdeviceptr p = 0;
	if (cuMemAddressReserve(&p, size, 0, 0, 0) != CUDA_SUCCESS)
		return -1;
	*addr = p;
	return 0;
}

static void va_free(void *ctx, uint64_t addr, uint64_t size)
{
	(void)ctx;
	cuMemAddressFree(addr, size);
}

#define MAXH 4096
static struct {
	uint64_t addr;
	CUmemGenericAllocationHandle h;
} handles[MAXH];

static int map(void *ctx, uint64_t addr, uint64_t npages, uint64_t page)
{
	(void)ctx;
	CUmemGenericAllocationHandle h[64];
	if (npages > 64)
		return -1;
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = DEV;
	for (uint64_t i = 0; i < npages; i++)
		if (cuMemCreate(&h[i], page, &prop, 0) != CUDA_SUCCESS) {
			while (i-- > 0)
				cuMemRelease(h[i]);
			return -1;
		}
	CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, DEV}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	for (uint64_t i = 0; i < npages; i++) {
		cuMemMap(addr + i * page, page, 0, h[i], 0);
		for (int k = 0; k < MAXH; k++)
			if (!handles[k].addr) {
				handles[k].addr = addr + i * page;
				handles[k].h = h[i];
				break;
			}
	}
	cuMemSetAccess(addr, npages * page, &acc, 1);
	return 0;
}

static void unmap(void *ctx, uint64_t addr, uint64_t npages, uint64_t page)
{
	(void)ctx;
	for (uint64_t i = 0; i < npages; i++) {
		cuMemUnmap(addr + i * page, page);
		for (int k = 0; k < MAXH; k++)
			if (handles[k].addr == addr + i * page) {
				cuMemRelease(handles[k].h);
				handles[k].addr = 0;
				break;
			}
	}
}

/* ---- torch-like malloc and free -------------------------------------------- */

static uint64_t tmalloc(uint64_t n)
{
	uint64_t a = 0, b = 0;
	int rc = tlm_wi_model_malloc(M, n, 0, &a, &b);
	struct tlm_wi_stats st;
	tlm_wi_model_stats(M, &st);
	if (rc) {
		report_oom((int64_t)b, st.allocated, st.reserved, device_word);
		return 0;
	}
	report_mem((void *)(uintptr_t)a, (int64_t)b, st.allocated, st.reserved, device_word);
	return a;
}

static void tfree(uint64_t a)
{
	if (!a)
		return;
	uint64_t n = tlm_wi_model_release(M, a);
	struct tlm_wi_stats st;
	tlm_wi_model_stats(M, &st);
	report_mem((void *)(uintptr_t)a, -(int64_t)n, st.allocated, st.reserved, device_word);
}

static void frag(void)
{
	uint64_t small[20];
	for (int i = 0; i < 20; i++)
		small[i] = tmalloc(100 * KiB);
	uint64_t a = tmalloc(40 * MiB);
	tfree(a);
	uint64_t b = tmalloc(12 * MiB);
	uint64_t c = tmalloc(30 * MiB); /* the OOM of the defaults */
	tfree(c); /* used at once (a replay gives back a block the recorded run never had at once) */
	for (int i = 0; i < 20; i += 2)
		tfree(small[i]);
	tfree(b);
	/* a training-like tail: activations up and down (sizes that cut
	 * segments exactly, so every block is its request: predictions made
	 * from one run hold to the byte for another) */
	for (int step = 0; step < 3; step++) {
		uint64_t act[6];
		for (int i = 0; i < 6; i++)
			act[i] = tmalloc((i % 2 ? 4 : 2) * MiB);
		for (int i = 6; i-- > 0;)
			tfree(act[i]);
	}
	for (int i = 1; i < 20; i += 2)
		tfree(small[i]);
}

static void churn(int n)
{
	static const uint64_t sizes[] = {512, 4 * KiB, 100 * KiB, 700 * KiB, MiB, 1536 * KiB, 3 * MiB,
					 6 * MiB + 4 * KiB, 12 * MiB, 24 * MiB + 512};
	enum { LIVE = 48 };
	uint64_t live[LIVE] = {0};
	uint32_t x = 12345;
	for (int i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		unsigned slot = (x >> 8) % LIVE;
		if (live[slot]) {
			tfree(live[slot]);
			live[slot] = 0;
		} else {
			uint64_t n = sizes[(x >> 16) % (sizeof sizes / sizeof sizes[0])];
			n += (x >> 4) % 3 * 512; /* not all sizes 512 B aligned to the same */
			live[slot] = tmalloc(n);
		}
		if (i == 3000)
			tlm_wi_model_empty_cache(M); /* torch.cuda.empty_cache() mid-run */
	}
	for (int i = 0; i < LIVE; i++)
		tfree(live[i]);
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "frag") && strcmp(argv[1], "churn"))) {
		fprintf(stderr, "usage: pt_workload frag|churn\n");
		return 2;
	}
	report_mem = (mem_fn)dlsym(RTLD_DEFAULT, "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE");
	report_oom = (oom_fn)dlsym(RTLD_DEFAULT, "_ZN3c1027reportOutOfMemoryToProfilerElmmNS_6DeviceE");
	if (!report_mem || !report_oom) {
		fprintf(stderr, "pt_workload: the c10 hooks are not defined (run under libtlm.so)\n");
		return 2;
	}
	struct tlm_wi_settings s;
	char err[200];
	tlm_wi_defaults(&s);
	const char *conf = getenv("PYTORCH_CUDA_ALLOC_CONF");
	if (conf && tlm_wi_parse(&s, conf, err, sizeof err)) {
		fprintf(stderr, "pt_workload: %s\n", err);
		return 2;
	}
	if (cudaSetDevice(DEV) != 0 || cuInit(0) != CUDA_SUCCESS) {
		fprintf(stderr, "pt_workload: no simulated device %d\n", DEV);
		return 2;
	}
	size_t fr = 0, total = 0;
	cudaMemGetInfo(&fr, &total);
	struct tlm_wi_drv drv = {NULL, seg_alloc, seg_free, va_reserve, va_free, map, unmap};
	M = tlm_wi_model_new(&s, &drv, total);
	if (!M)
		return 2;
	if (!strcmp(argv[1], "frag"))
		frag();
	else
		churn(argc > 2 ? atoi(argv[2]) : 4000);
	tlm_wi_model_free(M);
	return 0;
}
