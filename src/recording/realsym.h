/* SPDX-License-Identifier: MIT */
/*
 * realsym.h - the real functions of other libraries, found without passing
 * through our own hooks (libtlm.so defines dlsym, dlclose and the CUDA entry
 * points itself).
 *
 * Contract: tlm__resolve_dlsym() finds glibc's dlsym once (safe before
 * sanitizer runtimes are up); tlm__real_dlsym is then glibc's. The others
 * never allocate on their fast path; tlm__loaded_sym walks the loaded
 * objects (dl_iterate_phdr, under the loader lock): not for the hot path.
 */
#ifndef TLM_REC_REALSYM_H
#define TLM_REC_REALSYM_H

#include "recording/defs.h"

extern void *(*tlm__real_dlsym)(void *, const char *) TLM_HIDDEN;
void tlm__resolve_dlsym(void) TLM_HIDDEN;
/* name in the loaded libcuda.so.1; NULL if none (a failed look-up is
 * repeated only after a new object was loaded) */
void *tlm__libcuda_sym(const char *name) TLM_HIDDEN;
/* name as defined by a loaded object whose file name contains part (one
 * loaded RTLD_LOCAL, out of RTLD_NEXT's reach); NULL if none */
void *tlm__loaded_sym(const char *part, const char *name) TLM_HIDDEN;
/* glibc's dlclose, without our hook's pre-unload drain */
int tlm__real_dlclose(void *handle) TLM_HIDDEN;

#endif
