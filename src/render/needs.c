/* SPDX-License-Identifier: MIT */
/*
 * needs.c - what each output asks the report's one pass to collect beyond
 * the report's sections (export.h: tlm_report_needs), so that `tlm report`
 * reads the trace once and pays only for what it prints.
 */
#include <string.h>

#include "render/export.h"

unsigned tlm_report_needs(const char *format, int metric)
{
	if (!format || !strcmp(format, "text"))
		return TLM_REPORT_WHATIF; /* the full report and the summary: the hint under an OOM */
	if (!strcmp(format, "html"))
		return TLM_REPORT_SEGMAPS | TLM_REPORT_ACTIVE;
	if (!strcmp(format, "collapsed"))
		return metric == TLM_COLLAPSED_PEAK ? TLM_REPORT_SEGMAPS : 0;
	if (!strcmp(format, "torch-snapshot"))
		return TLM_REPORT_SNAPSHOT;
	return 0; /* json, chrome */
}
