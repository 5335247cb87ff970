/* SPDX-License-Identifier: MIT */
/*
 * cmd_args.c - argument parsing the subcommands share (cmds.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "common/text.h"

/* "1000", "64K", "2M", "1G", "1KiB", ...; 0 on success. */
int tlm__parse_bytes(const char *s, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	else if (*end == 'T' || *end == 't')
		shift = 40;
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	} else if (!strcmp(end, "B")) {
		end++;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int tlm__parse_threads(const char *s, unsigned *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	unsigned long t = strtoul(s, &end, 10);
	if (!t || *end || t > 256)
		return -1;
	*out = (unsigned)t;
	return 0;
}

int tlm__usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "tlm %s: ", cmd);
	char msg[512]; /* the argument may be a hostile file name: shown safe */
	snprintf(msg, sizeof msg, fmt, arg);
	tlm_text_put(stderr, msg);
	fputc('\n', stderr);
	fputs(usage, stderr);
	return TLM_EXIT_USAGE;
}
