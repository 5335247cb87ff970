/* SPDX-License-Identifier: MIT */
/* input.c - opening untrusted inputs without blocking (input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/input.h"

const char *tlm_input_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return NULL;
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a file";
}

static int fail(int e, char *why, size_t n, const char *fmt, const char *arg)
{
	if (why && n)
		snprintf(why, n, fmt, arg);
	errno = e;
	return -1;
}

int tlm_input_open(const char *path, unsigned flags, char *why, size_t n)
{
	/* refused before open(2) where stat can tell: opening a device may act */
	struct stat st;
	const char *kind = stat(path, &st) == 0 ? tlm_input_kind(st.st_mode) : NULL;
	if (kind && !(S_ISFIFO(st.st_mode) && (flags & TLM_INPUT_PIPE)))
		return fail(S_ISDIR(st.st_mode) ? EISDIR : EINVAL, why, n, "not a regular file (%s)", kind);
	/* O_NOCTTY: a terminal named by a hostile file must not become ours */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		if (e == ENXIO) /* a socket, or a device without its driver */
			return fail(e, why, n, "not a regular file (%s)", "a socket or a device");
		return fail(e, why, n, "cannot open: %s", strerror(e));
	}
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return fail(e, why, n, "cannot open: %s", strerror(e));
	}
	kind = tlm_input_kind(st.st_mode); /* what was opened, if it changed since */
	if (kind && !(S_ISFIFO(st.st_mode) && (flags & TLM_INPUT_PIPE))) {
		close(fd);
		return fail(S_ISDIR(st.st_mode) ? EISDIR : EINVAL, why, n, "not a regular file (%s)", kind);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		int e = errno;
		close(fd);
		return fail(e, why, n, "cannot open: %s", strerror(e));
	}
	return fd;
}

FILE *tlm_input_fopen(const char *path, unsigned flags, char *why, size_t n)
{
	int fd = tlm_input_open(path, flags, why, n);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		int e = errno;
		close(fd);
		fail(e, why, n, "cannot open: %s", strerror(e));
	}
	return f;
}

bool tlm_input_is_pipe(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}
