/* SPDX-License-Identifier: MIT */
/*
 * fdguard.c - the trace descriptor is tlm's alone (fdguard.h has the contract).
 *
 * Hosts close descriptors they did not open, dup2 over them, or reuse the
 * number for a socket. The trace fd is moved to a high number (where a
 * program's own opens, which take the lowest free number, do not land) with
 * close-on-exec, and before each chunk fstat must still show the file tlm
 * created, from the process that created it; otherwise one line says so and
 * the trace stops there. Writes run with SIGXFSZ blocked, so RLIMIT_FSIZE
 * makes them fail (EFBIG) instead of killing the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recording/fdguard.h"
#include "recording/log.h"

static struct {
	int fd;
	dev_t dev;
	ino_t ino;
	pid_t pid;
	char path[4300];
} G = {.fd = -1};
static atomic_int reported;

int tlm__fd_adopt(int fd, const char *path)
{
	int floor = tlm__fd_floor();
	if (floor > fd) {
		int h = fcntl(fd, F_DUPFD_CLOEXEC, floor);
		if (h >= 0) {
			close(fd);
			fd = h;
		}
	}
	struct stat st;
	if (fstat(fd, &st) == 0) {
		G.dev = st.st_dev;
		G.ino = st.st_ino;
	}
	G.fd = fd;
	G.pid = getpid();
	size_t n = strlen(path);
	if (n >= sizeof G.path)
		n = sizeof G.path - 1;
	memcpy(G.path, path, n);
	G.path[n] = 0;
	atomic_store(&reported, 0);
	return fd;
}

bool tlm__fd_reported(void)
{
	return atomic_load(&reported);
}

static bool still_ours(int fd)
{
	struct stat st;
	if (fd == G.fd && getpid() == G.pid && fstat(fd, &st) == 0 && st.st_dev == G.dev && st.st_ino == G.ino)
		return true;
	if (getpid() != G.pid)
		return false; /* a child we could not tell: the file is the parent's */
	if (!atomic_exchange(&reported, 1))
		tlm__log("the trace descriptor %d no longer refers to %s (the program closed or replaced it); "
			 "recording stops here and the trace ends truncated",
			 fd, G.path);
	return false;
}

int tlm__fd_write(int fd, const void *buf, size_t len)
{
	if (!still_ours(fd)) {
		atomic_store(&reported, 1);
		return -EBADF;
	}
	sigset_t xfsz, old;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &old);
	const char *p = buf;
	int rc = 0;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (rc == -EFBIG && !sigismember(&old, SIGXFSZ)) {
		/* the SIGXFSZ this write raised is pending on us: take it back */
		sigset_t pend;
		struct timespec zero = {0, 0};
		if (sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ))
			(void)sigtimedwait(&xfsz, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
