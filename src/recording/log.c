/* SPDX-License-Identifier: MIT */
/* log.c - one-line messages on stderr, written with a single write(2) so
 * lines from several threads or processes never interleave. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "recording/log.h"

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
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
	errno = saved;
}
