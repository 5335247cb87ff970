// SPDX-License-Identifier: MIT
// general4.cu - pools on two devices (created with maxSize, made current,
// access from the other device, an allocation from device 0's pool on a
// device-1 stream, one past maxSize), and VMM through the driver API linked
// directly: one handle mapped twice, a copy through one mapping read back
// through the other.
#include <cuda_runtime.h>
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("FAIL %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
int main() {
  cudaMemPool_t p[2];
  for (int d = 0; d < 2; d++) {
    CK(cudaSetDevice(d));
    cudaMemPoolProps props = {}; props.allocType = cudaMemAllocationTypePinned; props.location.type = cudaMemLocationTypeDevice; props.location.id = d; props.maxSize = 64 << 20;
    CK(cudaMemPoolCreate(&p[d], &props));
    CK(cudaDeviceSetMemPool(d, p[d]));
    cudaMemPool_t cur; CK(cudaDeviceGetMemPool(&cur, d)); if (cur != p[d]) { printf("FAIL current pool\n"); exit(1); }
    int one = 1; CK(cudaMemPoolSetAttribute(p[d], cudaMemPoolReuseFollowEventDependencies, &one));
  }
  cudaMemAccessDesc acc = {}; acc.location.type = cudaMemLocationTypeDevice; acc.location.id = 1; acc.flags = cudaMemAccessFlagsProtReadWrite;
  CK(cudaMemPoolSetAccess(p[0], &acc, 1));
  cudaMemAccessFlags fl; CK(cudaMemPoolGetAccess(&fl, p[0], &acc.location)); if (fl != cudaMemAccessFlagsProtReadWrite) { printf("FAIL pool access\n"); exit(1); }
  CK(cudaSetDevice(1));
  cudaStream_t s1; CK(cudaStreamCreate(&s1));
  void *a; CK(cudaMallocAsync(&a, 1 << 20, s1));                // from p[1] (current)
  void *b; CK(cudaMallocFromPoolAsync(&b, 1 << 20, p[0], s1));  // device 0's pool from a device-1 stream
  unsigned long long used = 0; CK(cudaMemPoolGetAttribute(p[0], cudaMemPoolAttrUsedMemCurrent, &used)); if (used != 1 << 20 && used != 2 << 20) { printf("FAIL pool0 used %llu\n", used); exit(1); }
  void *over; if (cudaMallocAsync(&over, 128 << 20, s1) != cudaErrorMemoryAllocation) { printf("FAIL past maxSize\n"); exit(1); } (void)cudaGetLastError();
  CK(cudaFreeAsync(b, s1)); CK(cudaStreamSynchronize(s1));
  CK(cudaSetDevice(0));
  CK(cudaFreeAsync(a, 0)); CK(cudaDeviceSynchronize());
  CK(cudaMemPoolTrimTo(p[0], 0)); CK(cudaMemPoolTrimTo(p[1], 0));
  // VMM through the driver API linked directly
  CUdevice dev; cuDeviceGet(&dev, 0);
  CUmemAllocationProp prop = {}; prop.type = CU_MEM_ALLOCATION_TYPE_PINNED; prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;
  size_t g; cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  CUmemGenericAllocationHandle h; if (cuMemCreate(&h, 4 * g, &prop, 0)) { printf("FAIL cuMemCreate\n"); exit(1); }
  CUdeviceptr va; if (cuMemAddressReserve(&va, 8 * g, 0, 0, 0)) { printf("FAIL reserve\n"); exit(1); }
  cuMemMap(va, 4 * g, 0, h, 0); cuMemMap(va + 4 * g, 4 * g, 0, h, 0);
  CUmemAccessDesc ad = {}; ad.location = prop.location; ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (cuMemSetAccess(va, 8 * g, &ad, 1)) { printf("FAIL setaccess\n"); exit(1); }
  int x = 42, y = 0; CK(cudaMemcpy((void *)(va + 100), &x, 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(&y, (void *)(va + 4 * g + 100), 4, cudaMemcpyDeviceToHost));
  if (y != 42) { printf("FAIL VMM alias\n"); exit(1); }
  cuMemUnmap(va, 8 * g); cuMemRelease(h); cuMemAddressFree(va, 8 * g);
  CK(cudaMemPoolDestroy(p[0])); CK(cudaMemPoolDestroy(p[1]));
  printf("general4 OK\n");
  return 0;
}
