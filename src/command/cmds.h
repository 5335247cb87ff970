/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the subcommands of the `tlm` tool and its exit codes.
 *
 * Contract: each subcommand lives in its own cmd_<name>.c and is called with
 * argv[0] = its name; it returns the process exit code. To add one: declare
 * it here, add a row to the table in main.c, add the file to meson.build.
 */
#ifndef TLM_TOOLS_CMDS_H
#define TLM_TOOLS_CMDS_H

#define TLM_EXIT_OK 0       /* did its job (info: the trace is readable) */
#define TLM_EXIT_GATE 1     /* diff: --fail-on-growth was exceeded */
#define TLM_EXIT_DAMAGED 2  /* unreadable input or integrity errors */
#define TLM_EXIT_USAGE 64   /* bad usage (EX_USAGE) */

int tlm_cmd_info(int argc, char **argv);
int tlm_cmd_report(int argc, char **argv);
int tlm_cmd_run(int argc, char **argv);
int tlm_cmd_diff(int argc, char **argv);
int tlm_cmd_whatif(int argc, char **argv);
int tlm_cmd_top(int argc, char **argv);

#include <stdint.h>

/* A byte count: "1000", "64K", "2M", "1G", "1T", "1KiB", "512B" (1024-based);
 * 0 on success, -1 for anything else or an overflow (cmd_args.c). */
int tlm__parse_bytes(const char *s, uint64_t *out);
/* --threads' value: 1..256; 0 on success, -1 otherwise (NULL: missing). */
int tlm__parse_threads(const char *s, unsigned *out);
/* "tlm CMD: " and fmt with arg (one %s; a file name, maybe hostile: shown
 * through src/common/text.h), then the usage text, on stderr; returns
 * TLM_EXIT_USAGE. */
int tlm__usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg);

#include <stdbool.h>
#include <stddef.h>

/* The option table of a subcommand (cmd_args.c): one row an option; the
 * parser recognizes them, "--" and the values, and the subcommand acts on
 * each id it returns. */
#define TLM__OPT_VALUE 1u /* takes a value: the next argument, whatever it starts with */
#define TLM__OPT_EQ 2u    /* the value may also follow '=' in a long form (--name=VALUE) */
struct tlm__opt {
	int id;                /* >= 0, returned by tlm__args_next */
	const char *name;      /* "--format" */
	const char *alias;     /* a short form ("-f") or another name ("--old"); NULL: none */
	unsigned flags;
	const char *missing;   /* the usage error without its value; %s: the option as typed */
};
struct tlm__args {
	const char *cmd, *usage;     /* for the usage errors it prints */
	const struct tlm__opt *opt;
	size_t nopt;
	bool dashdash;               /* "--" ends the options (false: it is an unknown option) */
	int argc, i;
	char **argv;
	bool ended;                  /* "--" was seen */
	const char *name;            /* the option as typed, without "=VALUE" (its name or alias) */
	char *value;                 /* its value; a positional argument */
};
enum { TLM__ARG_END = -1, TLM__ARG_POSITIONAL = -2, TLM__ARG_ERROR = -3 };
void tlm__args_init(struct tlm__args *a, const char *cmd, const char *usage, const struct tlm__opt *opt, size_t nopt,
		    bool dashdash, int argc, char **argv);
/* The next of argv[1..]: an option's id (a->value set when it takes one),
 * TLM__ARG_POSITIONAL (a->value: the argument; "-" is one, and so is all
 * after "--"), TLM__ARG_END, or TLM__ARG_ERROR after printing the usage
 * error (a value missing: the row's message; "unknown option '%s'"): the
 * subcommand returns TLM_EXIT_USAGE. */
int tlm__args_next(struct tlm__args *a);

/* A file that ships with tlm, next to the running binary (beside.c): where
 * TLM__BESIDE_LIB is libtlm.so's directory, TLM__BESIDE_SIM the simulated
 * device's; the build tree's first, then the install's. 0 and its absolute
 * path in out (len bytes), or -1. */
enum { TLM__BESIDE_LIB = 0, TLM__BESIDE_SIM = 1 };
int tlm__find_beside(int where, const char *name, char *out, size_t len);

#endif
