/* SPDX-License-Identifier: MIT */
/*
 * beside.c - the files that ship with tlm (libtlm.so, the simulated device's
 * libraries), found relative to the running tlm binary: in the build tree,
 * then where an install puts them. meson computes both relative paths
 * (tlm_paths.h), so a `meson install` under any prefix and libdir, and a pip
 * install (the package's _prefix/), find them wherever they were moved as a
 * whole.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "tlm_paths.h"

int tlm__find_beside(int where, const char *name, char *out, size_t len)
{
	static const char *const rel[][2] = {
		[TLM__BESIDE_LIB] = {TLM_REL_BUILD_LIB, TLM_REL_INSTALL_LIB},
		[TLM__BESIDE_SIM] = {TLM_REL_BUILD_SIM, TLM_REL_INSTALL_SIM},
	};
	char self[PATH_MAX], cand[PATH_MAX + 512], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0 || (where != TLM__BESIDE_LIB && where != TLM__BESIDE_SIM))
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (size_t i = 0; i < 2; i++) {
		struct stat st;
		snprintf(cand, sizeof cand, "%s/%s/%s", self, rel[where][i], name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && realpath(cand, real) &&
		    strlen(real) < len) {
			memcpy(out, real, strlen(real) + 1);
			return 0;
		}
	}
	return -1;
}
