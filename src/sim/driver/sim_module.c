// SPDX-License-Identifier: MIT
/*
 * Modules, libraries, kernels and launches: accepted, nothing runs.
 *
 * cuModuleLoad* and cuLibraryLoad* take any image (the runtime hands a fatbin
 * wrapper) and return a handle; cuLibraryGetKernel/cuModuleGetFunction return
 * one handle per (library, name), usable as CUkernel and CUfunction alike;
 * a launch checks its function handle and returns success at once (work is
 * complete when issued). Globals (cuLibraryGetGlobal, cuModuleGetGlobal_v2)
 * get addresses from their own region, outside every device's memory
 * accounting; copies to or from them behave like device memory
 * (sim_copy.c). Handles are never freed: a kernel handle may outlive its
 * library in a racing thread, and programs load a bounded number.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define LIB_MAGIC 0x746c6d6cu /* "tlml" */
#define FN_MAGIC 0x746c6d66u  /* "tlmf" */

struct sim_lib {
	uint32_t magic;
	bool unloaded;
};

struct sim_fn {
	uint32_t magic;
	struct sim_lib *lib;
	struct sim_fn *next;
	char name[];
};

struct sim_global {
	struct sim_lib *lib;
	uint64_t addr;
	struct sim_global *next;
	char name[];
};

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_fn *fns;
static struct sim_global *globals;
static uint64_t next_global = SIM_GLOBAL_VA_BASE;

static CUresult new_lib(void **out)
{
	CUresult r = sim_enter(!out);
	if (r)
		return r;
	struct sim_lib *l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	l->magic = LIB_MAGIC;
	*out = l;
	return CUDA_SUCCESS;
}

static bool lib_ok(const void *h)
{
	const struct sim_lib *l = h;
	return l && l->magic == LIB_MAGIC && !l->unloaded;
}

static bool fn_ok(const void *h)
{
	return h && ((const struct sim_fn *)h)->magic == FN_MAGIC;
}

static CUresult get_fn(void **out, void *lib, const char *name)
{
	CUresult r = sim_enter(!out || !name);
	if (r)
		return r;
	if (!lib_ok(lib))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mod_lock);
	struct sim_fn *f;
	for (f = fns; f; f = f->next)
		if (f->lib == lib && strcmp(f->name, name) == 0)
			break;
	if (!f) {
		size_t n = strlen(name);
		f = malloc(sizeof(*f) + n + 1);
		if (f) {
			f->magic = FN_MAGIC, f->lib = lib;
			memcpy(f->name, name, n + 1);
			f->next = fns, fns = f;
		}
	}
	pthread_mutex_unlock(&mod_lock);
	if (!f)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = f;
	return CUDA_SUCCESS;
}

/* Globals lie 256 MiB apart, so that no two overlap whatever their real size
 * (the driver is not told it: the runtime knows it from its registration);
 * each reports 64 KiB, which cuBLAS's deviceConstants and friends fit. */
#define GLOBAL_SLOT (256ull << 20)
#define GLOBAL_BYTES (64u << 10)

static CUresult get_global(CUdeviceptr *dptr, size_t *bytes, void *lib, const char *name)
{
	CUresult r = sim_enter(!name || (!dptr && !bytes));
	if (r)
		return r;
	if (!lib_ok(lib))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&mod_lock);
	struct sim_global *g;
	for (g = globals; g; g = g->next)
		if (g->lib == lib && strcmp(g->name, name) == 0)
			break;
	if (!g && next_global + GLOBAL_SLOT <= SIM_GLOBAL_VA_BASE + SIM_GLOBAL_VA_SIZE) {
		size_t n = strlen(name);
		g = malloc(sizeof(*g) + n + 1);
		if (g) {
			g->lib = lib, g->addr = next_global;
			next_global += GLOBAL_SLOT;
			memcpy(g->name, name, n + 1);
			g->next = globals, globals = g;
		}
	}
	pthread_mutex_unlock(&mod_lock);
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (dptr)
		*dptr = g->addr;
	if (bytes)
		*bytes = GLOBAL_BYTES;
	return CUDA_SUCCESS;
}

bool sim_is_global(uint64_t addr)
{
	return addr >= SIM_GLOBAL_VA_BASE && addr < SIM_GLOBAL_VA_BASE + SIM_GLOBAL_VA_SIZE;
}

/* ---- modules (eager path) ---- */

