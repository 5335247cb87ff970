/* SPDX-License-Identifier: MIT */
/* main.c - `tlm` entry point: global options and subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "common/text.h"
#include "cmds.h"
#include "tlm_config.h"

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args;    /* usage after the name */
	const char *summary;
};

static int cmd_help(int argc, char **argv);

/* One row per subcommand. man/tlm.1 documents each; `tlm CMD --help` prints
 * its options (tests/export/check_man.sh keeps the two in step). */
static const struct cmd cmds[] = {
	{"info", tlm_cmd_info, "TRACE", "summarise a trace: header, counts, state, damage"},
	{"report", tlm_cmd_report, "[OPTIONS] TRACE", "memory report (text, json, html, chrome, collapsed)"},
	{"top", tlm_cmd_top, "[OPTIONS] TRACE|DIR", "watch GPU memory while the program runs (its trace as it is written)"},
	{"run", tlm_cmd_run, "[OPTIONS] -- CMD [ARGS]", "run CMD under libtlm.so, then print its report"},
	{"diff", tlm_cmd_diff, "[OPTIONS] BASE NEW", "compare two runs site by site; a CI gate on leak growth"},
	{"whatif", tlm_cmd_whatif, "[OPTIONS] TRACE", "replay PyTorch's allocator under other settings: what avoids the OOM"},
	{"help", cmd_help, "[COMMAND]", "show this help, or a command's"},
};

#define NCMDS (sizeof cmds / sizeof cmds[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: tlm [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < NCMDS; i++) {
		char lhs[64];
		snprintf(lhs, sizeof lhs, "%s %s", cmds[i].name, cmds[i].args);
		fprintf(f, "  %-29s %s\n", lhs, cmds[i].summary);
	}
	fprintf(f, "\noptions:\n  -h, --help       show this help\n  -V, --version    print the version\n"
		   "\n`tlm COMMAND --help` shows a command's options; man tlm, man libtlm.\n");
}

static int cmd_help(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
		for (size_t i = 0; i < NCMDS; i++)
			if (!strcmp(argv[1], cmds[i].name) && cmds[i].run != cmd_help) {
				char *sub[] = {argv[1], "--help", NULL};
				return cmds[i].run(2, sub);
			}
		tlm_text_line(stderr, "tlm help: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return TLM_EXIT_USAGE;
	}
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
	tlm_text_line(stderr, "tlm: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return TLM_EXIT_USAGE;
}
