/* SPDX-License-Identifier: MIT */
/*
 * job_props.c - what places a process in its job, as PROP records
 * (docs/trace-format.md): the launcher's rank variables (torchrun, mpirun
 * wrappers, SLURM scripts set RANK, LOCAL_RANK and WORLD_SIZE) and whether
 * the process is a fork child of a traced parent (a DataLoader worker) rather
 * than an image of its own. `tlm report` on many traces (docs/job.md) uses
 * them to name ranks and roles.
 *
 * Contract: called once per trace start (the environment is read then, off
 * the hot path) and once in a fork child; never allocates.
 */
#include <stdlib.h>

#include "recording/lifecycle.h"

void tlm__job_props(void)
{
	static const char *const vars[] = {"RANK", "LOCAL_RANK", "WORLD_SIZE"};
	static const char *const keys[] = {"env.RANK", "env.LOCAL_RANK", "env.WORLD_SIZE"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *v = getenv(vars[i]);
		if (v)
			tlm__writer_prop(keys[i], v);
	}
}

void tlm__job_props_forked(void)
{
	tlm__writer_prop("origin", "fork");
}
