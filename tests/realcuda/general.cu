// SPDX-License-Identifier: MIT
// general.cu - a program unlike allocs.cu: templates and several kernels (sm_90), managed
// memory written and read from host code, streams and events, a pool shared by four
// threads (cudaMallocFromPoolAsync + cudaMallocAsync, contents read back), a captured
// graph (memset, copy, host function) launched twice. 403 device allocations, 404
// cudaFree/FreeAsync (one frees managed memory), one pool create/trim/destroy.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("FAIL %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
template <typename T> __global__ void axpy(T a, const T *x, T *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }
template <typename T, int B> __global__ void reduce(const T *x, T *out, int n) { __shared__ T s[B]; int i = threadIdx.x; s[i] = i < n ? x[i] : T(0); __syncthreads(); if (i == 0) { T t = 0; for (int k = 0; k < B; k++) t += s[k]; *out = t; } }
__global__ void k3(float4 *p) { p[threadIdx.x].x = 1.f; }
int main() {
  int n = 1 << 16;
  float *m; CK(cudaMallocManaged(&m, n * sizeof(float)));
  for (int i = 0; i < n; i++) m[i] = (float)i;          // host writes managed memory
  double *d; CK(cudaMalloc(&d, n * sizeof(double)));
  axpy<float><<<n / 256, 256>>>(2.f, m, m, n);
  axpy<double><<<n / 256, 256>>>(2.0, d, d, n);
  reduce<float, 256><<<1, 256>>>(m, m, n);
  float4 *f4; CK(cudaMalloc(&f4, 1024 * sizeof(float4))); k3<<<1, 32>>>(f4);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  double sum = 0; for (int i = 1; i < n; i++) sum += m[i];   // host reads managed memory
  printf("managed sum %.0f\n", sum);
  // streams and events
  cudaStream_t s[2]; cudaEvent_t e0, e1;
  for (int i = 0; i < 2; i++) CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0, s[0]));
  axpy<double><<<4, 256, 0, s[0]>>>(1.0, d, d, 1024);
  CK(cudaStreamWaitEvent(s[1], e0, 0));
  CK(cudaEventRecord(e1, s[1]));
  CK(cudaEventSynchronize(e1));
  float ms = -1; CK(cudaEventElapsedTime(&ms, e0, e1)); printf("elapsed %.3f\n", ms);
  // pools across threads
  cudaMemPool_t pool; cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned; props.location.type = cudaMemLocationTypeDevice; props.location.id = 0;
  CK(cudaMemPoolCreate(&pool, &props));
  unsigned long long thr = 64ull << 20; CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++) ts.emplace_back([t, pool] {
    cudaStream_t st; CK(cudaStreamCreate(&st));
    for (int k = 0; k < 50; k++) {
      void *p, *q; CK(cudaMallocFromPoolAsync(&p, (size_t)(k + 1) * 4096 * (t + 1), pool, st));
      CK(cudaMallocAsync(&q, 1000 + k, st));
      CK(cudaMemsetAsync(p, k, 4096, st));
      unsigned char b[16]; CK(cudaMemcpyAsync(b, p, 16, cudaMemcpyDeviceToHost, st)); CK(cudaStreamSynchronize(st));
      if (b[0] != (unsigned char)k) { printf("FAIL contents %d\n", b[0]); exit(1); }
      CK(cudaFreeAsync(p, st)); CK(cudaFreeAsync(q, st));
    }
    CK(cudaStreamSynchronize(st)); CK(cudaStreamDestroy(st)); });
  for (auto &t : ts) t.join();
  CK(cudaMemPoolTrimTo(pool, 0));
  // graph capture: the captured memset, copy and host function run at each launch
  {
    cudaGraph_t g; cudaGraphExec_t ge;
    static int calls;
    unsigned char *gb; CK(cudaMalloc(&gb, 8192));
    unsigned char hin[4096], hout[4096];
    for (int i = 0; i < 4096; i++) hin[i] = (unsigned char)(i * 5);
    CK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
    axpy<float><<<4, 256, 0, s[0]>>>(1.f, m, m, 1024);
    CK(cudaMemsetAsync(gb, 9, 4096, s[0]));
    CK(cudaMemcpyAsync(gb + 4096, hin, 4096, cudaMemcpyHostToDevice, s[0]));
    CK(cudaLaunchHostFunc(s[0], [](void *) { calls++; }, nullptr));
    CK(cudaStreamEndCapture(s[0], &g));
    CK(cudaMemcpy(hout, gb, 16, cudaMemcpyDeviceToHost));
    if (hout[0] != 0 || calls != 0) { printf("FAIL capture ran its work\n"); exit(1); }
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int k = 1; k <= 2; k++) {
      hin[0] = (unsigned char)(100 + k);
      CK(cudaGraphLaunch(ge, s[0])); CK(cudaStreamSynchronize(s[0]));
      CK(cudaMemcpy(hout, gb + 4096, 4096, cudaMemcpyDeviceToHost));
      unsigned char nine; CK(cudaMemcpy(&nine, gb + 4095, 1, cudaMemcpyDeviceToHost));
      if (calls != k || nine != 9 || memcmp(hout, hin, 4096)) { printf("FAIL graph launch %d\n", k); exit(1); }
    }
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    CK(cudaFree(gb));
  }
  CK(cudaMemPoolDestroy(pool));
  CK(cudaFree(f4)); CK(cudaFree(d)); CK(cudaFree(m));
  printf("gen1 OK\n");
  return 0;
}
