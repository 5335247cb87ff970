// SPDX-License-Identifier: MIT
// contents.cu - device memory contents through NVIDIA's real runtime on the
// simulated driver: a pattern copied in, device to device, read back; sets;
// 2D copies of pitched memory; a stream-ordered allocation; a peer copy; a
// __device__ variable through cudaMemcpyToSymbol/FromSymbol; a copy past an
// allocation's end fails with cudaErrorInvalidValue. Kernels run nothing on
// the simulator, so nothing here depends on one. Exit 0 when every byte is
// as expected; each allocation and free writes a truth line (allocs.cu's
// format) for check.py.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OP_ALLOC = 1, OP_FREE = 2 };
enum { K_DEVICE = 0 };
static FILE *truth;
#define U(p) ((unsigned long long)(uintptr_t)(p))
#define CK(x)                                                                                \
	do {                                                                                 \
		cudaError_t e_ = (x);                                                        \
		if (e_ != cudaSuccess) {                                                     \
			fprintf(stderr, "contents: %s failed at line %d: %s\n", #x, __LINE__, \
				cudaGetErrorString(e_));                                     \
			exit(3);                                                             \
		}                                                                            \
	} while (0)
#define A(call, ptr, size, dev) \
	do { CK(call); fprintf(truth, "E %d %d %llx %llu %d %s %d\n", OP_ALLOC, K_DEVICE, U(ptr), (unsigned long long)(size), dev, __func__, __LINE__); } while (0)
#define F(call, ptr, dev) \
	do { fprintf(truth, "E %d %d %llx 0 %d %s %d\n", OP_FREE, K_DEVICE, U(ptr), dev, __func__, __LINE__); CK(call); } while (0)
#define SAME(a, b, n, what)                                                      \
	do {                                                                     \
		if (memcmp((a), (b), (n)) != 0) {                                \
			fprintf(stderr, "contents: %s: bytes differ\n", what);   \
			exit(4);                                                 \
		}                                                                \
	} while (0)

__device__ int table[256];

__global__ void touch(int *p) { p[threadIdx.x] += 1; }

static void run(void)
{
	enum { N = 1 << 20 };
	static unsigned char in[N], out[N], want[N];
	for (int i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 13 + 1);
	void *a, *b;
	A(cudaMalloc(&a, N), a, N, 0);
	A(cudaMalloc(&b, N), b, N, 0);
	CK(cudaMemcpy(a, in, N, cudaMemcpyHostToDevice));
	touch<<<1, 32>>>((int *)a); // runs nothing here
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(b, a, N, cudaMemcpyDeviceToDevice));
	CK(cudaMemcpy(out, b, N, cudaMemcpyDeviceToHost));
	SAME(out, in, N, "H2D, D2D, D2H");
	CK(cudaMemset(b, 0x5a, 1000));
	CK(cudaMemcpy(out, b, N, cudaMemcpyDefault));
	memcpy(want, in, N);
	memset(want, 0x5a, 1000);
	SAME(out, want, N, "memset");
	// a copy past the end of an allocation fails and writes nothing (2 MiB:
	// the simulator's allocation granule, as the real driver's for this size)
	void *e;
	A(cudaMalloc(&e, 2 << 20), e, 2 << 20, 0);
	memset(out, 0x77, 64);
	if (cudaMemcpy(out, (char *)e + (2 << 20) - 32, 64, cudaMemcpyDeviceToHost) != cudaErrorInvalidValue) {
		fprintf(stderr, "contents: a copy past the end did not fail with cudaErrorInvalidValue\n");
		exit(5);
	}
	(void)cudaGetLastError();
	for (int i = 0; i < 64; i++)
		if (out[i] != 0x77) {
			fprintf(stderr, "contents: a failed copy wrote bytes\n");
			exit(5);
		}
	// pitched memory, 2D copies in and out
	void *p;
	size_t pitch;
	A(cudaMallocPitch(&p, &pitch, 100, 20), p, pitch * 20, 0);
	CK(cudaMemcpy2D(p, pitch, in, 100, 100, 20, cudaMemcpyHostToDevice));
	CK(cudaMemset2D((char *)p + 10, pitch, 0, 5, 20));
	CK(cudaMemcpy2D(out, 100, p, pitch, 100, 20, cudaMemcpyDeviceToHost));
	memcpy(want, in, 2000);
	for (int y = 0; y < 20; y++)
		memset(want + y * 100 + 10, 0, 5);
	SAME(out, want, 2000, "2D");
	// stream-ordered: async copies around a pool allocation
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	void *q;
	A(cudaMallocAsync(&q, 4096, s), q, 4096, 0);
	CK(cudaMemcpyAsync(q, in + 5, 4096, cudaMemcpyHostToDevice, s));
	CK(cudaMemsetAsync((char *)q + 4000, 1, 96, s));
	CK(cudaMemcpyAsync(out, q, 4096, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	memcpy(want, in + 5, 4096);
	memset(want + 4000, 1, 96);
	SAME(out, want, 4096, "async");
	F(cudaFreeAsync(q, s), q, 0);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	// a __device__ variable
	int t[256], u[256];
	for (int i = 0; i < 256; i++)
		t[i] = i * i;
	CK(cudaMemcpyToSymbol(table, t, sizeof t));
	CK(cudaMemcpyFromSymbol(u, table, sizeof u));
	SAME(u, t, sizeof t, "symbol");
	// peer copy to device 1
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev > 1) {
		void *c;
		CK(cudaSetDevice(1));
		A(cudaMalloc(&c, N), c, N, 1);
		CK(cudaMemcpyPeer(c, 1, a, 0, N));
		CK(cudaMemcpy(out, c, N, cudaMemcpyDeviceToHost));
		SAME(out, in, N, "peer");
		F(cudaFree(c), c, 1);
		CK(cudaSetDevice(0));
	}
	F(cudaFree(e), e, 0);
	F(cudaFree(p), p, 0);
	F(cudaFree(b), b, 0);
	F(cudaFree(a), a, 0);
}

int main(void)
{
	const char *tp = getenv("TLM_TEST_TRUTH");
	truth = fopen(tp ? tp : "/dev/null", "w");
	if (!truth)
		return 2;
	run();
	fclose(truth);
	printf("contents: every byte as expected\n");
	return 0;
}
