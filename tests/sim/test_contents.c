// SPDX-License-Identifier: MIT
/* Device memory contents (src/sim/driver/sim_backing.c): a read returns the bytes
 * last copied or set there, zeros where nothing was written since the
 * allocation; every copy and set is bounds-checked against live allocations
 * and mappings and fails with CUDA_ERROR_INVALID_VALUE, writing nothing, when
 * it leaves them; a stream capture records copies, sets and host functions
 * that each graph launch replays (src/sim/driver/sim_graph.c). TLM_SIM_MEMORY=64M, TLM_SIM_DEVICES=2. */
#include <stdlib.h>
#include <string.h>

#include "sim_test.h"

/* The copy and set entry points (cuda.h's ABI names), not in sim_driver.h. */
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n);
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n);
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n);
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n);
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s);
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s);
CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h);
CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h);

CUresult cuMemcpy2D_v2(const struct memcpy2d *p);
CUresult cuMemcpy3D_v2(const struct memcpy3d *p);

CUresult cuStreamBeginCapture_v2(CUstream s, int mode);
CUresult cuStreamEndCapture(CUstream s, void **graph);
CUresult cuStreamIsCapturing(CUstream s, int *status);
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags);
CUresult cuGraphLaunch(void *exec, CUstream s);
CUresult cuGraphExecDestroy(void *exec);
CUresult cuGraphDestroy(void *graph);
CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *user);
CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer);
CUresult cuDeviceGetP2PAttribute(int *value, int attrib, CUdevice src, CUdevice dst);
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags);
CUresult cuCtxDisablePeerAccess(CUcontext peer);
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags);
CUresult cuMemHostUnregister(void *p);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *dp, void *host, unsigned flags);
CUresult cuStreamAttachMemAsync(CUstream s, CUdeviceptr p, size_t len, unsigned flags);

#define INVAL(call) assert_int_equal((call), CUDA_ERROR_INVALID_VALUE)

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

static void fill_pat(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(i);
}

static void assert_all(const uint8_t *b, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			fail_msg("byte %zu is %u, expected %u", i, b[i], v);
}

static void test_round_trip_and_zeros(void **state)
{
	(void)state;
	enum { N = 3 * 1024 * 1024 + 5 }; /* spans two 2 MiB pages, odd tail */
	static uint8_t in[N], out[N];
	CUdeviceptr d;
	long long pages = tlm_sim_used_pages(0);
	CU_OK(cuMemAlloc_v2(&d, N));
	memset(out, 0xee, N);
	CU_OK(cuMemcpyDtoH_v2(out, d, N));
	assert_all(out, N, 0); /* nothing written since allocation */
	fill_pat(in, N);
	CU_OK(cuMemcpyHtoD_v2(d + 1, in, N - 1));
	CU_OK(cuMemcpyDtoH_v2(out, d, N));
	assert_int_equal(out[0], 0);
	assert_memory_equal(out + 1, in, N - 1);
	assert_int_equal(tlm_sim_used_pages(0), pages + 2); /* copies take no pages */
	CU_OK(cuMemFree_v2(d));
	CUdeviceptr again;
	CU_OK(cuMemAlloc_v2(&again, N));
	assert_int_equal(again, d); /* the address is reused... */
	CU_OK(cuMemcpyDtoH_v2(out, again, N));
	assert_all(out, N, 0); /* ...and reads zeros */
	CU_OK(cuMemFree_v2(again));
}

