/* SPDX-License-Identifier: MIT */
/*
 * output.c - trace path expansion and safe creation.
 *
 * A relative TLM_OUTPUT is taken against the directory the process started
 * in (tlm__output_absolute, at load), so a later chdir moves neither the trace
 * nor the summary's idea of where it is. An existing character device
 * (/dev/null) is written into, never replaced by PATH.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording/log.h"
#include "recording/writer/output.h"

static int append(char *out, size_t outlen, size_t *n, const char *s)
{
	size_t l = strlen(s);
	if (*n + l >= outlen)
		return -1;
	memcpy(out + *n, s, l);
	*n += l;
	out[*n] = 0;
	return 0;
}

int tlm__output_expand(const char *pattern, char *out, size_t outlen)
{
	size_t n = 0;
	out[0] = 0;
	for (const char *p = pattern; *p; p++) {
		char tmp[300];
		if (*p != '%') {
			tmp[0] = *p;
			tmp[1] = 0;
		} else {
			switch (*++p) {
			case 'p':
				snprintf(tmp, sizeof tmp, "%d", (int)getpid());
				break;
			case 'h':
				if (gethostname(tmp, 256) != 0)
					strcpy(tmp, "unknown");
				tmp[256] = 0;
				break;
			case 'r': {
				const char *r = getenv("RANK");
				if (!r || !*r)
					r = getenv("LOCAL_RANK");
				snprintf(tmp, sizeof tmp, "%s", r && *r ? r : "0");
				break;
			}
			case '%':
				strcpy(tmp, "%");
				break;
			default:
				tlm__log("TLM_OUTPUT: bad value '%s' (unknown escape %%%c; use %%p, %%h, %%r or %%%%)", pattern,
					 *p ? *p : '?');
				return -1;
			}
		}
		if (append(out, outlen, &n, tmp) != 0) {
			tlm__log("TLM_OUTPUT: bad value '%s' (path too long)", pattern);
			return -1;
		}
	}
	return 0;
}

static int create_excl(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int tlm__output_create(const char *path, char *final, size_t finallen)
{
	struct stat cs;
	if (stat(path, &cs) == 0 && S_ISCHR(cs.st_mode) && lstat(path, &cs) == 0 && S_ISCHR(cs.st_mode)) {
		/* TLM_OUTPUT=/dev/null: record into the device, create nothing */
		int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			snprintf(final, finallen, "%s", path);
			return fd;
		}
	}
	int fd = create_excl(path);
	if (fd >= 0) {
		snprintf(final, finallen, "%s", path);
		return fd;
	}
	if (errno == EEXIST) {
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			tlm__log("refusing to write the trace through the symbolic link %s; recording is off", path);
			return -1;
		}
		for (int i = 1; i < 1000; i++) {
			char alt[4200];
			snprintf(alt, sizeof alt, "%s.%d", path, i);
			fd = create_excl(alt);
			if (fd >= 0) {
				tlm__log("%s exists; writing the trace to %s", path, alt);
				snprintf(final, finallen, "%s", alt);
				return fd;
			}
			if (errno != EEXIST)
				break;
		}
	}
	tlm__log("cannot create the trace %s: %s; recording is off", path, strerror(errno));
	return -1;
}
