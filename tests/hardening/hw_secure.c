/* SPDX-License-Identifier: MIT */
/*
 * hw_secure.c - libtlm.so in a setuid/setgid process. The dynamic loader
 * ignores LD_PRELOAD paths in such a process, but a privileged program can
 * still get libtlm.so (an install in a system directory, /etc/ld.so.preload,
 * a link-time dependency, as here): then libtlm must do nothing, and above
 * all write no file on the program's behalf. This program is linked against
 * libtlm.so ahead of the runtime double (absolute RPATH: a secure process
 * ignores $ORIGIN and LD_LIBRARY_PATH), makes one cudaMalloc/cudaFree pair
 * and prints "secure S result R" (S = getauxval(AT_SECURE)).
 */
#include <stdio.h>
#include <sys/auxv.h>

#include "workload.h"

int main(void)
{
	void *p = NULL;
	cudaSetDevice(0); /* not wrapped: the runtime double is a dependency (after libtlm) */
	int r = (int)cudaMalloc(&p, 4096);
	if (r == 0)
		cudaFree(p);
	printf("secure %lu result %d\n", getauxval(AT_SECURE), r);
	return 0;
}
