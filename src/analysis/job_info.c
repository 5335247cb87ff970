/* SPDX-License-Identifier: MIT */
/*
 * job_info.c - what a report knows of its process's place in the job
 * (report.h struct tlm_report_job) and the site name that matches across
 * processes (tlm_report_site_key). docs/job.md explains both.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/job_info.h"

static int64_t parse_int(const char *s)
{
	if (!*s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	return errno || *end || v < 0 ? -1 : (int64_t)v;
}

void tlm__job_prop(struct tlm_report_job *j, const struct tlm_rec_prop *p)
{
	if (!strcmp(p->key, "env.RANK"))
		j->rank = parse_int(p->value);
	else if (!strcmp(p->key, "env.LOCAL_RANK"))
		j->local_rank = parse_int(p->value);
	else if (!strcmp(p->key, "env.WORLD_SIZE"))
		j->world_size = parse_int(p->value);
	else if (!strcmp(p->key, "origin"))
		j->forked = !strcmp(p->value, "fork");
	else if (!strcmp(p->key, "exit.status"))
		j->exit_status = parse_int(p->value);
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void one_frame(const struct tlm_frame *f, char *buf, size_t len)
{
	if (f->function && f->file && f->line > 0)
		snprintf(buf, len, "%s (%s:%d)", f->function, base(f->file), f->line);
	else if (f->function)
		snprintf(buf, len, "%s (%s)", f->function, f->module ? base(f->module) : "?");
	else if (f->module)
		snprintf(buf, len, "%s+0x%" PRIx64, base(f->module), f->module_offset);
	else
		snprintf(buf, len, "0x%" PRIx64, f->ip);
}

/* The useful frame and its caller: one frame alone is often an allocation
 * helper that every site shares. */
void tlm_report_site_key(struct tlm_report *r, uint32_t stack_id, char *buf, size_t len)
{
	const struct tlm_frame *f = NULL;
	size_t n = stack_id ? tlm_report_frames(r, stack_id, &f) : 0;
	const struct tlm_frame *u = n ? tlm_report_useful_frame(r, stack_id) : NULL;
	if (!u || u < f || u >= f + n) {
		snprintf(buf, len, "(no stack)");
		return;
	}
	one_frame(u, buf, len);
	size_t o = strlen(buf);
	if (u + 1 < f + n && o + 4 < len) {
		snprintf(buf + o, len - o, " < ");
		one_frame(u + 1, buf + o + 3, len - o - 3);
	}
}

static void opt_int(struct tlm__json *j, const char *key, int64_t v)
{
	tlm__json_key(j, key);
	if (v >= 0)
		tlm__json_i64(j, v);
	else
		tlm__json_null(j);
}

void tlm__job_json(struct tlm__json *j, const struct tlm_report *r)
{
	tlm__json_ku(j, "ppid", r->job.ppid);
	tlm__json_key(j, "host");
	tlm__json_str(j, r->job.host);
	tlm__json_ku(j, "start_realtime_ns", r->job.start_realtime_ns);
	opt_int(j, "rank", r->job.rank);
	opt_int(j, "local_rank", r->job.local_rank);
	opt_int(j, "world_size", r->job.world_size);
	tlm__json_key(j, "origin");
	tlm__json_str(j, r->job.forked ? "fork" : "");
	tlm__json_key(j, "end_how");
	tlm__json_str(j, r->end_how);
	tlm__json_key(j, "exit_status");
	if (r->job.exit_status >= 0)
		tlm__json_i64(j, r->job.exit_status);
	else
		tlm__json_null(j);
}
