// SPDX-License-Identifier: MIT
/*
 * Where the runtime double finds the simulated driver when
 * dlopen("libcuda.so.1") by name finds none: one directory up from itself.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *simrt_open_beside(void) __attribute__((visibility("hidden")));

/* libcuda.so.1 one directory up from this library (build/src/sim). The
 * RUNPATH ($ORIGIN/..) says the same, but glibc applies the RUNPATH of
 * dlopen's caller, which is the sanitizer's interceptor in sanitized builds. */
void *simrt_open_beside(void)
{
	Dl_info info;
	char path[4096];
	if (!dladdr((void *)simrt_open_beside, &info) || !info.dli_fname)
		return NULL;
	const char *slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return NULL;
	int n = snprintf(path, sizeof path, "%.*s/../libcuda.so.1", (int)(slash - info.dli_fname),
			 info.dli_fname);
	return n > 0 && (size_t)n < sizeof path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
}
