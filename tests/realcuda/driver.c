// SPDX-License-Identifier: MIT
// driver.c - a program written against the CUDA driver API (cuda.h, linked
// with the toolkit's stub libcuda.so): the ABI names cuda.h's macros pick
// (cuCtxCreate -> cuCtxCreate_v4, cuMemAlloc -> cuMemAlloc_v2, ...) must
// exist in the simulated driver, a PTX module loads and its kernel launches,
// and libtlm.so records each allocation once. Truth lines as allocs.cu.
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *truth;
#define C(x)                                                                          \
	do {                                                                          \
		CUresult r_ = (x);                                                    \
		if (r_) {                                                             \
			fprintf(stderr, "driver: %s failed at line %d: %d\n", #x, __LINE__, r_); \
			exit(3);                                                      \
		}                                                                     \
	} while (0)
#define T(op, kind, addr, size, dev) \
	fprintf(truth, "E %d %d %llx %llu %d %s %d\n", op, kind, (unsigned long long)(addr), \
		(unsigned long long)(size), dev, __func__, __LINE__)

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry k(.param .u64 p) { ret; }\n";

static void on_device(int ordinal)
{
	CUdevice d;
	CUcontext c;
	CUdeviceptr p;
	CUmodule m;
	CUfunction f;
	void *h;
	C(cuDeviceGet(&d, ordinal));
	C(cuCtxCreate(&c, NULL, 0, d));
	C(cuMemAlloc(&p, 1000)); T(1, 0, p, 1000, ordinal);
	C(cuMemAllocHost(&h, 5000)); T(1, 2, h, 5000, -1);
	C(cuMemcpyHtoD(p, h, 64));
	C(cuModuleLoadData(&m, ptx));
	C(cuModuleGetFunction(&f, m, "k"));
	void *args[] = {&p};
	C(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
	C(cuCtxSynchronize());
	C(cuModuleUnload(m));
	T(2, 2, h, 0, -1); C(cuMemFreeHost(h));
	T(2, 0, p, 0, ordinal); C(cuMemFree(p));
	C(cuCtxDestroy(c));
}

int main(void)
{
	const char *tp = getenv("TLM_TEST_TRUTH");
	truth = fopen(tp ? tp : "/dev/null", "w");
	if (!truth)
		return 2;
	int n;
	C(cuInit(0));
	C(cuDeviceGetCount(&n));
	for (int i = 0; i < n && i < 2; i++)
		on_device(i);
	fclose(truth);
	printf("driver: ok\n");
	return 0;
}
