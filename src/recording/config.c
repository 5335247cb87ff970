/* SPDX-License-Identifier: MIT */
/*
 * config.c - the TLM_* environment variables (docs/environment.md lists them).
 *
 * A bad value never stops the program: it is named in one line and the
 * default is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "recording/config.h"
#include "recording/log.h"

struct tlm__config tlm__cfg;

static bool parse_uint(const char *name, unsigned lo, unsigned hi, unsigned *out, const char *expect)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return false;
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi || v[0] == '-') {
		tlm__log("%s: bad value '%s' (expected %s); using %u", name, v, expect, *out);
		return false;
	}
	*out = (unsigned)x;
	return true;
}

static void parse_bool(const char *name, bool *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return;
	if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "true"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "false"))
		*out = false;
	else
		tlm__log("%s: bad value '%s' (expected 0 or 1); using %d", name, v, (int)*out);
}

void tlm__config_load(void)
{
	struct tlm__config c = {
		.stack_depth = 64,
		.drop = false,
		.ring_slots = 16384,
		.drain_ms = 20,
		.compress = true,
		.signals = true,
		.disabled = false,
		.summary = true,
		.peak_ms = 1,
	};
	strcpy(c.output, "tlm-%p.trace");
	const char *o = getenv("TLM_OUTPUT");
	if (o && *o) {
		if (strlen(o) >= sizeof c.output)
			tlm__log("TLM_OUTPUT: bad value (longer than %zu bytes); using %s", sizeof c.output - 1, c.output);
		else
			strcpy(c.output, o);
	}
	tlm__output_absolute(c.output, sizeof c.output); /* a later chdir moves nothing */
	parse_uint("TLM_STACK_DEPTH", 0, TLM_MAX_STACK_DEPTH_CFG, &c.stack_depth, "an integer 0..256, 0 turns stacks off");
	unsigned ring = c.ring_slots;
	if (parse_uint("TLM_RING_SIZE", 256, 1u << 24, &ring, "a power of two 256..16777216")) {
		if (ring & (ring - 1))
			tlm__log("TLM_RING_SIZE: bad value '%u' (expected a power of two 256..16777216); using %u", ring,
				 c.ring_slots);
		else
			c.ring_slots = ring;
	}
	parse_uint("TLM_DRAIN_MS", 1, 10000, &c.drain_ms, "milliseconds 1..10000");
	parse_uint("TLM_DEBUG_WRITER_DELAY_MS", 0, 60000, &c.writer_delay_ms, "milliseconds 0..60000");
	parse_uint("TLM_DEBUG_PEAK_MS", 0, 3600000, &c.peak_ms, "milliseconds 0..3600000");
	unsigned slots = 0;
	if (parse_uint("TLM_DEBUG_TABLE_SLOTS", 16, 1u << 19, &slots, "a power of two 16..524288")) {
		if (slots & (slots - 1))
			tlm__log("TLM_DEBUG_TABLE_SLOTS: bad value '%u' (expected a power of two 16..524288); using the "
				 "default", slots);
		else
			c.table_slots = slots;
	}
	parse_bool("TLM_DEBUG_STACK_VERIFY", &c.verify_stacks);
	parse_bool("TLM_DEBUG_STACK_STATS", &c.stack_stats);
	parse_bool("TLM_DEBUG_PAUSE", &c.debug_pause);
	parse_bool("TLM_STACK_PAST_PYTHON", &c.stack_past_python);
	parse_bool("TLM_BLOCK_NATIVE_STACKS", &c.block_native);
	parse_bool("TLM_DROP", &c.drop);
	parse_bool("TLM_COMPRESS", &c.compress);
	parse_bool("TLM_SIGNALS", &c.signals);
	parse_bool("TLM_DISABLE", &c.disabled);
	parse_bool("TLM_SUMMARY", &c.summary);
	const char *cm = getenv("TLM_CUPTI");
	if (cm && *cm) {
		if (!strcmp(cm, "auto"))
			c.cupti = TLM__CUPTI_AUTO;
		else if (!strcmp(cm, "on") || !strcmp(cm, "1") || !strcmp(cm, "yes") || !strcmp(cm, "true"))
			c.cupti = TLM__CUPTI_ON;
		else if (!strcmp(cm, "off") || !strcmp(cm, "0") || !strcmp(cm, "no") || !strcmp(cm, "false"))
			c.cupti = TLM__CUPTI_OFF;
		else
			tlm__log("TLM_CUPTI: bad value '%s' (expected auto, on or off); using auto", cm);
	}
	const char *py = getenv("TLM_PYTHON");
	if (py && *py) {
		if (!strcmp(py, "auto") || !strcmp(py, "on") || !strcmp(py, "1"))
			c.python_off = false;
		else if (!strcmp(py, "off") || !strcmp(py, "0"))
			c.python_off = true;
		else
			tlm__log("TLM_PYTHON: bad value '%s' (expected auto or off); using auto", py);
	}
	const char *nv = getenv("TLM_NVML");
	if (nv && *nv) {
		if (!strcmp(nv, "off") || !strcmp(nv, "0") || !strcmp(nv, "no") || !strcmp(nv, "false"))
			c.nvml_off = true;
		else if (strcmp(nv, "auto") && strcmp(nv, "on") && strcmp(nv, "1"))
			tlm__log("TLM_NVML: bad value '%s' (expected auto or off); using auto", nv);
	}
	const char *cl = getenv("TLM_CUPTI_LIBRARY");
	if (cl && *cl) {
		if (strlen(cl) >= sizeof c.cupti_library)
			tlm__log("TLM_CUPTI_LIBRARY: bad value (longer than %zu bytes); searching as usual",
				 sizeof c.cupti_library - 1);
		else
			strcpy(c.cupti_library, cl);
	}
	/* setuid/setgid: never write files on behalf of a privileged program */
	if (getauxval(AT_SECURE))
		c.disabled = true;
	tlm__cfg = c;
}

void tlm__output_absolute(char *pattern, size_t len)
{
	if (pattern[0] == '/' || !pattern[0])
		return;
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return; /* no current directory: relative it stays */
	char out[8192];
	size_t n = 0;
	for (const char *c = cwd; *c && n + 3 < sizeof out; c++) {
		if (*c == '%') /* the directory is literal, not a pattern */
			out[n++] = '%';
		out[n++] = *c;
	}
	if (n + 1 + strlen(pattern) >= len || n + 1 + strlen(pattern) >= sizeof out)
		return;
	out[n++] = '/';
	strcpy(out + n, pattern);
	strcpy(pattern, out);
}
