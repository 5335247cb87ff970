/* SPDX-License-Identifier: MIT */
/*
 * owners_class.c - the one rule that names a module's part in an allocation
 * (owners.h, docs/report.md OWNERS), by the module's file name.
 */
#include <stdbool.h>
#include <string.h>

#include "analysis/owners.h"

static bool prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* Libraries a call passes through on its way to the driver: they never own
 * what they pass on. The CUDA runtime is here because every library links
 * its own copy (cuBLAS and cuDNN a static one, which shows as their own
 * frames); libtlm_simblas is the simulated device's cuBLAS compute stand-in. */
static const char *const carriers[] = {
	"libtlm", "libcudart", "libcuda.so", "libc.so", "libc-", "libpthread", "ld-linux", "ld-musl",
	"libdl.so", "libdl-", "libstdc++", "libgcc_s", "libm.so", "libnvidia-ml", "linux-vdso",
};

/* The program's own code: its executable, the Python interpreter and what
 * Python calls C through (ctypes, cffi). */
static const char *const program[] = {
	"python", "libpython", "_ctypes", "libffi", "_cffi_backend",
};

static const struct {
	const char *prefix, *owner;
} named[] = {
	{"libc10_cuda.", TLM_OWNER_PYTORCH}, /* the caching allocator (c10/cuda/CUDACachingAllocator.cpp) */
	{"libcublasLt", TLM_OWNER_CUBLAS},   {"libcublas", TLM_OWNER_CUBLAS},
	{"libcudnn", TLM_OWNER_CUDNN},       {"libnccl", TLM_OWNER_NCCL},
};

enum tlm__owner_cls tlm__owner_class(const char *path, const char *exe, const char **name)
{
	*name = NULL;
	if (!path || !*path || (exe && *exe && !strcmp(path, exe)))
		return TLM__OWN_PROGRAM;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof carriers / sizeof carriers[0]; i++)
		if (prefix(base, carriers[i]))
			return TLM__OWN_CARRIER;
	for (size_t i = 0; i < sizeof program / sizeof program[0]; i++)
		if (prefix(base, program[i]))
			return TLM__OWN_PROGRAM;
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (prefix(base, named[i].prefix)) {
			*name = named[i].owner;
			break;
		}
	return TLM__OWN_NAMED;
}
