/* SPDX-License-Identifier: MIT */
/* names.c - the words the renderers share (JSON values and text labels). */
#include <string.h>

#include "render/render.h"

const char *tlm__mkind_name(int k)
{
	switch (k) {
	case TLM_MEM_DEVICE: return "device";
	case TLM_MEM_MANAGED: return "managed";
	case TLM_MEM_HOST_PINNED: return "host_pinned";
	default: return "unknown";
	}
}

const char *tlm__exit_name(int e)
{
	switch (e) {
	case TLM_REPORT_CLEAN: return "clean";
	case TLM_REPORT_SIGNAL: return "signal";
	default: return "truncated";
	}
}

const char *tlm__verdict_name(int v)
{
	return v == TLM_OOM_FRAGMENTATION ? "fragmentation" : "exhaustion";
}

const char *tlm__outcome_name(int o)
{
	return o == TLM_OOM_RECOVERED ? "recovered" : o == TLM_OOM_FATAL ? "fatal" : "raised";
}

void tlm__outcome_text(char *buf, size_t n, const struct tlm_report *r, const struct tlm_report_oom *o)
{
	char a[32];
	if (o->outcome == TLM_OOM_RECOVERED)
		snprintf(buf, n, "recovered: the retry succeeded after freeing %s of cache (%llu free%s, %.1f ms)",
			 tlm__human(a, sizeof a, o->retry_freed), (unsigned long long)o->retry_frees,
			 o->retry_frees == 1 ? "" : "s", (double)o->retry_ns / 1e6);
	else if (o->outcome == TLM_OOM_FATAL && r->exit == TLM_REPORT_SIGNAL)
		snprintf(buf, n, "fatal: the process died of it (signal %d)", r->signo);
	else if (o->outcome == TLM_OOM_FATAL && r->job.exit_status > 0)
		snprintf(buf, n, "fatal: the process died of it (exit status %lld)", (long long)r->job.exit_status);
	else if (o->outcome == TLM_OOM_FATAL)
		snprintf(buf, n, "fatal: the process died of it (the trace ends there)");
	else
		snprintf(buf, n, "raised: the program got the error (PyTorch: OutOfMemoryError) and went on");
	if (strlen(buf) > 90) /* the text's 100 columns, indented */
		buf[90] = 0;
}

void tlm__outcome_counts(char *buf, size_t n, const struct tlm_report *r)
{
	const uint64_t *c = r->ooms_by_outcome;
	uint64_t rest = r->ooms_total - (c[0] + c[1] + c[2]); /* past the list's 1000 */
	int k = snprintf(buf, n, "%llu raised, %llu fatal", (unsigned long long)(c[TLM_OOM_RAISED] + rest),
			 (unsigned long long)c[TLM_OOM_FATAL]);
	if (c[TLM_OOM_RECOVERED] && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "; %llu recovered", (unsigned long long)c[TLM_OOM_RECOVERED]);
}