CUresult sim_cuModuleGetLoadingMode(int *mode)
{
	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	*mode = 2; /* CU_MODULE_LAZY_LOADING: the runtime then takes the cuLibrary path */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuModuleGetLoadingMode);

CUresult sim_cuModuleLoad(void **module, const char *fname)
{
	return fname ? new_lib(module) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuModuleLoad);

CUresult sim_cuModuleLoadData(void **module, const void *image)
{
	return image ? new_lib(module) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuModuleLoadData);

CUresult sim_cuModuleLoadDataEx(void **module, const void *image, unsigned n, void *opts, void **vals)
{
	(void)n, (void)opts, (void)vals;
	return image ? new_lib(module) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuModuleLoadDataEx);

CUresult sim_cuModuleLoadFatBinary(void **module, const void *fatbin)
{
	return fatbin ? new_lib(module) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuModuleLoadFatBinary);

static CUresult unload(void *h)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!lib_ok(h))
		return CUDA_ERROR_INVALID_HANDLE;
	((struct sim_lib *)h)->unloaded = true;
	return CUDA_SUCCESS;
}

CUresult sim_cuModuleUnload(void *module)
{
	return unload(module);
}
SIM_EXPORT(cuModuleUnload);

CUresult sim_cuModuleGetFunction(void **hfunc, void *module, const char *name)
{
	return get_fn(hfunc, module, name);
}
SIM_EXPORT(cuModuleGetFunction);

CUresult sim_cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, void *module, const char *name)
{
	return get_global(dptr, bytes, module, name);
}
SIM_EXPORT(cuModuleGetGlobal_v2);

/* ---- libraries (lazy path) ---- */

CUresult sim_cuLibraryLoadData(void **library, const void *code, void *jo, void **jv, unsigned nj,
			       void *lo, void **lv, unsigned nl)
{
	(void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
	return code ? new_lib(library) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuLibraryLoadData);

CUresult sim_cuLibraryLoadFromFile(void **library, const char *fname, void *jo, void **jv, unsigned nj,
				   void *lo, void **lv, unsigned nl)
{
	(void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
	return fname ? new_lib(library) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuLibraryLoadFromFile);

CUresult sim_cuLibraryUnload(void *library)
{
	return unload(library);
}
SIM_EXPORT(cuLibraryUnload);

CUresult sim_cuLibraryGetKernel(void **kernel, void *library, const char *name)
{
	return get_fn(kernel, library, name);
}
SIM_EXPORT(cuLibraryGetKernel);

CUresult sim_cuLibraryGetModule(void **module, void *library)
{
	if (!module)
		return CUDA_ERROR_INVALID_VALUE;
	if (!lib_ok(library))
		return CUDA_ERROR_INVALID_HANDLE;
	*module = library; /* one handle serves as both */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuLibraryGetModule);

CUresult sim_cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, void *library, const char *name)
{
	return get_global(dptr, bytes, library, name);
}
SIM_EXPORT(cuLibraryGetGlobal);

CUresult sim_cuLibraryGetKernelCount(unsigned *count, void *library)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!lib_ok(library))
		return CUDA_ERROR_INVALID_HANDLE;
	*count = 0; /* the image is not parsed */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuLibraryGetKernelCount);

/* ---- kernels and functions ---- */

CUresult sim_cuKernelGetFunction(void **pFunc, void *kernel)
{
	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!fn_ok(kernel))
		return CUDA_ERROR_INVALID_HANDLE;
	*pFunc = kernel;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuKernelGetFunction);

CUresult sim_cuKernelGetLibrary(void **pLib, void *kernel)
{
	if (!pLib)
		return CUDA_ERROR_INVALID_VALUE;
	if (!fn_ok(kernel))
		return CUDA_ERROR_INVALID_HANDLE;
	*pLib = ((struct sim_fn *)kernel)->lib;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuKernelGetLibrary);

/* CUfunction_attribute values of a small sm_90 kernel. */
static CUresult fn_attr(int *pi, int attrib)
{
	static const int v[] = {1024, 0, 0, 0, 32, 90, 90, 0, 49152, -1, 0, 0, 0, 0, 0, 0};
	if (!pi || attrib < 0 || attrib >= (int)(sizeof(v) / sizeof(v[0])))
		return CUDA_ERROR_INVALID_VALUE;
	*pi = v[attrib];
	return CUDA_SUCCESS;
}

