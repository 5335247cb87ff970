/* SPDX-License-Identifier: MIT */
/*
 * log.h - libtlm's own lines on stderr, "tlm[PID]: ...".
 *
 * Contract: one line per call, written with a single write(2) so that lines
 * of several threads or processes never interleave; errno is kept. A
 * failure is said once (tlm__log_once). Lines go to the stderr the program
 * started with (tlm__log_keep_stderr, at load), never into a file the host
 * put at descriptor 2 later; tlm__log_fd() is that descriptor for others
 * (the summary tool's output), -1 when there is none.
 */
#ifndef TLM_REC_LOG_H
#define TLM_REC_LOG_H

#include "recording/defs.h"

void tlm__log(const char *fmt, ...) TLM_HIDDEN __attribute__((format(printf, 1, 2)));
void tlm__log_keep_stderr(void) TLM_HIDDEN; /* once, at load (a fork child keeps its parent's) */
int tlm__log_fd(void) TLM_HIDDEN;
/* logs once per flag word */
#define tlm__log_once(flag, ...)                                                  \
	do {                                                                          \
		static atomic_int flag##_once;                                            \
		if (!atomic_exchange_explicit(&flag##_once, 1, memory_order_relaxed))     \
			tlm__log(__VA_ARGS__);                                                \
	} while (0)

#endif
