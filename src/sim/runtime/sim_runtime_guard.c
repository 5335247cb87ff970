// SPDX-License-Identifier: MIT
/*
 * A program built by nvcc registers its kernels with the runtime from a
 * constructor (__cudaRegisterFatBinary). Only NVIDIA's runtime can serve
 * it; if the dynamic linker picked tlm's runtime double instead (its
 * directory, build/src/sim/runtime, ahead of the toolkit's in LD_LIBRARY_PATH), say
 * so in one line and stop, instead of a later "symbol lookup error".
 */
#include <stdio.h>
#include <unistd.h>

#define SIM_PUBLIC __attribute__((visibility("default")))

SIM_PUBLIC void **__cudaRegisterFatBinary(void *fatCubin);

void **__cudaRegisterFatBinary(void *fatCubin)
{
	(void)fatCubin;
	fprintf(stderr, "tlm-sim: this program was built by nvcc for NVIDIA's CUDA runtime, but tlm's runtime "
			"double (build/src/sim/runtime/libcudart.so.13) was loaded: put the toolkit's lib64 (or the "
			"wheel's lib) before build/src/sim/runtime in LD_LIBRARY_PATH, or drop that directory\n");
	_exit(127);
}
