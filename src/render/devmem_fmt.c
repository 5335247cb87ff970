/* SPDX-License-Identifier: MIT */
/*
 * devmem_fmt.c - the words of the device-memory view (devmem.h): the OOM
 * diagnosis line every output prints, and why a view has no split.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis/devmem.h"
#include "render/render.h"

#define LINE_OTHERS 3 /* other processes named in one line */

const char *tlm_report_devmem_why_name(uint32_t why)
{
	switch (why) {
	case TLM_DEVMEM_START: return "start";
	case TLM_DEVMEM_PEAK: return "peak";
	case TLM_DEVMEM_OOM: return "oom";
	case TLM_DEVMEM_EXIT: return "exit";
	default: return "unknown";
	}
}

const char *tlm_report_devmem_nvml_name(int nvml)
{
	switch (nvml) {
	case TLM_DM_NVML_ABSENT: return "absent";
	case TLM_DM_NVML_ERROR: return "error";
	case TLM_DM_NVML_OK: return "ok";
	default: return "not_recorded";
	}
}

/* appends to buf (always terminated, cut at n) */
static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

const char *tlm_report_devview_why_unsplit(const struct tlm_report_devview *v, uint32_t pid, char *buf, size_t n)
{
	buf[0] = 0;
	switch (v->nvml) {
	case TLM_DM_NVML_NOT_RECORDED:
		cat(buf, n, "no NVML record: no per-process figures");
		return buf;
	case TLM_DM_NVML_ABSENT:
		cat(buf, n, "NVML not loaded: no per-process figures");
		return buf;
	case TLM_DM_NVML_ERROR:
		cat(buf, n, "NVML error %" PRId32 ": no per-process figures", v->nvml_status);
		return buf;
	default:
		break;
	}
	if (v->stale) {
		cat(buf, n, "NVML answered %.1f ms after the sample and lists more than was used then (the "
			    "processes changed in between)", (double)v->nvml_lag_ns / 1e6);
		return buf;
	}
	if (!v->self_listed) {
		if (!v->nprocs) {
			cat(buf, n, "NVML lists no process on the device, not even pid %" PRIu32, pid);
			return buf;
		}
		cat(buf, n, "NVML lists pid");
		for (size_t i = 0; i < v->nprocs && i < LINE_OTHERS; i++)
			cat(buf, n, "%s %" PRIu32, i ? "," : "", v->procs[i].pid);
		if (v->nprocs > LINE_OTHERS)
			cat(buf, n, " and %zu more", v->nprocs - LINE_OTHERS);
		cat(buf, n, " but not pid %" PRIu32 " (another pid namespace, e.g. a container)", pid);
		return buf;
	}
	if (!v->others_known) {
		cat(buf, n, "NVML did not give every process's bytes");
		return buf;
	}
	return NULL;
}

/* The summary's form: its OOM line already gives the free memory, and the
 * reason a view has no split in a word or two. */
static const char *short_why(const struct tlm_report_devview *v, char *buf, size_t n)
{
	switch (v->nvml) {
	case TLM_DM_NVML_NOT_RECORDED: return "no NVML record";
	case TLM_DM_NVML_ABSENT: return "NVML not loaded";
	case TLM_DM_NVML_ERROR:
		snprintf(buf, n, "NVML error %" PRId32, v->nvml_status);
		return buf;
	default:
		return v->stale ? "NVML's later list does not fit" : !v->self_listed ? "this pid not in NVML's list"
										    : "NVML bytes incomplete";
	}
}

static char *line(const struct tlm_report_devview *v, uint32_t pid, char *buf, size_t n, bool compact)
{
	char a[32], b[32];
	buf[0] = 0;
	cat(buf, n, "%s tracked, %s %s", tlm__human(a, sizeof a, v->tracked), tlm__human(b, sizeof b, v->unattributed),
	    v->split ? "context and untracked" : "untracked or other processes");
	if (v->self_listed && v->nothers == 1) {
		for (size_t i = 0; i < v->nprocs; i++) {
			if (v->procs[i].pid == pid)
				continue;
			if (v->procs[i].used == TLM_DEVMEM_UNKNOWN)
				cat(buf, n, ", pid %" PRIu32 " holds an amount NVML did not give", v->procs[i].pid);
			else
				cat(buf, n, ", %s held by pid %" PRIu32, tlm__human(a, sizeof a, v->procs[i].used),
				    v->procs[i].pid);
		}
	} else if (v->self_listed && v->nothers > 1) {
		cat(buf, n, ", %s held by %zu other processes:", tlm__human(a, sizeof a, v->others), v->nothers);
		size_t shown = 0;
		for (size_t i = 0; i < v->nprocs && shown < LINE_OTHERS; i++) {
			if (v->procs[i].pid == pid)
				continue;
			if (v->procs[i].used == TLM_DEVMEM_UNKNOWN)
				cat(buf, n, "%s pid %" PRIu32 " ?", shown ? "," : "", v->procs[i].pid);
			else
				cat(buf, n, "%s pid %" PRIu32 " %s", shown ? "," : "", v->procs[i].pid,
				    tlm__human(a, sizeof a, v->procs[i].used));
			shown++;
		}
		if (v->nothers > shown)
			cat(buf, n, ", %zu more", v->nothers - shown);
	} else if (v->split) {
		cat(buf, n, ", no other process");
	}
	char why[256];
	if (compact) {
		cat(buf, n, " (of %s", tlm__human(a, sizeof a, v->total));
		if (!v->split)
			cat(buf, n, "; %s", short_why(v, why, sizeof why));
		cat(buf, n, ")");
		return buf;
	}
	cat(buf, n, " (of %s; %s free", tlm__human(a, sizeof a, v->total), tlm__human(b, sizeof b, v->free));
	if (tlm_report_devview_why_unsplit(v, pid, why, sizeof why))
		cat(buf, n, "; %s", why);
	cat(buf, n, ")");
	return buf;
}

char *tlm_report_devview_line(const struct tlm_report_devview *v, uint32_t pid, char *buf, size_t n)
{
	return line(v, pid, buf, n, false);
}

char *tlm_report_devview_short(const struct tlm_report_devview *v, uint32_t pid, char *buf, size_t n)
{
	return line(v, pid, buf, n, true);
}
