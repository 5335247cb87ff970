/* SPDX-License-Identifier: MIT */
/*
 * cmd_whatif.c - `tlm whatif [--device N] [--setting SPEC ...] [--recorded SPEC]
 * [--memory BYTES] [--format text|json] [-o FILE] TRACE`: replays the trace's
 * PyTorch allocator requests under other allocator settings
 * (src/whatif/whatif.h). docs/whatif.md is the user guide.
 *
 * Exit codes: 0 written; 2 the trace cannot be read, has no allocator blocks
 * or was made with a backend the model does not cover; 64 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "cmds.h"
#include "whatif/whatif.h"

#define USAGE                                                                                        \
	"usage: tlm whatif [--device N] [--setting SPEC ...] [--recorded SPEC] [--memory BYTES]\n"   \
	"                  [--format text|json] [-o FILE] TRACE\n"

static const char help[] =
	USAGE
	"\n"
	"Replays the block requests of PyTorch's CUDA caching allocator recorded in\n"
	"TRACE through a model of that allocator, under the recorded settings and\n"
	"under alternatives, and says which setting would have avoided the OOM.\n"
	"\n"
	"options:\n"
	"  --device N                 only device N (default: every device with blocks)\n"
	"  --setting SPEC             an alternative, as in PYTORCH_CUDA_ALLOC_CONF, applied\n"
	"                             over the recorded settings (repeatable; default: a grid\n"
	"                             of expandable_segments, max_split_size_mb,\n"
	"                             garbage_collection_threshold, roundup_power2_divisions)\n"
	"  --recorded SPEC            the settings of the recorded run (default: the trace's\n"
	"                             torch.alloc_conf, else PyTorch's defaults)\n"
	"  --memory BYTES             the device's memory (suffixes K, M, G, T; default: from a\n"
	"                             failed allocation in the trace, else the recorded\n"
	"                             device size, else unlimited)\n"
	"  -f, --format text|json     output format (default text)\n"
	"  -o, --output FILE          write to FILE instead of stdout\n"
	"  -h, --help                 show this help\n"
	"\n"
	"exit: 0 ok, 2 the trace is unreadable or has nothing to replay, 64 bad usage\n";

static int usage_error(const char *fmt, const char *arg)
{
	return tlm__usage_error("whatif", USAGE, fmt, arg);
}

enum { O_DEVICE, O_SETTING, O_RECORDED, O_MEMORY, O_FORMAT, O_OUTPUT, O_HELP };

/* every value also as --name=VALUE; "--" is not one of them (an unknown option) */
static const struct tlm__opt options[] = {
	{O_HELP, "--help", "-h", 0, NULL},
	{O_DEVICE, "--device", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, NULL},
	{O_SETTING, "--setting", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, NULL},
	{O_RECORDED, "--recorded", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, NULL},
	{O_MEMORY, "--memory", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, NULL},
	{O_FORMAT, "--format", "-f", TLM__OPT_VALUE | TLM__OPT_EQ, NULL},
	{O_OUTPUT, "--output", "-o", TLM__OPT_VALUE | TLM__OPT_EQ, NULL},
};

int tlm_cmd_whatif(int argc, char **argv)
{
	struct tlm_wi_options o = {.device = -1};
	const char **settings = calloc((size_t)argc + 1, sizeof *settings);
	const char *trace = NULL, *out = NULL, *format = "text";
	int rc = TLM_EXIT_USAGE;
	if (!settings) {
		fprintf(stderr, "tlm whatif: out of memory\n");
		return TLM_EXIT_DAMAGED;
	}
	struct tlm__args args;
	tlm__args_init(&args, "whatif", USAGE, options, sizeof options / sizeof *options, false, argc, argv);
	for (int id; (id = tlm__args_next(&args)) != TLM__ARG_END;) {
		const char *v = args.value;
		switch (id) {
		case TLM__ARG_ERROR:
			goto done;
		case O_HELP:
			fputs(help, stdout);
			rc = TLM_EXIT_OK;
			goto done;
		case O_DEVICE: {
			char *end;
			errno = 0;
			long d = strtol(v, &end, 10);
			if (*v < '0' || *v > '9' || *end || errno || d > 32767) {
				rc = usage_error("--device: bad device number '%s'", v);
				goto done;
			}
			o.device = (int)d;
			break;
		}
		case O_SETTING:
			settings[o.nsettings++] = v;
			break;
		case O_RECORDED:
			o.recorded = v;
			break;
		case O_MEMORY:
			if (tlm__parse_bytes(v, &o.memory) || !o.memory) {
				rc = usage_error("--memory: bad size '%s' (bytes, or with K, M, G)", v);
				goto done;
			}
			break;
		case O_FORMAT:
			if (strcmp(v, "text") && strcmp(v, "json")) {
				rc = usage_error("--format: expected text or json, got '%s'", v);
				goto done;
			}
			format = v;
			break;
		case O_OUTPUT:
			out = v;
			break;
		default: /* TLM__ARG_POSITIONAL */
			if (trace) {
				rc = usage_error("one trace only (got '%s' too)", v);
				goto done;
			}
			trace = v;
		}
	}
	if (!trace) {
		rc = usage_error("missing TRACE%s", "");
		goto done;
	}
	/* settings are checked before the trace is read: a typo fails fast */
	for (size_t k = 0; k < o.nsettings; k++) {
		struct tlm_wi_settings s;
		char err[200];
		tlm_wi_defaults(&s);
		if (tlm_wi_parse(&s, settings[k], err, sizeof err)) {
			tlm_text_line(stderr, "tlm whatif: --setting '%s': %s\n", settings[k], err);
			goto done;
		}
	}
	o.settings = settings;
	struct tlm_wi_report r;
	char err[512];
	if (tlm_wi_run(trace, &o, &r, err, sizeof err)) {
		tlm_text_line(stderr, "tlm whatif: %s\n", err);
		rc = TLM_EXIT_DAMAGED;
		goto done;
	}
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f) {
		tlm_text_line(stderr, "tlm whatif: %s: %s\n", out, strerror(errno));
		tlm_wi_report_free(&r);
		rc = TLM_EXIT_DAMAGED;
		goto done;
	}
	int w = !strcmp(format, "json") ? tlm_wi_render_json(&r, f) : tlm_wi_render_text(&r, f);
	if (out && fclose(f))
		w = -1;
	else if (!out && fflush(f))
		w = -1;
	tlm_wi_report_free(&r);
	if (w) {
		fprintf(stderr, "tlm whatif: write error\n");
		rc = TLM_EXIT_DAMAGED;
		goto done;
	}
	rc = TLM_EXIT_OK;
done:
	free(settings);
	return rc;
}