CUresult sim_cuFuncGetAttribute(int *pi, int attrib, void *hfunc)
{
	if (!fn_ok(hfunc))
		return CUDA_ERROR_INVALID_HANDLE;
	return fn_attr(pi, attrib);
}
SIM_EXPORT(cuFuncGetAttribute);

CUresult sim_cuKernelGetAttribute(int *pi, int attrib, void *kernel, CUdevice dev)
{
	if (!fn_ok(kernel))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!sim_valid_device(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	return fn_attr(pi, attrib);
}
SIM_EXPORT(cuKernelGetAttribute);

CUresult sim_cuFuncSetAttribute(void *hfunc, int attrib, int value)
{
	(void)attrib, (void)value;
	return fn_ok(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuFuncSetAttribute);

CUresult sim_cuKernelSetAttribute(int attrib, int val, void *kernel, CUdevice dev)
{
	(void)attrib, (void)val, (void)dev;
	return fn_ok(kernel) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuKernelSetAttribute);

CUresult sim_cuFuncSetCacheConfig(void *hfunc, int config)
{
	(void)config;
	return fn_ok(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuFuncSetCacheConfig);

CUresult sim_cuKernelSetCacheConfig(void *kernel, int config, CUdevice dev)
{
	(void)config, (void)dev;
	return fn_ok(kernel) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuKernelSetCacheConfig);

CUresult sim_cuFuncSetSharedMemConfig(void *hfunc, int config)
{
	(void)config;
	return fn_ok(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuFuncSetSharedMemConfig);

CUresult sim_cuFuncGetName(const char **name, void *hfunc)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!fn_ok(hfunc))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = ((struct sim_fn *)hfunc)->name;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuFuncGetName);

CUresult sim_cuKernelGetName(const char **name, void *kernel)
{
	return sim_cuFuncGetName(name, kernel);
}
SIM_EXPORT(cuKernelGetName);

CUresult sim_cuFuncGetModule(void **hmod, void *hfunc)
{
	return sim_cuKernelGetLibrary(hmod, hfunc);
}
SIM_EXPORT(cuFuncGetModule);

CUresult sim_cuFuncIsLoaded(int *state, void *hfunc)
{
	if (!state)
		return CUDA_ERROR_INVALID_VALUE;
	if (!fn_ok(hfunc))
		return CUDA_ERROR_INVALID_HANDLE;
	*state = 1; /* CU_FUNCTION_LOADING_STATE_LOADED */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuFuncIsLoaded);

CUresult sim_cuFuncLoad(void *hfunc)
{
	return fn_ok(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
SIM_EXPORT(cuFuncLoad);

/* ---- launches ---- */

static CUresult launch(void *f, CUstream s)
{
	int dev;
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!fn_ok(f))
		return CUDA_ERROR_INVALID_HANDLE;
	return sim_stream_device(s, &dev);
}

CUresult sim_cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			    unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
	(void)params, (void)extra, (void)shmem;
	if (!gx || !gy || !gz || !bx || !by || !bz)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, s);
}
SIM_EXPORT(cuLaunchKernel);

CUresult sim_cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				 unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
				 void **extra)
{
	return sim_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
SIM_EXPORT(cuLaunchKernel_ptsz);

CUresult sim_cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				       unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
	return sim_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}
SIM_EXPORT(cuLaunchCooperativeKernel);

CUresult sim_cuLaunchCooperativeKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz,
					    unsigned bx, unsigned by, unsigned bz, unsigned shmem,
					    CUstream s, void **params)
{
	return sim_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}
SIM_EXPORT(cuLaunchCooperativeKernel_ptsz);

/* CUlaunchConfig: gridDim x/y/z, blockDim x/y/z, sharedMemBytes, hStream, ... */
struct launch_config {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	CUstream stream;
};

CUresult sim_cuLaunchKernelEx(const struct launch_config *c, void *f, void **params, void **extra)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	return sim_cuLaunchKernel(f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->shmem, c->stream,
				  params, extra);
}
SIM_EXPORT(cuLaunchKernelEx);

CUresult sim_cuLaunchKernelEx_ptsz(const struct launch_config *c, void *f, void **params, void **extra)
{
	return sim_cuLaunchKernelEx(c, f, params, extra);
}
SIM_EXPORT(cuLaunchKernelEx_ptsz);