static void test_dtod_peer_async(void **state)
{
	(void)state;
	uint8_t in[4096], out[4096];
	CUdeviceptr a, b, c;
	CUcontext c0, c1;
	CUstream s;
	fill_pat(in, sizeof in);
	CU_OK(cuMemAlloc_v2(&a, 4096));
	CU_OK(cuMemAlloc_v2(&b, 4096));
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuMemcpyHtoDAsync_v2(a, in, 4096, s));
	CU_OK(cuMemcpyDtoD_v2(b + 100, a, 1000));
	CU_OK(cuMemcpyDtoH_v2(out, b, 4096));
	assert_all(out, 100, 0);
	assert_memory_equal(out + 100, in, 1000);
	assert_all(out + 1100, 4096 - 1100, 0);
	CU_OK(cuMemcpyDtoDAsync_v2(b, a + 2000, 50, s));
	CU_OK(cuMemcpy(b + 50, a + 3000, 50)); /* unified copy, device to device */
	CU_OK(cuMemcpyDtoHAsync_v2(out, b, 100, s));
	assert_memory_equal(out, in + 2000, 50);
	assert_memory_equal(out + 50, in + 3000, 50);
	/* peer: device 0 to device 1 */
	CU_OK(cuDevicePrimaryCtxRetain(&c0, 0));
	CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
	CU_OK(cuCtxSetCurrent(c1));
	CU_OK(cuMemAlloc_v2(&c, 4096));
	CU_OK(cuMemcpyPeer(c, c1, a, c0, 4096));
	CU_OK(cuMemcpyDtoH_v2(out, c, 4096));
	assert_memory_equal(out, in, 4096);
	CU_OK(cuMemFree_v2(c));
	CU_OK(cuCtxSetCurrent(c0));
	/* peer access, as on an NVLink machine (src/sim/driver/sim_peer.c) */
	int can = -1, v = -1;
	CU_OK(cuDeviceCanAccessPeer(&can, 0, 1));
	assert_int_equal(can, 1);
	CU_OK(cuDeviceCanAccessPeer(&can, 1, 1));
	assert_int_equal(can, 0);
	CU_OK(cuDeviceGetP2PAttribute(&v, 2, 0, 1)); /* access supported */
	assert_int_equal(v, 1);
	CU_OK(cuDeviceGetP2PAttribute(&v, 4, 0, 1)); /* CUDA arrays: not modelled */
	assert_int_equal(v, 0);
	assert_int_equal(cuDeviceGetP2PAttribute(&v, 2, 0, 0), CUDA_ERROR_INVALID_DEVICE);
	CU_OK(cuCtxEnablePeerAccess(c1, 0));
	assert_int_equal(cuCtxEnablePeerAccess(c1, 0), 704); /* already enabled */
	assert_int_equal(cuCtxEnablePeerAccess(c0, 0), CUDA_ERROR_INVALID_DEVICE); /* itself */
	CU_OK(cuCtxDisablePeerAccess(c1));
	assert_int_equal(cuCtxDisablePeerAccess(c1), 705); /* not enabled */
	CU_OK(cuStreamSynchronize(s));
	CU_OK(cuMemFree_v2(a));
	CU_OK(cuMemFree_v2(b));
}

static void test_sets(void **state)
{
	(void)state;
	uint8_t out[64];
	CUdeviceptr d;
	CUstream s;
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuMemAlloc_v2(&d, 4096));
	CU_OK(cuMemsetD8_v2(d + 1, 0x5a, 3));
	CU_OK(cuMemsetD16_v2(d + 4, 0xbeef, 2));
	CU_OK(cuMemsetD32_v2(d + 8, 0x01020304u, 1));
	CU_OK(cuMemsetD32Async(d + 12, 0xa0b0c0d0u, 1, s));
	CU_OK(cuMemcpyDtoH_v2(out, d, 20));
	const uint8_t want[20] = {0, 0x5a, 0x5a, 0x5a, 0xef, 0xbe, 0xef, 0xbe, 4, 3, 2, 1,
				  0xd0, 0xc0, 0xb0, 0xa0, 0, 0, 0, 0};
	assert_memory_equal(out, want, 20);
	/* 2D: 3 rows of 4 bytes at pitch 8; the gaps keep their bytes */
	CU_OK(cuMemsetD8_v2(d + 1024, 0x11, 24));
	CU_OK(cuMemsetD2D8_v2(d + 1024, 8, 0x22, 4, 3));
	CU_OK(cuMemsetD2D16_v2(d + 2048, 8, 0x3344, 2, 2));
	CU_OK(cuMemcpyDtoH_v2(out, d + 1024, 24));
	for (int i = 0; i < 24; i++)
		assert_int_equal(out[i], i % 8 < 4 ? 0x22 : 0x11);
	CU_OK(cuMemcpyDtoH_v2(out, d + 2048, 16));
	const uint8_t w16[16] = {0x44, 0x33, 0x44, 0x33, 0, 0, 0, 0, 0x44, 0x33, 0x44, 0x33, 0, 0, 0, 0};
	assert_memory_equal(out, w16, 16);
	INVAL(cuMemsetD16_v2(d + 1, 0, 1)); /* misaligned */
	CU_OK(cuStreamSynchronize(s));
	CU_OK(cuMemFree_v2(d));
}

