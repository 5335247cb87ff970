/* SPDX-License-Identifier: MIT */
/*
 * fdguard.h - the trace descriptor is tlm's alone.
 *
 * Contract: tlm__fd_adopt() moves the trace's fd high (F_DUPFD_CLOEXEC at
 * 1000, or 3/4 of a low RLIMIT_NOFILE) and remembers its device and inode;
 * tlm__fd_write() checks before writing that the fd is still that file, in
 * the process that created it (else one line, -EBADF, and the trace stops),
 * and never raises SIGXFSZ.
 */
#ifndef TLM_REC_FDGUARD_H
#define TLM_REC_FDGUARD_H

#include "recording/defs.h"

int tlm__fd_adopt(int fd, const char *path) TLM_HIDDEN; /* returns the fd to use */
int tlm__fd_write(int fd, const void *buf, size_t len) TLM_HIDDEN; /* 0 or -errno */
bool tlm__fd_reported(void) TLM_HIDDEN; /* the failure was already explained */

#endif
