/* SPDX-License-Identifier: MIT */
/*
 * procaddr.c - every way a program obtains a driver or runtime entry point:
 * dlsym (overridden), cuGetProcAddress(_v2) and cudaGetDriverEntryPoint*
 * (they call tlm__translate_proc on what the real one returned).
 *
 * dlsym is an assembly stub on x86-64: it asks tlm__dlsym_filter for a
 * wrapper and otherwise *jumps* to glibc's dlsym, so glibc still sees the
 * caller's return address and RTLD_NEXT keeps meaning "after the caller".
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "recording/hooks.h"

void *(*tlm__real_dlsym)(void *, const char *);

/* Sanitizer runtimes call dlsym while they start, before their shadow memory
 * exists: the dlsym path must not be instrumented. */
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

NO_SANITIZE void tlm__resolve_dlsym(void)
{
	if (TLM_LIKELY(tlm__real_dlsym != NULL))
		return;
	void *f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!f)
		f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	__atomic_store_n(&tlm__real_dlsym, (void *(*)(void *, const char *))f, __ATOMIC_RELEASE);
}

static int count_adds(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	*(unsigned long long *)out = info->dlpi_adds;
	return 1; /* the counter is the same in every entry: one is enough */
}

/* Loads so far (dlpi_adds): a failed look-up is only worth repeating after a
 * new object was loaded. Without libcuda, a dlopen(RTLD_NOLOAD) per event
 * cost about 17 us (name matching, an error string). */
static unsigned long long loads_now(void)
{
	unsigned long long adds = 0;
	dl_iterate_phdr(count_adds, &adds);
	return adds;
}

void *tlm__libcuda_sym(const char *name)
{
	static _Atomic(void *) handle;
	static _Atomic unsigned long long missed_at; /* loads when it was last not there, 0 = never */
	tlm__resolve_dlsym();
	void *h = atomic_load(&handle);
	if (!h) {
		unsigned long long now = loads_now();
		if (now && atomic_load(&missed_at) == now)
			return NULL;
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h) {
			atomic_store(&missed_at, now);
			return NULL;
		}
		atomic_store(&handle, h);
	}
	return tlm__real_dlsym(h, name);
}

void *tlm__drv_real(unsigned idx, unsigned slot)
{
	struct tlm__drv_fn *f = &tlm__drv[idx];
	void *p = atomic_load_explicit(&f->real[slot], memory_order_acquire);
	if (TLM_LIKELY(p != NULL) || slot != 0)
		return p;
	tlm__resolve_dlsym();
	p = tlm__real_dlsym(RTLD_NEXT, f->name);
	if (p)
		atomic_store_explicit(&f->real[0], p, memory_order_release);
	return p;
}

void *tlm__rt_real(unsigned idx)
{
	struct tlm__rt_fn *f = &tlm__rt[idx];
	void *p = atomic_load_explicit(&f->real, memory_order_acquire);
	if (TLM_LIKELY(p != NULL))
		return p;
	tlm__resolve_dlsym();
	p = tlm__real_dlsym(RTLD_NEXT, f->name);
	if (!p) /* a libcudart loaded RTLD_LOCAL (by a library Python dlopened) */
		p = tlm__loaded_sym("libcudart.so", f->name);
	if (p)
		atomic_store_explicit(&f->real, p, memory_order_release);
	return p;
}

void *tlm__drv_wrap(unsigned idx, void *p)
{
	struct tlm__drv_fn *f = &tlm__drv[idx];
	if (!p)
		return p;
	for (unsigned s = 0; s < TLM__NSLOT; s++)
		if (f->wrapper[s] == p)
			return p; /* already ours */
	for (unsigned s = 0; s < TLM__NSLOT; s++)
		if (tlm__drv_real(idx, s) == p)
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

int tlm__drv_find(const char *name)
{
	for (unsigned i = 0; i < tlm__ndrv; i++)
		if (!strcmp(tlm__drv[i].name, name))
			return (int)i;
	return -1;
}

int tlm__rt_find(const char *name)
{
	for (unsigned i = 0; i < tlm__nrt; i++)
		if (!strcmp(tlm__rt[i].name, name))
			return (int)i;
	return -1;
}

int tlm__drv_idx_gpa(int version) TLM_HIDDEN;

void *tlm__translate_proc(const char *sym, int version, uint64_t flags, void *p)
{
	if (!strcmp(sym, "cuGetProcAddress"))
		return tlm__drv_wrap((unsigned)tlm__drv_idx_gpa(version), p);
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
	return tlm__drv_wrap((unsigned)pick, p);
}

/* Returns our wrapper for (handle, name) or NULL to let glibc answer. */
NO_SANITIZE TLM_HIDDEN void *tlm__dlsym_filter(void *handle, const char *name)
{
	tlm__resolve_dlsym();
	if (!name || handle == RTLD_NEXT || name[0] != 'c' || name[1] != 'u')
		return NULL;
	if (name[2] == 'd' && name[3] == 'a') {
		int i = tlm__rt_find(name);
		if (i < 0)
			return NULL;
		void *p = tlm__real_dlsym(handle, name);
		/* wrap only the runtime our hooks forward to */
		return p && p == tlm__rt_real((unsigned)i) ? tlm__rt[i].hook : NULL;
	}
	int i = tlm__drv_find(name);
	if (i < 0)
		return NULL;
	void *p = tlm__real_dlsym(handle, name);
	return p ? tlm__drv_wrap((unsigned)i, p) : NULL;
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