static void test_2d_3d(void **state)
{
	(void)state;
	uint8_t host[6 * 10], out[6 * 10];
	CUdeviceptr d;
	size_t pitch;
	fill_pat(host, sizeof host);
	CU_OK(cuMemAllocPitch_v2(&d, &pitch, 10, 6, 4));
	/* host 10x6 (pitch 10) -> device pitched, then back into a 6-wide box */
	struct memcpy2d p = {.srcType = 1, .srcHost = host, .srcPitch = 10, .dstType = 2,
			     .dstDevice = d, .dstPitch = pitch, .width = 10, .height = 6};
	CU_OK(cuMemcpy2D_v2(&p));
	uint8_t row[10];
	CU_OK(cuMemcpyDtoH_v2(row, d + 5 * pitch, 10));
	assert_memory_equal(row, host + 50, 10);
	memset(out, 0, sizeof out);
	struct memcpy2d q = {.srcX = 2, .srcY = 1, .srcType = 2, .srcDevice = d, .srcPitch = pitch,
			     .dstType = 1, .dstHost = out, .dstPitch = 6, .width = 6, .height = 5};
	CU_OK(cuMemcpy2D_v2(&q));
	for (int y = 0; y < 5; y++)
		assert_memory_equal(out + y * 6, host + (y + 1) * 10 + 2, 6);
	/* 3D: 2 slices of 2 rows of 4 bytes from the pitched block */
	struct memcpy3d r = {.srcType = 2, .srcDevice = d, .srcPitch = pitch, .srcHeight = 3,
			     .dstType = 1, .dstHost = out, .dstPitch = 4, .dstHeight = 2,
			     .width = 4, .height = 2, .depth = 2};
	CU_OK(cuMemcpy3D_v2(&r));
	for (int z = 0; z < 2; z++)
		for (int y = 0; y < 2; y++)
			assert_memory_equal(out + (z * 2 + y) * 4, host + (z * 3 + y) * 10, 4);
	/* a 2D copy whose last row leaves the allocation writes nothing */
	memset(out, 0x77, sizeof out);
	struct memcpy2d bad = q;
	bad.srcY = PAGE / pitch - 2; /* rows 2 and 3 lie past the 2 MiB block */
	bad.height = 4;
	INVAL(cuMemcpy2D_v2(&bad));
	assert_all(out, sizeof out, 0x77);
	CU_OK(cuMemFree_v2(d));
}

static void test_bounds(void **state)
{
	(void)state;
	uint8_t buf[64];
	memset(buf, 0x42, sizeof buf);
	CUdeviceptr d, e;
	CU_OK(cuMemAlloc_v2(&d, PAGE));
	CU_OK(cuMemAlloc_v2(&e, PAGE));
	CU_OK(cuMemcpyHtoD_v2(d + PAGE - 64, buf, 64)); /* the last bytes: fine */
	INVAL(cuMemcpyHtoD_v2(d + PAGE - 63, buf, 64)); /* one byte into e, the next allocation */
	INVAL(cuMemcpyDtoH_v2(buf, d + PAGE - 8, 64));
	assert_all(buf, sizeof buf, 0x42); /* nothing written on failure */
	INVAL(cuMemcpyDtoD_v2(d, e + PAGE, 1));
	INVAL(cuMemcpyHtoD_v2(DEV_VA_BASE + DEV_VA_STRIDE - PAGE, buf, 1)); /* never allocated */
	INVAL(cuMemcpyHtoD_v2(DEV_VA_BASE + 15 * DEV_VA_STRIDE, buf, 1)); /* no such device */
	INVAL(cuMemsetD8_v2(e + PAGE, 0, 1));
	INVAL(cuMemsetD32_v2(d + PAGE - 4, 0, 2));
	INVAL(cuMemcpyHtoD_v2(d, buf, SIZE_MAX)); /* wraps around */
	CU_OK(cuMemFree_v2(e));
	INVAL(cuMemcpyHtoD_v2(e, buf, 1)); /* freed */
	CU_OK(cuMemFree_v2(d));
}

