/* SPDX-License-Identifier: MIT */
/*
 * job_info.h - the process's place in its job in the tlm-report/1 JSON
 * (docs/report-json.md "process"): keys ppid, host, start_realtime_ns, rank,
 * local_rank, world_size (null when not set), origin ("fork" or "") and
 * end_how (struct tlm_report).
 */
#ifndef TLM_REPORT_JOB_INFO_H
#define TLM_REPORT_JOB_INFO_H

#include "encoders/json_out.h"
#include "analysis/report.h"

void tlm__job_json(struct tlm__json *j, const struct tlm_report *r);

#endif
