/* SPDX-License-Identifier: MIT */
/*
 * fdguard.h - the trace descriptor is tlm's alone.
 *
 * Contract: tlm__fd_adopt() moves the trace's fd high (F_DUPFD_CLOEXEC at
 * tlm__fd_floor()) and remembers its device and inode;
 * tlm__fd_write() checks before writing that the fd is still that file, in
 * the process that created it (else one line, -EBADF, and the trace stops),
 * and never raises SIGXFSZ.
 */
#ifndef TLM_REC_FDGUARD_H
#define TLM_REC_FDGUARD_H

#include <sys/resource.h>

#include "recording/defs.h"

/* Where tlm keeps its descriptors: above what programs open (the lowest free
 * number), below the usual 1024 limit; 3/4 of a low RLIMIT_NOFILE. */
static inline int tlm__fd_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1100)
		return (int)(rl.rlim_cur * 3 / 4);
	return 1000;
}

int tlm__fd_adopt(int fd, const char *path) TLM_HIDDEN; /* returns the fd to use */
int tlm__fd_write(int fd, const void *buf, size_t len) TLM_HIDDEN; /* 0 or -errno */
bool tlm__fd_reported(void) TLM_HIDDEN; /* the failure was already explained */

#endif