static CUmemAllocationProp prop0(void)
{
	CUmemAllocationProp p = {0};
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	return p;
}

static void test_vmm(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop0();
	CUmemGenericAllocationHandle h, k;
	CUdeviceptr r;
	uint8_t in[256], out[256];
	fill_pat(in, sizeof in);
	CU_OK(cuMemCreate(&h, 2 * PAGE, &prop, 0));
	CU_OK(cuMemCreate(&k, PAGE, &prop, 0));
	CU_OK(cuMemAddressReserve(&r, 5 * PAGE, 0, 0, 0));
	/* [r, r+2P) and [r+3P, r+4P) both show handle h (the second from its
	 * page 1); [r+2P, r+3P) is k */
	CU_OK(cuMemMap(r, 2 * PAGE, 0, h, 0));
	CU_OK(cuMemMap(r + 2 * PAGE, PAGE, 0, k, 0));
	CU_OK(cuMemMap(r + 3 * PAGE, PAGE, PAGE, h, 0));
	CU_OK(cuMemcpyHtoD_v2(r + PAGE + 10, in, 256));
	CU_OK(cuMemcpyDtoH_v2(out, r + 3 * PAGE + 10, 256)); /* the alias */
	assert_memory_equal(out, in, 256);
	/* across two mappings of different handles */
	CU_OK(cuMemcpyHtoD_v2(r + 2 * PAGE - 128, in, 256));
	CU_OK(cuMemcpyDtoH_v2(out, r + 2 * PAGE - 128, 256));
	assert_memory_equal(out, in, 256);
	CU_OK(cuMemsetD8_v2(r + 3 * PAGE - 1, 0x99, 1));
	CU_OK(cuMemcpyDtoH_v2(out, r + 3 * PAGE - 1, 1));
	assert_int_equal(out[0], 0x99);
	INVAL(cuMemcpyDtoH_v2(out, r + 4 * PAGE - 1, 2)); /* into the unmapped page */
	/* unmapped and mapped again: the handle kept its bytes */
	CU_OK(cuMemUnmap(r, 2 * PAGE));
	INVAL(cuMemcpyDtoH_v2(out, r + PAGE, 1));
	CU_OK(cuMemMap(r, 2 * PAGE, 0, h, 0));
	CU_OK(cuMemcpyDtoH_v2(out, r + PAGE + 10, 256));
	assert_memory_equal(out, in, 256);
	CU_OK(cuMemUnmap(r, 2 * PAGE));
	CU_OK(cuMemUnmap(r + 2 * PAGE, PAGE));
	CU_OK(cuMemUnmap(r + 3 * PAGE, PAGE));
	CU_OK(cuMemRelease(h));
	CU_OK(cuMemRelease(k));
	CU_OK(cuMemAddressFree(r, 5 * PAGE));
	/* a new handle mapped at the same place reads zeros */
	CU_OK(cuMemCreate(&h, 2 * PAGE, &prop, 0));
	CU_OK(cuMemAddressReserve(&r, 2 * PAGE, 0, 0, 0));
	CU_OK(cuMemMap(r, 2 * PAGE, 0, h, 0));
	CU_OK(cuMemcpyDtoH_v2(out, r + PAGE + 10, 256));
	assert_all(out, 256, 0);
	CU_OK(cuMemUnmap(r, 2 * PAGE));
	CU_OK(cuMemRelease(h));
	CU_OK(cuMemAddressFree(r, 2 * PAGE));
}

static void test_pool(void **state)
{
	(void)state;
	CUstream s;
	CUdeviceptr a, b;
	uint8_t in[512], out[512];
	fill_pat(in, sizeof in);
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuMemAllocAsync(&a, 4096, s));
	CU_OK(cuMemcpyHtoDAsync_v2(a, in, 512, s));
	CU_OK(cuMemcpyDtoHAsync_v2(out, a, 512, s));
	assert_memory_equal(out, in, 512);
	CU_OK(cuMemFreeAsync(a, s));
	INVAL(cuMemcpyDtoH_v2(out, a, 1)); /* freed, though the pool may keep it */
	CU_OK(cuMemAllocAsync(&b, 4096, s));
	CU_OK(cuMemcpyDtoH_v2(out, b, 512));
	assert_all(out, 512, 0); /* a reused pool block reads zeros */
	CU_OK(cuMemFreeAsync(b, s));
	CU_OK(cuStreamSynchronize(s));
}

