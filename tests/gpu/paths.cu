// SPDX-License-Identifier: MIT
// paths.cu - the recording check on a real GPU: allocations through the
// runtime (statically or dynamically linked cudart, as nvcc was told), the
// stream-ordered allocator, managed and pinned memory, and VMM driver calls
// reached through cudaGetDriverEntryPointByVersion (PyTorch's way). Each call
// tlm must record is written to $TLM_TEST_TRUTH in the end-to-end tests'
// format, so trace_check can compare the trace with it field by field.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *truth;
#define U(p) ((unsigned long long)(uintptr_t)(p))
// op kind api: values of include/tlm/event.h
enum { OP_ALLOC = 1, OP_FREE = 2 };
enum { K_DEVICE = 0, K_MANAGED = 1, K_HOST = 2, K_PHYS = 3, K_RESERVE = 4, K_MAP = 5 };

static void expect(int op, int kind, const char *api, unsigned long long addr, unsigned long long size, int res,
		   int dev, unsigned long long stream, unsigned long long aux, int runtime)
{
	// api by name: trace_check maps names to ids
	fprintf(truth, "E %d %d %s %llx %llu %d %d %llx %llx %d\n", op, kind, api, addr, size, res, dev, stream, aux,
		runtime);
}

#define CK(x)                                                                    \
	do {                                                                     \
		if ((x) != 0) {                                                  \
			fprintf(stderr, "paths: %s failed at line %d\n", #x, __LINE__); \
			exit(3);                                                 \
		}                                                                \
	} while (0)

int main(void)
{
	truth = fopen(getenv("TLM_TEST_TRUTH"), "w");
	if (!truth)
		return 2;
	void *a, *m, *h, *as;
	cudaStream_t s;
	CK(cudaSetDevice(0));
	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&a, 3 << 20));
	expect(OP_ALLOC, K_DEVICE, "cudaMalloc", U(a), 3 << 20, 0, 0, 0, 0, 1);
	CK(cudaMallocManaged(&m, 1 << 20));
	expect(OP_ALLOC, K_MANAGED, "cudaMallocManaged", U(m), 1 << 20, 0, 0, 0, 0, 1);
	CK(cudaMallocHost(&h, 12345));
	expect(OP_ALLOC, K_HOST, "cudaMallocHost", U(h), 12345, 0, -1, 0, 0, 1);
	CK(cudaMallocAsync(&as, 777, s));
	expect(OP_ALLOC, K_DEVICE, "cudaMallocAsync", U(as), 777, 0, 0, U(s), 0, 1);
	expect(OP_FREE, K_DEVICE, "cudaFreeAsync", U(as), 0, 0, 0, U(s), 0, 1);
	CK(cudaFreeAsync(as, s));
	CK(cudaStreamSynchronize(s));

	// expandable segments' way to the VMM calls
	cudaDriverEntryPointQueryResult q;
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
	CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*unmap)(CUdeviceptr, size_t);
	CUresult (*afree)(CUdeviceptr, size_t);
	CUresult (*release)(CUmemGenericAllocationHandle);
	CK(cudaGetDriverEntryPointByVersion("cuMemCreate", (void **)&create, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemAddressReserve", (void **)&reserve, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemMap", (void **)&map, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemUnmap", (void **)&unmap, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemAddressFree", (void **)&afree, 12000, cudaEnableDefault, &q));
	CK(cudaGetDriverEntryPointByVersion("cuMemRelease", (void **)&release, 12000, cudaEnableDefault, &q));
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	size_t gran = 0;
	CUresult (*granf)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
	CK(cudaGetDriverEntryPointByVersion("cuMemGetAllocationGranularity", (void **)&granf, 12000, cudaEnableDefault,
					    &q));
	CK(granf(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUmemGenericAllocationHandle ph;
	CUdeviceptr va;
	CK(create(&ph, 2 * gran, &prop, 0));
	expect(OP_ALLOC, K_PHYS, "cuMemCreate", ph, 2 * gran, 0, 0, 0, 0, 0);
	CK(reserve(&va, 4 * gran, 0, 0, 0));
	expect(OP_ALLOC, K_RESERVE, "cuMemAddressReserve", va, 4 * gran, 0, -1, 0, 0, 0);
	CK(map(va, 2 * gran, 0, ph, 0));
	expect(OP_ALLOC, K_MAP, "cuMemMap", va, 2 * gran, 0, -1, 0, ph, 0);
	expect(OP_FREE, K_MAP, "cuMemUnmap", va, 2 * gran, 0, -1, 0, 0, 0);
	CK(unmap(va, 2 * gran));
	expect(OP_FREE, K_RESERVE, "cuMemAddressFree", va, 4 * gran, 0, -1, 0, 0, 0);
	CK(afree(va, 4 * gran));
	expect(OP_FREE, K_PHYS, "cuMemRelease", ph, 0, 0, 0, 0, 0, 0);
	CK(release(ph));

	expect(OP_FREE, K_DEVICE, "cudaFree", U(a), 0, 0, 0, 0, 0, 1);
	CK(cudaFree(a));
	expect(OP_FREE, K_DEVICE, "cudaFree", U(m), 0, 0, 0, 0, 0, 1);
	CK(cudaFree(m));
	expect(OP_FREE, K_HOST, "cudaFreeHost", U(h), 0, 0, -1, 0, 0, 1);
	CK(cudaFreeHost(h));
	fclose(truth);
	printf("paths: done\n");
	return 0;
}
