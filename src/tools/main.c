/* SPDX-License-Identifier: MIT */
/* main.c - `tlm` entry point: global options and subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "tlm_config.h"

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args;    /* usage after the name */
	const char *summary;
};

static int cmd_help(int argc, char **argv);

/* One row per subcommand; `report`, `run`, `diff` slot in here. */
static const struct cmd cmds[] = {
	{"info", tlm_cmd_info, "TRACE", "summarise a trace: header, counts, state, damage"},
	{"report", tlm_cmd_report, "TRACE", "memory report: peaks, live at end, leaks, OOMs, churn"},
	{"run", tlm_cmd_run, "-- CMD [ARGS]", "run CMD under libtlm.so, then print its end-of-run report"},
	{"help", cmd_help, "", "show this help"},
};

#define NCMDS (sizeof cmds / sizeof cmds[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: tlm [--version] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < NCMDS; i++) {
		char lhs[64];
		snprintf(lhs, sizeof lhs, "%s %s", cmds[i].name, cmds[i].args);
		fprintf(f, "  %-22s %s\n", lhs, cmds[i].summary);
	}
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return TLM_EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "tlm: missing command\n");
		usage(stderr);
		return TLM_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("tlm %s\n", TLM_VERSION);
		return TLM_EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "tlm: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return TLM_EXIT_USAGE;
}
