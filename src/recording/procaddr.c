/* SPDX-License-Identifier: MIT */
/*
 * procaddr.c - every way a program obtains a driver or runtime entry point:
 * dlsym (overridden), cuGetProcAddress(_v2) and cudaGetDriverEntryPoint*
 * (their hooks, here, turn what the real one returned into our wrapper:
 * translate_proc). The memory calls' wrappers are hooks_driver.c's and
 * hooks_runtime.c's; this file only reads their tables.
 *
 * dlsym is an assembly stub on x86-64: it asks tlm__dlsym_filter for a
 * wrapper and otherwise *jumps* to glibc's dlsym, so glibc still sees the
 * caller's return address and RTLD_NEXT keeps meaning "after the caller".
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "recording/hooks.h"
#include "recording/log.h"

#define NOT_LOADED CUDA_ERROR_NOT_INITIALIZED

/* Sanitizer runtimes call dlsym while they start, before their shadow memory
 * exists: the dlsym path must not be instrumented. */
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

enum { G_cuGetProcAddress, G_cuGetProcAddress_v2, G_cuGetProcAddress_v2_ptsz };
enum {
	E_cudaGetDriverEntryPoint, E_cudaGetDriverEntryPoint_ptsz, E_cudaGetDriverEntryPointByVersion,
	E_cudaGetDriverEntryPointByVersion_ptsz
};

/* ---------------------------------------------------------------- binding */

/* Wrapper of f for the real pointer p (p itself if it is ours already, or
 * when every slot is taken). */
static void *wrap(struct tlm__drv_fn *f, void *p)
{
	if (!p)
		return p;
	for (unsigned s = 0; s < TLM__NSLOT; s++)
		if (f->wrapper[s] == p)
			return p; /* already ours */
	for (unsigned s = 0; s < TLM__NSLOT; s++)
		if (tlm__drv_real(f, s) == p)
			return f->wrapper[s];
	for (unsigned s = 1; s < TLM__NSLOT; s++) {
		void *expect = NULL;
		if (atomic_compare_exchange_strong(&f->real[s], &expect, p) || expect == p)
			return f->wrapper[s];
	}
	tlm__log_once(slots_full, "more than %d implementations of %s in one process: the later ones are not traced",
		      TLM__NSLOT, f->name);
	return p;
}

static struct tlm__drv_fn *drv_find(const char *name)
{
	for (unsigned i = 0; i < tlm__ndrv; i++)
		if (!strcmp(tlm__drv[i].name, name))
			return &tlm__drv[i];
	for (unsigned i = 0; i < sizeof tlm__gpa / sizeof tlm__gpa[0]; i++)
		if (!strcmp(tlm__gpa[i].name, name))
			return &tlm__gpa[i];
	return NULL;
}

static struct tlm__rt_fn *rt_find(const char *name)
{
	for (unsigned i = 0; i < tlm__nrt; i++)
		if (!strcmp(tlm__rt[i].name, name))
			return &tlm__rt[i];
	for (unsigned i = 0; i < sizeof tlm__ep / sizeof tlm__ep[0]; i++)
		if (!strcmp(tlm__ep[i].name, name))
			return &tlm__ep[i];
	return NULL;
}

/* Maps what cuGetProcAddress returned for (base name, version, flags) to a wrapper. */
static void *translate_proc(const char *sym, int version, uint64_t flags, void *p)
{
	if (!strcmp(sym, "cuGetProcAddress"))
		return wrap(&tlm__gpa[version >= 12000 ? G_cuGetProcAddress_v2 : G_cuGetProcAddress], p);
	int legacy = -1, ptsz = -1;
	for (unsigned i = 0; i < tlm__ndrv; i++) {
		const struct tlm__drv_fn *f = &tlm__drv[i];
		if (f->minver > version || strcmp(f->base, sym))
			continue;
		int *best = f->ptsz ? &ptsz : &legacy;
		if (*best < 0 || tlm__drv[*best].minver < f->minver)
			*best = (int)i;
	}
	if (legacy < 0 && ptsz < 0)
		return p; /* not a call we trace (or an older ABI than we know) */
	int pick = legacy;
	if (ptsz >= 0) {
		if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
			pick = ptsz;
		else if (!(flags & CU_GET_PROC_ADDRESS_LEGACY_STREAM) && p == tlm__libcuda_sym(tlm__drv[ptsz].name))
			pick = ptsz; /* default mode resolved to the per-thread flavour */
	}
	if (pick < 0)
		pick = ptsz;
	return wrap(&tlm__drv[pick], p);
}

