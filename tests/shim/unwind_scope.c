/* SPDX-License-Identifier: MIT */
/*
 * unwind_scope.c - run under LD_PRELOAD=libtlm.so: libtlm uses libunwind,
 * but libunwind must stay out of the program's global symbol scope, where
 * its _Unwind_* would replace libgcc_s's for every C++ exception (and
 * unw_* could clash with the program's own). Exit 0 when it is loaded yet
 * invisible; 1 with one line saying what is wrong. With an argument, the
 * libunwind.so.8 loaded must also be that file (the copy beside libtlm.so).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		fprintf(stderr, "failed: libunwind.so.8 is not loaded: libtlm did not open it\n");
		return 1;
	}
	struct link_map *lm = NULL;
	if (argc > 1 && (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || strcmp(lm->l_name, argv[1]) != 0)) {
		fprintf(stderr, "failed: libunwind.so.8 loaded from %s, not %s\n", lm ? lm->l_name : "?", argv[1]);
		return 1;
	}
	if (dlsym(RTLD_DEFAULT, "unw_backtrace")) {
		fprintf(stderr, "failed: libunwind's unw_backtrace is in the global scope\n");
		return 1;
	}
	void *p = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
	Dl_info i;
	if (p && dladdr(p, &i) && i.dli_fname && strstr(i.dli_fname, "libunwind.so")) {
		fprintf(stderr, "failed: _Unwind_RaiseException resolves to %s\n", i.dli_fname);
		return 1;
	}
	printf("libunwind loaded from %s, out of the global scope\n", lm ? lm->l_name : "its soname");
	return 0;
}
