/* SPDX-License-Identifier: MIT */
/*
 * summary.h - the end-of-run report on stderr (TLM_SUMMARY=0 turns it off).
 *
 * Contract: tlm__summary() runs, once the trace is complete, `tlm report
 * --summary TRACE` with its output on libtlm's stderr (the analysis lives
 * in the tool, not in the process being watched), as a child the host never
 * sees (spawn_quiet.c: no SIGCHLD, invisible to its waitpid(-1)). Without
 * the tool, one line says where the trace is. It may allocate: exit only.
 */
#ifndef TLM_REC_SUMMARY_H
#define TLM_REC_SUMMARY_H

#include "recording/defs.h"

void tlm__summary(const char *trace) TLM_HIDDEN;
/* spawn_quiet.c: 0 and the child's wait status in *status, or -1 */
int tlm__spawn_quiet(const char *path, char *const argv[], char *const envp[], int out_fd, int *status)
	TLM_HIDDEN; /* the child's stdout and stderr: out_fd */

#endif
