// SPDX-License-Identifier: MIT
// general2.cu - more of the runtime on the simulator: threads on two devices (cudaMalloc,
// cudaMalloc3D + cudaMemcpy3D read back), mapped pinned memory, __constant__ and
// __device__ symbols (async copies read back, address, size), stream priorities,
// occupancy, a __cluster_dims__ kernel and cudaLaunchKernelEx with a cluster attribute,
// managed memory with advise/prefetch, peer access, a deliberate leak, cudaDeviceReset.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("FAIL %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
__constant__ float coef[64];
__device__ int counter;
__global__ void __cluster_dims__(2, 1, 1) clustered(float *p) { p[threadIdx.x] = coef[threadIdx.x % 64]; }
__global__ void plain(double *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2; }
int main() {
  int ndev; CK(cudaGetDeviceCount(&ndev)); printf("devices %d\n", ndev);
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); printf("%s cc %d.%d sms %d mem %zu\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem);
  // threads on each device
  std::thread t[2];
  for (int d = 0; d < 2 && d < ndev; d++) t[d] = std::thread([d] {
    CK(cudaSetDevice(d));
    double *p; CK(cudaMalloc(&p, 1 << 20));
    plain<<<16, 256>>>(p, 4096);
    size_t fr, tot; CK(cudaMemGetInfo(&fr, &tot));
    cudaExtent ext = make_cudaExtent(100 * sizeof(float), 20, 5);
    cudaPitchedPtr pp; CK(cudaMalloc3D(&pp, ext));
    static float h[5][20][100]; for (int z = 0; z < 5; z++) for (int y = 0; y < 20; y++) for (int x = 0; x < 100; x++) h[z][y][x] = z * 10000 + y * 100 + x;
    cudaMemcpy3DParms cp = {}; cp.srcPtr = make_cudaPitchedPtr(h, 100 * sizeof(float), 100, 20); cp.dstPtr = pp; cp.extent = ext; cp.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&cp));
    static float back[5][20][100]; cudaMemcpy3DParms cb = {}; cb.srcPtr = pp; cb.dstPtr = make_cudaPitchedPtr(back, 100 * sizeof(float), 100, 20); cb.extent = ext; cb.kind = cudaMemcpyDeviceToHost;
    CK(cudaMemcpy3D(&cb));
    if (memcmp(h, back, sizeof h)) { printf("FAIL 3D contents dev %d\n", d); exit(1); }
    CK(cudaFree(pp.ptr)); CK(cudaFree(p));
  });
  for (int d = 0; d < 2 && d < ndev; d++) t[d].join();
  CK(cudaSetDevice(0));
  // mapped pinned memory
  float *hp; CK(cudaHostAlloc(&hp, 4096, cudaHostAllocMapped)); float *dp; CK(cudaHostGetDevicePointer(&dp, hp, 0));
  void *mh; CK(cudaMallocHost(&mh, 1000));
  // symbols
  float c[64]; for (int i = 0; i < 64; i++) c[i] = i * 0.5f;
  cudaStream_t s; int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi)); CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi));
  CK(cudaMemcpyToSymbolAsync(coef, c, sizeof c, 0, cudaMemcpyHostToDevice, s));
  float c2[64]; CK(cudaMemcpyFromSymbolAsync(c2, coef, sizeof c2, 0, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s));
  if (memcmp(c, c2, sizeof c)) { printf("FAIL constant\n"); exit(1); }
  int *cp; CK(cudaGetSymbolAddress((void **)&cp, counter)); CK(cudaMemset(cp, 0, sizeof(int)));
  size_t sz; CK(cudaGetSymbolSize(&sz, counter)); printf("symbol size %zu\n", sz);
  // occupancy and attributes
  int blocks; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, plain, 256, 0)); printf("occupancy %d\n", blocks);
  cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, plain));
  // launch with cluster attribute
  float *fp; CK(cudaMalloc(&fp, 4096));
  clustered<<<4, 64, 0, s>>>(fp); CK(cudaGetLastError());
  cudaLaunchConfig_t cfg = {}; cfg.gridDim = 4; cfg.blockDim = 64; cfg.stream = s;
  cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension; at[0].val.clusterDim.x = 2; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1; cfg.attrs = at; cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, clustered, fp));
  // managed with prefetch/advise
  float *mm; CK(cudaMallocManaged(&mm, 1 << 20)); mm[0] = 1;
  cudaMemLocation loc = {}; loc.type = cudaMemLocationTypeDevice; loc.id = 0;
  cudaError_t e1 = cudaMemAdvise(mm, 1 << 20, cudaMemAdviseSetPreferredLocation, loc);
  cudaError_t e2 = cudaMemPrefetchAsync(mm, 1 << 20, loc, 0, s);
  printf("advise %s prefetch %s\n", cudaGetErrorString(e1), cudaGetErrorString(e2)); (void)cudaGetLastError();
  // peer access
  if (ndev > 1) { int can; CK(cudaDeviceCanAccessPeer(&can, 0, 1)); printf("peer %d\n", can); cudaError_t e = cudaDeviceEnablePeerAccess(1, 0); printf("enable peer %s\n", cudaGetErrorString(e)); (void)cudaGetLastError(); }
  CK(cudaStreamSynchronize(s)); CK(cudaStreamDestroy(s));
  CK(cudaFree(mm)); CK(cudaFree(fp)); CK(cudaFreeHost(mh)); CK(cudaFreeHost(hp));
  // a leak on purpose, then device reset
  void *leak; CK(cudaMalloc(&leak, 3 << 20));
  CK(cudaDeviceReset());
  printf("gen2 OK\n");
  return 0;
}
