/* SPDX-License-Identifier: MIT */
/*
 * chrome_out.h - the pieces of Chrome trace-event JSON (render_chrome.c)
 * that the job's merged export (src/job/job_chrome.c) writes too: a string,
 * a timestamp, a memory counter event. Internal.
 */
#ifndef TLM_REPORT_CHROME_OUT_H
#define TLM_REPORT_CHROME_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string (NULL: ""), escaped. */
void tlm__chrome_str(FILE *f, const char *s);
/* "ts": microseconds with three decimals, exact from nanoseconds. */
void tlm__chrome_ts(FILE *f, int64_t ns);
/* One counter event {"name","ph":"C","ts","pid","tid":0,"args":{"allocated","reserved"}},
 * after a comma unless *first (then cleared). */
void tlm__chrome_counter(FILE *f, bool *first, uint32_t pid, const char *name, int64_t t, uint64_t alloc,
			 uint64_t res);

#endif
