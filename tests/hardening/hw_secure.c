/* SPDX-License-Identifier: MIT */
/*
 * hw_secure.c - libtlm.so in a setuid/setgid process. The dynamic loader
 * ignores LD_PRELOAD paths in such a process, but a privileged program can
 * still load libtlm.so (an install in a system directory, /etc/ld.so.preload,
 * dlopen): then libtlm must do nothing, and above all write no file on the
 * program's behalf. This program dlopen()s LIBTLM then the runtime double,
 * calls cudaMalloc/cudaFree through libtlm's own symbols, and prints
 * "secure S result R" (S = getauxval(AT_SECURE)).
 *   hw_secure LIBTLM LIBCUDART
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "common/cuda_abi.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 64;
	void *tlm = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!tlm) {
		fprintf(stderr, "hw_secure: %s\n", dlerror());
		return 2;
	}
	/* in a secure process $ORIGIN and LD_LIBRARY_PATH do not apply, so the
	 * double may not load; libtlm's cudaMalloc then fails, which is fine:
	 * what matters is that it writes nothing */
	if (!dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL))
		fprintf(stderr, "hw_secure: %s\n", dlerror());
	cudaError_t (*m)(void **, size_t) = (cudaError_t(*)(void **, size_t))dlsym(tlm, "cudaMalloc");
	cudaError_t (*f)(void *) = (cudaError_t(*)(void *))dlsym(tlm, "cudaFree");
	if (!m || !f)
		return 3;
	void *p = NULL;
	int r = (int)m(&p, 4096);
	if (r == 0)
		f(p);
	printf("secure %lu result %d\n", getauxval(AT_SECURE), r);
	return 0;
}
