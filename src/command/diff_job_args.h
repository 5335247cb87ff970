/* SPDX-License-Identifier: MIT */
/*
 * diff_job_args.h - between cmd_diff.c (the options) and cmd_diff_job.c
 * (`tlm diff` of two jobs, src/job/job_diff.h).
 */
#ifndef TLM_TOOLS_DIFF_JOB_ARGS_H
#define TLM_TOOLS_DIFF_JOB_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tlm__diff_job_args {
	char **in[2];          /* BASE's and NEW's inputs */
	size_t n[2];
	const char *format, *out;
	bool gate;
	uint64_t gate_bytes;
	bool peak_gate;
	uint64_t peak_gate_bytes;
	unsigned threads;
};

/* A directory, a glob that is not a file, or a tlm-job/1 file. */
bool tlm__diff_is_job(const char *path);
/* The job diff; returns the exit code (docs/diff.md). */
int tlm__diff_job(const struct tlm__diff_job_args *a);

#endif
