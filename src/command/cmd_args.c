/* SPDX-License-Identifier: MIT */
/*
 * cmd_args.c - argument parsing the subcommands share (cmds.h): byte
 * counts, thread counts, the usage error, and the option table's parser.
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

void tlm__args_init(struct tlm__args *a, const char *cmd, const char *usage, const struct tlm__opt *opt, size_t nopt,
		    bool dashdash, int argc, char **argv)
{
	*a = (struct tlm__args){.cmd = cmd, .usage = usage, .opt = opt, .nopt = nopt, .dashdash = dashdash,
				.argc = argc, .i = 0, .argv = argv};
}

/* s is spelling, or spelling=VALUE where that is allowed: the length of
 * spelling when it matches, else 0. */
static size_t matches(const char *s, const char *spelling, bool eq)
{
	size_t n = strlen(spelling);
	if (strncmp(s, spelling, n) || (s[n] && (s[n] != '=' || !eq)))
		return 0;
	return n;
}

int tlm__args_next(struct tlm__args *a)
{
	if (++a->i >= a->argc)
		return TLM__ARG_END;
	char *s = a->argv[a->i];
	a->name = s; /* until it is found to be an option */
	a->value = s;
	if (a->ended || s[0] != '-' || !s[1])
		return TLM__ARG_POSITIONAL;
	if (a->dashdash && !strcmp(s, "--")) {
		a->ended = true;
		return tlm__args_next(a);
	}
	for (size_t k = 0; k < a->nopt; k++) {
		const struct tlm__opt *o = &a->opt[k];
		const char *spell[2] = {o->name, o->alias};
		for (int j = 0; j < 2; j++) {
			/* only a long form takes "=VALUE": "-f=json" stays unknown */
			bool eq = (o->flags & TLM__OPT_EQ) && spell[j] && !strncmp(spell[j], "--", 2);
			size_t n = spell[j] ? matches(s, spell[j], eq) : 0;
			if (!n)
				continue;
			a->name = spell[j];
			if (!(o->flags & TLM__OPT_VALUE))
				return o->id;
			if (s[n] == '=') {
				a->value = s + n + 1;
				return o->id;
			}
			if (a->i + 1 >= a->argc) {
				tlm__usage_error(a->cmd, a->usage, o->missing ? o->missing : "%s needs a value", spell[j]);
				return TLM__ARG_ERROR;
			}
			a->value = a->argv[++a->i];
			return o->id;
		}
	}
	tlm__usage_error(a->cmd, a->usage, "unknown option '%s'", s);
	return TLM__ARG_ERROR;
}