static void test_managed_and_host(void **state)
{
	(void)state;
	CUdeviceptr m, d;
	uint8_t in[128];
	fill_pat(in, sizeof in);
	CU_OK(cuMemAllocManaged(&m, 4096, 1));
	CU_OK(cuMemAlloc_v2(&d, 4096));
	CU_OK(cuMemcpyHtoD_v2(d, in, 128));
	CU_OK(cuMemcpy(m, d, 128)); /* device to managed: real host bytes */
	assert_memory_equal((void *)(uintptr_t)m, in, 128);
	CU_OK(cuMemsetD8_v2(d, 0, 64));
	CU_OK(cuMemcpy(d + 64, m, 64)); /* managed to device */
	uint8_t out[128];
	CU_OK(cuMemcpyDtoH_v2(out, d, 128));
	assert_all(out, 64, 0);
	assert_memory_equal(out + 64, in, 64);
	/* managed memory attached to a stream: the whole allocation, a known flag */
	CUstream s;
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuStreamAttachMemAsync(s, m, 0, 4));
	CU_OK(cuStreamAttachMemAsync(s, m, 4096, 1));
	INVAL(cuStreamAttachMemAsync(s, m + 64, 0, 4)); /* not its start */
	INVAL(cuStreamAttachMemAsync(s, m, 0, 3));
	INVAL(cuStreamAttachMemAsync(s, d, 0, 4)); /* not managed */
	/* registered host memory: host memory to the pointer queries */
	static uint8_t reg[8192];
	CUdeviceptr rp;
	assert_int_equal(cuMemHostGetDevicePointer_v2(&rp, reg, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemHostRegister_v2(reg, sizeof reg, 2));
	assert_int_equal(cuMemHostRegister_v2(reg + 100, 10, 0), 712); /* already registered */
	CU_OK(cuMemHostGetDevicePointer_v2(&rp, reg + 10, 0));
	assert_int_equal(rp, (CUdeviceptr)(uintptr_t)(reg + 10));
	assert_int_equal(cuMemFreeHost(reg), CUDA_ERROR_INVALID_VALUE); /* not ours to free */
	CU_OK(cuMemcpyHtoD_v2(d, reg, 128));
	CU_OK(cuMemHostUnregister(reg));
	assert_int_equal(cuMemHostUnregister(reg), 713); /* not registered */
	CU_OK(cuStreamSynchronize(s));
	CU_OK(cuMemFree_v2(d));
	CU_OK(cuMemFree_v2(m));
}

static void count(void *p)
{
	++*(int *)p;
}

