// SPDX-License-Identifier: MIT
// allocs.cu - a real CUDA program for the real-runtime tests: every runtime
// allocation call (cudaMalloc, Pitch, 3D, Managed, MallocHost, HostAlloc,
// MallocAsync, MallocFromPoolAsync and their frees) and the VMM driver calls
// reached through cudaGetDriverEntryPointByVersion, with kernel launches in
// between, on two devices, from the main thread and from new threads whose
// FIRST runtime call is an allocation (the runtime binds their context
// lazily). Built by nvcc with the static cudart and with -cudart shared.
//
// Each call writes one truth line to $TLM_TEST_TRUTH:
//   E op kind addr size device func line
// op 1 = alloc, 2 = free; kind as include/tlm/event.h; size = what the
// program was given (pitch x rows for pitched memory), 0 for frees; func and
// line: the function and source line of the call, which the trace's stack
// for that event must show (check.py). Sizes of unmap/address-free are the
// range given; a free's kind is the one its API implies (cudaFree: device).
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U(p) ((unsigned long long)(uintptr_t)(p))
enum { OP_ALLOC = 1, OP_FREE = 2, OP_POOL_CREATE = 3, OP_POOL_DESTROY = 4 };
enum { K_DEVICE = 0, K_MANAGED = 1, K_HOST = 2, K_PHYS = 3, K_RESERVE = 4, K_MAP = 5, K_POOL = 6 };

static FILE *truth;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

static void expect(int op, int kind, unsigned long long addr, unsigned long long size, int dev,
		   const char *func, int line)
{
	pthread_mutex_lock(&truth_lock);
	fprintf(truth, "E %d %d %llx %llu %d %s %d\n", op, kind, addr, size, dev, func, line);
	fflush(truth);
	pthread_mutex_unlock(&truth_lock);
}

#define CK(x)                                                                               \
	do {                                                                                \
		cudaError_t e_ = (x);                                                       \
		if (e_ != cudaSuccess) {                                                    \
			fprintf(stderr, "allocs: %s failed at line %d: %s\n", #x, __LINE__, \
				cudaGetErrorString(e_));                                    \
			exit(3);                                                            \
		}                                                                           \
	} while (0)
#define DK(x)                                                                                \
	do {                                                                                 \
		CUresult r_ = (x);                                                           \
		if (r_ != CUDA_SUCCESS) {                                                    \
			fprintf(stderr, "allocs: %s failed at line %d: %d\n", #x, __LINE__, r_); \
			exit(3);                                                             \
		}                                                                            \
	} while (0)

// The call and its truth line on one source line, so the line is the call's.
#define A(call, kind, ptr, size, dev) \
	do { CK(call); expect(OP_ALLOC, kind, U(ptr), size, dev, __func__, __LINE__); } while (0)
#define F(call, kind, ptr, dev) \
	do { expect(OP_FREE, kind, U(ptr), 0, dev, __func__, __LINE__); CK(call); } while (0)

__global__ void fill(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = i;
}

static void launch(void *p, cudaStream_t s)
{
	fill<<<4, 64, 0, s>>>((int *)p, 256);
	CK(cudaGetLastError());
}

// Every runtime allocation call on the current device.
static void runtime_calls(int dev)
{
	void *a, *m, *h, *ha, *as, *ps;
	size_t pitch;
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	A(cudaMalloc(&a, 3 << 20), K_DEVICE, a, 3 << 20, dev);
	launch(a, s);
	A(cudaMallocPitch(&ps, &pitch, 1000, 7), K_DEVICE, ps, (unsigned long long)pitch * 7, dev);
	cudaPitchedPtr pp;
	cudaExtent ext = make_cudaExtent(300, 5, 3);
	A(cudaMalloc3D(&pp, ext), K_DEVICE, pp.ptr, (unsigned long long)pp.pitch * 5 * 3, dev);
	A(cudaMallocManaged(&m, 1 << 20), K_MANAGED, m, 1 << 20, dev);
	launch(m, s);
	A(cudaMallocHost(&h, 12345), K_HOST, h, 12345, -1);
	A(cudaHostAlloc(&ha, 4096, cudaHostAllocMapped), K_HOST, ha, 4096, -1);
	A(cudaMallocAsync(&as, 777, s), K_DEVICE, as, 777, dev);
	launch(as, s);
	F(cudaFreeAsync(as, s), K_DEVICE, as, dev);
	cudaMemPool_t pool;
	cudaMemPoolProps props;
	memset(&props, 0, sizeof props);
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = dev;
	CK(cudaMemPoolCreate(&pool, &props)); expect(OP_POOL_CREATE, K_POOL, U(pool), 0, dev, __func__, __LINE__);
	void *pa;
	A(cudaMallocFromPoolAsync(&pa, 5000, pool, s), K_DEVICE, pa, 5000, dev);
	launch(pa, s);
	F(cudaFreeAsync(pa, s), K_DEVICE, pa, dev);
	CK(cudaStreamSynchronize(s));
	expect(OP_POOL_DESTROY, K_POOL, U(pool), 0, dev, __func__, __LINE__); CK(cudaMemPoolDestroy(pool));
	int back[4] = {7, 7, 7, 7};
	CK(cudaMemcpy(back, a, sizeof back, cudaMemcpyDeviceToHost));
	if (back[0] != 0) { // device memory reads as zeros on the simulator
		fprintf(stderr, "allocs: device memory read back %d\n", back[0]);
		exit(4);
	}
	CK(cudaMemset(a, 0, 64));
	F(cudaFree(a), K_DEVICE, a, dev);
	F(cudaFree(ps), K_DEVICE, ps, dev);
	F(cudaFree(pp.ptr), K_DEVICE, pp.ptr, dev);
	F(cudaFree(m), K_DEVICE, m, dev); // a free is of the kind its API implies
	F(cudaFreeHost(h), K_HOST, h, -1);
	F(cudaFreeHost(ha), K_HOST, ha, -1);
	CK(cudaStreamDestroy(s));
}

// The VMM calls, PyTorch's way (expandable segments).
static void vmm_calls(int dev)
{
	cudaDriverEntryPointQueryResult q;
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
	CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*setaccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*unmap)(CUdeviceptr, size_t);
	CUresult (*afree)(CUdeviceptr, size_t);
	CUresult (*release)(CUmemGenericAllocationHandle);
	CK(cudaGetDriverEntryPointByVersion("cuMemCreate", (void **)&create, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemAddressReserve", (void **)&reserve, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemMap", (void **)&map, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemSetAccess", (void **)&setaccess, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemUnmap", (void **)&unmap, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemAddressFree", (void **)&afree, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemRelease", (void **)&release, 12000, cudaEnableDefault, &q));
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	const size_t sz = 2 << 20;
	CUmemGenericAllocationHandle hd;
	CUdeviceptr va;
	DK(create(&hd, sz, &prop, 0)); expect(OP_ALLOC, K_PHYS, hd, sz, dev, __func__, __LINE__);
	DK(reserve(&va, 2 * sz, 0, 0, 0)); expect(OP_ALLOC, K_RESERVE, va, 2 * sz, -1, __func__, __LINE__);
	DK(map(va, sz, 0, hd, 0)); expect(OP_ALLOC, K_MAP, va, sz, -1, __func__, __LINE__);
	CUmemAccessDesc acc;
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	DK(setaccess(va, sz, &acc, 1));
	launch((void *)va, 0);
	expect(OP_FREE, K_MAP, va, sz, -1, __func__, __LINE__); DK(unmap(va, sz));
	expect(OP_FREE, K_RESERVE, va, 2 * sz, -1, __func__, __LINE__); DK(afree(va, 2 * sz));
	expect(OP_FREE, K_PHYS, hd, 0, dev, __func__, __LINE__); DK(release(hd));
}

