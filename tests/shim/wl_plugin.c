/* SPDX-License-Identifier: MIT */
/* wl_plugin.c - a library the workload dlopens and dlcloses: its stacks must
 * stay symbolizable after it is gone (MODULE then MODULE_UNLOAD records). */
#include "workload.h"

void *wl_plugin_alloc(size_t n)
{
	void *p = NULL;
	cudaMalloc(&p, n);
	return p;
}