/* ------------------------------------------------------ cuGetProcAddress */

typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);
static CUresult do_cuGetProcAddress(void *rp, const char *sym, void **pfn, int ver, cuuint64_t fl)
{
	if (!rp)
		return NOT_LOADED;
	CUresult r = ((gpa1_fn)rp)(sym, pfn, ver, fl);
	if (r == CUDA_SUCCESS && sym && pfn && *pfn)
		*pfn = translate_proc(sym, ver, fl, *pfn);
	return r;
}
TLM__SLOTS(tlm__gpa, G_cuGetProcAddress, cuGetProcAddress, CUresult,
	   (const char *sym, void **pfn, int ver, cuuint64_t fl), sym, pfn, ver, fl)

typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
static CUresult do_cuGetProcAddress_v2(void *rp, const char *sym, void **pfn, int ver, cuuint64_t fl,
				       CUdriverProcAddressQueryResult *st)
{
	if (!rp)
		return NOT_LOADED;
	CUresult r = ((gpa2_fn)rp)(sym, pfn, ver, fl, st);
	if (r == CUDA_SUCCESS && sym && pfn && *pfn)
		*pfn = translate_proc(sym, ver, fl, *pfn);
	return r;
}
#define do_cuGetProcAddress_v2_ptsz do_cuGetProcAddress_v2
TLM__SLOTS(tlm__gpa, G_cuGetProcAddress_v2, cuGetProcAddress_v2, CUresult,
	   (const char *sym, void **pfn, int ver, cuuint64_t fl, CUdriverProcAddressQueryResult *st), sym, pfn, ver,
	   fl, st)
TLM__SLOTS(tlm__gpa, G_cuGetProcAddress_v2_ptsz, cuGetProcAddress_v2_ptsz, CUresult,
	   (const char *sym, void **pfn, int ver, cuuint64_t fl, CUdriverProcAddressQueryResult *st), sym, pfn, ver,
	   fl, st)

/* ------------------------------------------------ cudaGetDriverEntryPoint */

/* The runtime resolves with its own version; 13000 picks the same ABI for
 * every call we trace. */
#define RUNTIME_VERSION 13000

typedef cudaError_t (*gdep_fn)(const char *, void **, unsigned long long, enum cudaDriverEntryPointQueryResult *);
static cudaError_t entry_point(unsigned idx, const char *sym, void **fp, unsigned long long fl,
			       enum cudaDriverEntryPointQueryResult *st)
{
	gdep_fn f = (gdep_fn)tlm__rt_real(&tlm__ep[idx]);
	if (!f)
		return cudaErrorInitializationError;
	cudaError_t r = f(sym, fp, fl, st);
	if (r == cudaSuccess && sym && fp && *fp)
		*fp = translate_proc(sym, RUNTIME_VERSION, fl, *fp);
	return r;
}

TLM_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fp, unsigned long long fl,
					       enum cudaDriverEntryPointQueryResult *st)
{
	return entry_point(E_cudaGetDriverEntryPoint, sym, fp, fl, st);
}

TLM_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *sym, void **fp, unsigned long long fl,
						    enum cudaDriverEntryPointQueryResult *st)
{
	return entry_point(E_cudaGetDriverEntryPoint_ptsz, sym, fp, fl, st);
}

typedef cudaError_t (*gdepv_fn)(const char *, void **, unsigned, unsigned long long,
				enum cudaDriverEntryPointQueryResult *);
static cudaError_t entry_point_v(unsigned idx, const char *sym, void **fp, unsigned ver, unsigned long long fl,
				 enum cudaDriverEntryPointQueryResult *st)
{
	gdepv_fn f = (gdepv_fn)tlm__rt_real(&tlm__ep[idx]);
	if (!f)
		return cudaErrorInitializationError;
	cudaError_t r = f(sym, fp, ver, fl, st);
	if (r == cudaSuccess && sym && fp && *fp)
		*fp = translate_proc(sym, (int)ver, fl, *fp);
	return r;
}

