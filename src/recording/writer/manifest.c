/* SPDX-License-Identifier: MIT */
/*
 * manifest.c - `tlm run` lists every trace its run produced (children,
 * exec'd images, ranks): it names a file in TLM_RUN_MANIFEST, and each trace
 * this library starts appends its path there as one line (O_APPEND: lines of
 * concurrent processes do not mix).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recording/writer/writer_int.h"

void tlm__manifest_add(const char *path)
{
	const char *m = getenv("TLM_RUN_MANIFEST");
	if (!m || !*m)
		return;
	char line[4400];
	size_t n = strlen(path);
	if (n + 2 > sizeof line)
		return;
	memcpy(line, path, n);
	line[n++] = '\n';
	int fd = open(m, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return; /* not our run's list any more: nothing to add */
	ssize_t w = write(fd, line, n);
	(void)w;
	close(fd);
}
