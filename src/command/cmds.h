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

#include <stddef.h>

/* A file that ships with tlm, next to the running binary (beside.c): where
 * TLM__BESIDE_LIB is libtlm.so's directory, TLM__BESIDE_SIM the simulated
 * device's; the build tree's first, then the install's. 0 and its absolute
 * path in out (len bytes), or -1. */
enum { TLM__BESIDE_LIB = 0, TLM__BESIDE_SIM = 1 };
int tlm__find_beside(int where, const char *name, char *out, size_t len);

#endif