/* A capture records copies, sets and host functions; each launch replays them. */
static void test_capture(void **state)
{
	(void)state;
	CUstream s;
	CUdeviceptr a, b;
	void *g, *e;
	int calls = 0, st = -1;
	uint8_t host[256], out[256];
	fill_pat(host, sizeof host);
	CU_OK(cuStreamCreate(&s, 0));
	CU_OK(cuMemAlloc_v2(&a, 4096));
	CU_OK(cuMemAlloc_v2(&b, 4096));
	assert_int_equal(cuStreamBeginCapture_v2(NULL, 0), 900); /* the legacy stream */
	CU_OK(cuStreamBeginCapture_v2(s, 0));
	assert_int_equal(cuStreamBeginCapture_v2(s, 0), 401); /* already capturing */
	CU_OK(cuStreamIsCapturing(s, &st));
	assert_int_equal(st, 1);
	CU_OK(cuMemsetD8Async(b, 0x33, 16, s));
	CU_OK(cuMemcpyHtoDAsync_v2(a, host, 256, s));   /* host bytes read at each launch */
	CU_OK(cuMemcpyDtoDAsync_v2(b + 16, a, 256, s)); /* after the copy above */
	CU_OK(cuLaunchHostFunc(s, count, &calls));
	CUdeviceptr x;
	assert_int_equal(cuMemAllocAsync(&x, 4096, s), 900); /* graph memory: not modelled */
	CU_OK(cuStreamEndCapture(s, &g));
	assert_int_equal(cuStreamEndCapture(s, &g), 401);
	CU_OK(cuStreamIsCapturing(s, &st));
	assert_int_equal(st, 0);
	assert_int_equal(calls, 0);
	CU_OK(cuMemcpyDtoH_v2(out, b, 16));
	assert_all(out, 16, 0); /* nothing ran yet */
	CU_OK(cuGraphInstantiateWithFlags(&e, g, 0));
	CU_OK(cuGraphDestroy(g)); /* the exec keeps its own copy */
	CU_OK(cuGraphLaunch(e, s));
	assert_int_equal(calls, 1);
	CU_OK(cuMemcpyDtoH_v2(out, b, 16));
	assert_all(out, 16, 0x33);
	CU_OK(cuMemcpyDtoH_v2(out, b + 16, 256));
	assert_memory_equal(out, host, 256);
	memset(host, 0x5c, sizeof host);
	CU_OK(cuGraphLaunch(e, s));
	assert_int_equal(calls, 2);
	CU_OK(cuMemcpyDtoH_v2(out, b + 16, 256));
	assert_all(out, 256, 0x5c);
	CU_OK(cuGraphExecDestroy(e));
	INVAL(cuGraphExecDestroy(e));
	INVAL(cuGraphLaunch(e, s));
	INVAL(cuGraphDestroy(g));
	CU_OK(cuStreamSynchronize(s));
	CU_OK(cuMemFree_v2(a));
	CU_OK(cuMemFree_v2(b));
}

/* Host backing comes in 1 GiB chunks (sim_backing.c): one allocation
 * across a chunk boundary copies and sets as one range. Needs 2 GiB of
 * device memory (the sim_contents_chunks test). */
static void test_chunk_boundary(void **state)
{
	(void)state;
	enum { N = 4 << 20 };
	static uint8_t in[N], out[N];
	CUdeviceptr d;
	CU_OK(cuMemAlloc_v2(&d, 1536ull << 20));
	uint64_t at = DEV_VA_BASE + (1ull << 30) - N / 2; /* straddles offset 1 GiB */
	assert_true(at >= d && at + N <= d + (1536ull << 20));
	fill_pat(in, N);
	CU_OK(cuMemcpyHtoD_v2(at, in, N));
	CU_OK(cuMemcpyDtoH_v2(out, at, N));
	assert_memory_equal(out, in, N);
	CU_OK(cuMemsetD32_v2(at, 0x0badf00du, N / 4));
	CU_OK(cuMemcpyDtoH_v2(out, at + N / 2 - 8, 16));
	for (int i = 0; i < 4; i++)
		assert_int_equal(((uint32_t *)out)[i], 0x0badf00du);
	CU_OK(cuMemFree_v2(d));
	CU_OK(cuMemAlloc_v2(&d, 1536ull << 20));
	CU_OK(cuMemcpyDtoH_v2(out, at, N));
	assert_all(out, N, 0); /* zeros again after the free, in both chunks */
	CU_OK(cuMemFree_v2(d));
}

int main(void)
{
	if (getenv("TLM_TEST_CHUNKS")) {
		const struct CMUnitTest big[] = {
			cmocka_unit_test_teardown(test_chunk_boundary, sim_test_no_leak),
		};
		return cmocka_run_group_tests(big, sim_test_setup_dev0, NULL);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_round_trip_and_zeros, sim_test_no_leak),
		cmocka_unit_test_teardown(test_dtod_peer_async, sim_test_no_leak),
		cmocka_unit_test_teardown(test_sets, sim_test_no_leak),
		cmocka_unit_test_teardown(test_2d_3d, sim_test_no_leak),
		cmocka_unit_test_teardown(test_bounds, sim_test_no_leak),
		cmocka_unit_test_teardown(test_vmm, sim_test_no_leak),
		cmocka_unit_test_teardown(test_pool, sim_test_no_leak),
		cmocka_unit_test_teardown(test_managed_and_host, sim_test_no_leak),
		cmocka_unit_test_teardown(test_capture, sim_test_no_leak),
	};
	return cmocka_run_group_tests(tests, sim_test_setup_dev0, NULL);
}
