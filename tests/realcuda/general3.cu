// SPDX-License-Identifier: MIT
// general3.cu - __device__ variables of real size (a 4 MiB array next to a
// small one, copied in and read back through the runtime's symbol calls),
// registered host memory (cudaHostRegister, its device pointer, copies),
// cudaFuncSetAttribute, cudaMalloc3D + cudaMemset3D + cudaMemcpy3DAsync read
// back, managed memory attached to a stream, cudaMemcpy2DAsync into it.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("FAIL %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
__device__ float big[1 << 20];
__device__ float after[16];
__global__ void k(float *p) { p[0] = big[0] + after[0]; }
int main() {
  static float h[1 << 20], b[1 << 20]; for (int i = 0; i < (1 << 20); i++) h[i] = i;
  float a[16]; for (int i = 0; i < 16; i++) a[i] = -i;
  CK(cudaMemcpyToSymbol(big, h, sizeof h));
  CK(cudaMemcpyToSymbol(after, a, sizeof a));
  CK(cudaMemcpyFromSymbol(b, big, sizeof b));
  if (memcmp(h, b, sizeof h)) { printf("FAIL a 4 MiB __device__ array read back differs\n"); exit(1); }
  float a2[16]; CK(cudaMemcpyFromSymbol(a2, after, sizeof a2)); if (memcmp(a, a2, sizeof a)) { printf("FAIL the next __device__ variable differs\n"); exit(1); }
  void *pb, *pa; CK(cudaGetSymbolAddress(&pb, big)); CK(cudaGetSymbolAddress(&pa, after)); if ((char *)pa - (char *)pb < (long)sizeof h && (char *)pb - (char *)pa < 64) { printf("FAIL globals overlap\n"); exit(1); }
  // host register
  static char reg[1 << 16]; CK(cudaHostRegister(reg, sizeof reg, cudaHostRegisterMapped));
  void *rd; CK(cudaHostGetDevicePointer(&rd, reg, 0)); if (rd != (void *)reg) { printf("FAIL registered memory's device pointer\n"); exit(1); }
  { void *d; CK(cudaMalloc(&d, 1 << 16)); memset(reg, 3, sizeof reg); CK(cudaMemcpy(d, reg, sizeof reg, cudaMemcpyDefault));
    unsigned char x; CK(cudaMemcpy(&x, (char *)d + 100, 1, cudaMemcpyDefault)); if (x != 3) { printf("FAIL registered copy\n"); exit(1); }
    CK(cudaHostUnregister(reg)); CK(cudaFree(d)); }
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  cudaExtent ext = make_cudaExtent(64, 4, 3); cudaPitchedPtr pp; CK(cudaMalloc3D(&pp, ext)); CK(cudaMemset3D(pp, 7, ext));
  static unsigned char o[3][4][64]; cudaMemcpy3DParms cp = {}; cp.srcPtr = pp; cp.dstPtr = make_cudaPitchedPtr(o, 64, 64, 4); cp.extent = ext; cp.kind = cudaMemcpyDeviceToHost;
  cudaStream_t s; CK(cudaStreamCreate(&s)); CK(cudaMemcpy3DAsync(&cp, s)); CK(cudaStreamSynchronize(s));
  int bad = 0; for (int z = 0; z < 3; z++) for (int y = 0; y < 4; y++) for (int x = 0; x < 64; x++) bad += o[z][y][x] != 7; if (bad) { printf("FAIL cudaMemset3D: %d bytes wrong\n", bad); exit(1); }
  float *m; CK(cudaMallocManaged(&m, 4096, cudaMemAttachHost)); CK(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle)); CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy2DAsync(m, 64, h, 64, 64, 4, cudaMemcpyDefault, s));
  CK(cudaFree(m)); CK(cudaFree(pp.ptr));
  CK(cudaStreamQuery(s)); CK(cudaStreamDestroy(s));
  printf("general3 OK\n");
  return 0;
}
