/* SPDX-License-Identifier: MIT */
/*
 * realsym.c - the real functions of other libraries (realsym.h).
 *
 * glibc's dlsym is taken with dlvsym, by version, because the plain name
 * binds to our own (procaddr.c).
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "recording/realsym.h"

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

typedef int (*dlclose_fn)(void *);

int tlm__real_dlclose(void *handle)
{
	static dlclose_fn f;
	if (!f) {
		tlm__resolve_dlsym();
		f = (dlclose_fn)tlm__real_dlsym(RTLD_NEXT, "dlclose");
	}
	return f(handle);
}

struct find_lib {
	const char *part;      /* a substring of the object's file name */
	const char *name;      /* the symbol */
	void *sym;
};

static int find_in(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	struct find_lib *f = ctx;
	const char *p = info->dlpi_name, *base = p ? strrchr(p, '/') : NULL;
	if (!base || !strstr(base + 1, f->part))
		return 0;
	void *h = dlopen(p, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	f->sym = tlm__real_dlsym(h, f->name);
	/* not our dlclose hook: its drain, inside dl_iterate_phdr, would wait
	 * for a writer thread that waits for the loader lock we hold */
	tlm__real_dlclose(h);
	return f->sym != NULL;
}

void *tlm__loaded_sym(const char *part, const char *name)
{
	tlm__resolve_dlsym();
	if (!tlm__real_dlsym)
		return NULL;
	struct find_lib f = {part, name, NULL};
	dl_iterate_phdr(find_in, &f);
	return f.sym;
}
