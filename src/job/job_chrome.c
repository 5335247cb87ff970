/* SPDX-License-Identifier: MIT */
/*
 * job_chrome.c - the job's merged timeline as Chrome trace-event JSON
 * (Perfetto, chrome://tracing; docs/job.md): one process per trace, named
 * "rank 3 (host)" and sorted in job order, with a counter track of its
 * device memory (allocated and reserved, the points of job_series.c) and an
 * instant event per OOM kept (TLM_JOB_OOMS). Times are microseconds on the
 * job clock: the process's CLOCK_REALTIME start minus the job's, plus the
 * monotonic offset of the event. Processes read from JSON reports have no
 * timeline and are only counted (otherData).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "render/chrome_out.h"
#include "render/render.h"

static void meta(FILE *f, bool *first, uint32_t pid, const char *what, const char *key, const char *sval,
		 uint64_t uval)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = false;
	fprintf(f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":0,\"args\":{\"%s\":", what, pid, key);
	if (sval)
		tlm__chrome_str(f, sval);
	else
		fprintf(f, "%" PRIu64, uval);
	fputs("}}", f);
}

static void process(FILE *f, bool *first, const struct tlm_job *j, size_t i, uint32_t pid, uint64_t *ooms)
{
	const struct tlm_job_proc *p = &j->procs[i];
	const struct tlm_job_series *s = p->series;
	int64_t off = (int64_t)(p->start_realtime_ns - j->start_realtime_ns);
	char name[160], track[64];
	tlm_job_track_name(p, name, sizeof name);
	meta(f, first, pid, "process_name", "name", name, 0);
	meta(f, first, pid, "process_sort_index", "sort_index", NULL, i);
	if (s->n) {
		tlm__track_name(track, sizeof track, s->device, 0);
		if (s->first_ns < s->pt[0].t_ns) /* from 0 at the start of the run */
			tlm__chrome_counter(f, first, pid, track, off + s->first_ns, 0, 0);
		for (size_t k = 0; k < s->n; k++)
			tlm__chrome_counter(f, first, pid, track, off + s->pt[k].t_ns, s->pt[k].allocated,
					    s->pt[k].reserved);
		const struct tlm_job_point *last = &s->pt[s->n - 1];
		if (s->end_ns > last->t_ns) /* to the last level at its end */
			tlm__chrome_counter(f, first, pid, track, off + s->end_ns, last->allocated, last->reserved);
	}
	for (size_t k = 0; k < s->nooms; k++) {
		const struct tlm_job_oom *o = &s->ooms[k];
		fprintf(f, ",\n{\"name\":\"OOM device %d\",\"cat\":\"oom\",\"ph\":\"i\",\"s\":\"p\",", o->device);
		tlm__chrome_ts(f, off + o->t_ns);
		fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":0,\"args\":{\"device\":%d,\"requested_bytes\":%" PRIu64
			   ",\"device_free_bytes\":%" PRIu64 "}}",
			pid, o->device, o->requested, o->device_free);
		(*ooms)++;
	}
}

int tlm_job_chrome(const struct tlm_job *j, FILE *f)
{
	uint32_t *pids = malloc((j->nprocs ? j->nprocs : 1) * sizeof *pids);
	if (!pids || tlm_job_track_pids(j, pids)) {
		free(pids);
		return -1;
	}
	size_t tracks = 0, without = 0;
	uint64_t ooms = 0;
	bool first = true;
	fputs("{\"traceEvents\":[", f);
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (p->error)
			continue;
		if (!p->series) {
			without++;
			continue;
		}
		tracks++;
		process(f, &first, j, i, pids[i], &ooms);
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"tlm\",\"job_start_realtime_ns\":%" PRIu64
		   ",\"clock\":\"microseconds from the earliest process start: each trace's CLOCK_REALTIME start "
		   "plus its CLOCK_MONOTONIC offsets\",\"processes\":%zu,\"tracks\":%zu,"
		   "\"processes_without_track\":%zu,\"unreadable\":%zu,\"ooms\":%" PRIu64 "}}\n",
		j->start_realtime_ns, j->nprocs - j->nunreadable, tracks, without, j->nunreadable, ooms);
	free(pids);
	return ferror(f) ? -1 : 0;
}