TLM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fp, unsigned ver,
							unsigned long long fl,
							enum cudaDriverEntryPointQueryResult *st)
{
	return entry_point_v(E_cudaGetDriverEntryPointByVersion, sym, fp, ver, fl, st);
}

TLM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *sym, void **fp, unsigned ver,
							     unsigned long long fl,
							     enum cudaDriverEntryPointQueryResult *st)
{
	return entry_point_v(E_cudaGetDriverEntryPointByVersion_ptsz, sym, fp, ver, fl, st);
}

#define F(n, v, p) [G_##n] = {.name = #n, .base = "", .minver = v, .ptsz = p, .wrapper = TLM__SLOT_PTRS(n)}
struct tlm__drv_fn tlm__gpa[3] = {
	/* resolved by name+version specially (translate_proc) */
	F(cuGetProcAddress, 11030, false),
	F(cuGetProcAddress_v2, 12000, false),
	F(cuGetProcAddress_v2_ptsz, 12000, true),
};

#define H(n) [E_##n] = {.name = #n, .hook = (void *)n}
struct tlm__rt_fn tlm__ep[4] = {
	H(cudaGetDriverEntryPoint), H(cudaGetDriverEntryPoint_ptsz), H(cudaGetDriverEntryPointByVersion),
	H(cudaGetDriverEntryPointByVersion_ptsz),
};

/* ---------------------------------------------------------------- dlsym */

/* Returns our wrapper for (handle, name) or NULL to let glibc answer.
 * `used`: only the assembly stub below calls it, which link-time
 * optimisation does not see. */
NO_SANITIZE TLM_HIDDEN __attribute__((used)) void *tlm__dlsym_filter(void *handle, const char *name)
{
	tlm__resolve_dlsym();
	if (!name || handle == RTLD_NEXT || name[0] != 'c' || name[1] != 'u')
		return NULL;
	if (name[2] == 'd' && name[3] == 'a') {
		struct tlm__rt_fn *f = rt_find(name);
		if (!f)
			return NULL;
		void *p = tlm__real_dlsym(handle, name);
		/* wrap only the runtime our hooks forward to */
		return p && p == tlm__rt_real(f) ? f->hook : NULL;
	}
	struct tlm__drv_fn *f = drv_find(name);
	if (!f)
		return NULL;
	void *p = tlm__real_dlsym(handle, name);
	return p ? wrap(f, p) : NULL;
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"  .cfi_startproc\n"
	"  pushq %rdi\n"
	"  .cfi_adjust_cfa_offset 8\n"
	"  pushq %rsi\n"
	"  .cfi_adjust_cfa_offset 8\n"
	"  subq $8, %rsp\n"
	"  .cfi_adjust_cfa_offset 8\n"
	"  call tlm__dlsym_filter\n"
	"  addq $8, %rsp\n"
	"  .cfi_adjust_cfa_offset -8\n"
	"  popq %rsi\n"
	"  .cfi_adjust_cfa_offset -8\n"
	"  popq %rdi\n"
	"  .cfi_adjust_cfa_offset -8\n"
	"  testq %rax, %rax\n"
	"  jz 1f\n"
	"  ret\n"
	"1:\n"
	"  jmp *tlm__real_dlsym(%rip)\n"
	"  .cfi_endproc\n"
	".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, %function\n"
	"dlsym:\n"
	"  stp x29, x30, [sp, #-32]!\n"
	"  stp x0, x1, [sp, #16]\n"
	"  bl tlm__dlsym_filter\n"
	"  mov x2, x0\n"
	"  ldp x0, x1, [sp, #16]\n"
	"  ldp x29, x30, [sp], #32\n"
	"  cbz x2, 1f\n"
	"  mov x0, x2\n"
	"  ret\n"
	"1:\n"
	"  adrp x16, tlm__real_dlsym\n"
	"  ldr x16, [x16, :lo12:tlm__real_dlsym]\n"
	"  br x16\n"
	".size dlsym, .-dlsym\n");
#else
#error "tlm's dlsym override needs a tail-jump stub for this architecture"
#endif