// A new thread whose first runtime call is an allocation on device dev.
struct job {
	int dev;
};

static void *thread_main(void *arg)
{
	struct job *j = (struct job *)arg;
	void *p;
	if (j->dev > 0)
		CK(cudaSetDevice(j->dev)); // sets the device, does not touch the driver yet
	A(cudaMalloc(&p, 1 << 20), K_DEVICE, p, 1 << 20, j->dev);
	launch(p, 0);
	CK(cudaDeviceSynchronize());
	F(cudaFree(p), K_DEVICE, p, j->dev);
	return NULL;
}

// A new thread whose first runtime call is a free of memory main allocated.
static void *free_first(void *arg)
{
	void *p = arg;
	F(cudaFree(p), K_DEVICE, p, 0);
	return NULL;
}

static void first_call_threads(int ndev)
{
	void *p;
	pthread_t ft;
	A(cudaMalloc(&p, 8192), K_DEVICE, p, 8192, 0);
	if (pthread_create(&ft, NULL, free_first, p))
		exit(5);
	pthread_join(ft, NULL);
	pthread_t t[4];
	struct job jobs[4];
	// all at once: truth lines of one address stay in causal order, which is
	// all check.py relies on
	for (int i = 0; i < 4; i++) {
		jobs[i].dev = i % ndev;
		if (pthread_create(&t[i], NULL, thread_main, &jobs[i]))
			exit(5);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	const char *tp = getenv("TLM_TEST_TRUTH");
	truth = fopen(tp ? tp : "/dev/null", "w");
	if (!truth)
		return 2;
	// The process's first runtime call is an allocation: the runtime
	// initialises and binds device 0 lazily inside it.
	void *first;
	A(cudaMalloc(&first, 4096), K_DEVICE, first, 4096, 0);
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev > 2)
		ndev = 2;
	for (int d = 0; d < ndev; d++) {
		CK(cudaSetDevice(d));
		runtime_calls(d);
		vmm_calls(d);
	}
	CK(cudaSetDevice(0));
	F(cudaFree(first), K_DEVICE, first, 0);
	// failed allocations (1 TiB each, more than any simulated device): each
	// is recorded with the device's free memory at that moment
	for (int i = 0; i < 8; i++) {
		void *big;
		if (cudaMalloc(&big, 1ull << 40) != cudaErrorMemoryAllocation) {
			fprintf(stderr, "allocs: a 1 TiB cudaMalloc did not fail\n");
			exit(6);
		}
		(void)cudaGetLastError();
	}
	first_call_threads(ndev);
	CK(cudaDeviceSynchronize());
	fclose(truth);
	printf("allocs: ok on %d devices\n", ndev);
	return 0;
}
