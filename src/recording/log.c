/* SPDX-License-Identifier: MIT */
/*
 * log.c - libtlm's lines, on the stderr the program started with (log.h).
 *
 * A host may point descriptor 2 elsewhere (its own log file, a socket,
 * /dev/null) or close it and open something else there: libtlm's lines
 * must not land in whatever fd 2 has become. So the starting stderr is
 * kept, as fdguard.c keeps the trace: a close-on-exec copy at a high
 * descriptor, with the file's identity (device, inode). Each line goes to
 * that copy while it is still that file; else to fd 2 when fd 2 is that file
 * again; else nowhere (the host closed our copy and moved its stderr). Fd 2
 * itself is never changed. Each line is one write(2), so lines of several
 * threads or processes never interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording/fdguard.h"
#include "recording/log.h"

enum { UNKEPT, KEPT, NONE };
static struct {
	int state;  /* UNKEPT: fd 2 as it is (before the constructor); NONE: no stderr at start */
	int fd;     /* the copy, or -1 */
	dev_t dev;
	ino_t ino;
} K = {UNKEPT, -1, 0, 0};

static bool is_start_stderr(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == K.dev && st.st_ino == K.ino;
}

void tlm__log_keep_stderr(void)
{
	if (K.state != UNKEPT)
		return; /* a fork child keeps its parent's copy */
	struct stat st;
	int saved = errno;
	if (fstat(STDERR_FILENO, &st) != 0) {
		K.state = NONE;
		errno = saved;
		return;
	}
	K.dev = st.st_dev;
	K.ino = st.st_ino;
	K.fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, tlm__fd_floor());
	K.state = KEPT;
	errno = saved;
}

int tlm__log_fd(void)
{
	switch (K.state) {
	case UNKEPT:
		return STDERR_FILENO;
	case NONE:
		return -1;
	}
	if (is_start_stderr(K.fd))
		return K.fd;
	return is_start_stderr(STDERR_FILENO) ? STDERR_FILENO : -1;
}

void tlm__log(const char *fmt, ...)
{
	char line[1024];
	int saved = errno;
	int n = snprintf(line, sizeof line, "tlm[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + ((size_t)m < sizeof line - (size_t)n - 1 ? (size_t)m : sizeof line - (size_t)n - 2);
	line[len++] = '\n';
	int fd = tlm__log_fd();
	if (fd >= 0) {
		ssize_t w = write(fd, line, len);
		(void)w;
	}
	errno = saved;
}
