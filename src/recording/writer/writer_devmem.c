/* SPDX-License-Identifier: MIT */
/*
 * writer_devmem.c - the writer's side of device memory samples: a sample
 * read from an event's extension slot waits here until its event is
 * written, then becomes a DEVMEM record right after it (numbered in trace
 * order); after the drain each written sample is completed by a DEVPROCS
 * record with NVML's process list (nvml_dl.c), asked on the writer thread.
 *
 * Contract: everything runs under the writer lock; nothing allocates. Up to
 * PENDING samples wait for their events and up to JOBS for NVML; a sample
 * with no room is dropped (its event is written without it), a job with no
 * room is asked at once.
 */
#include <string.h>

#include "recording/clock.h"
#include "recording/config.h"
#include "recording/devmem.h"
#include "recording/nvml_dl.h"
#include "recording/writer/writer_int.h"

#define PENDING 4096u
#define JOBS 256u

struct pend {
	bool used;
	int16_t device;
	uint8_t why, flags;
	uint64_t ticks, total, free_b;
};
static struct pend pend[PENDING];
static uint32_t pend_next;     /* where the search for a free entry starts */
static uint32_t next_sample;   /* the next DEVMEM's number in this trace */
struct job {
	uint32_t sample;
	int16_t device;
};
static struct job jobs[JOBS];
static uint32_t njobs;
static TLM_TLS bool on_writer;
static struct tlm_rec_devprocs procs; /* 4 KiB: not on the stack of a signal-time drain */

void tlm__wd_writer_thread(void)
{
	on_writer = true;
}

uint32_t tlm__wd_stage(const struct tlm__slot *x)
{
	if (!x->op)
		return 0;
	for (uint32_t k = 0; k < PENDING; k++) {
		uint32_t i = (pend_next + k) % PENDING;
		if (!pend[i].used) {
			pend[i] = (struct pend){true, x->device, (uint8_t)(x->op - 1), (uint8_t)x->flags, x->aux, x->stream,
						x->size};
			pend_next = i + 1;
			return i + 1;
		}
	}
	return 0; /* PENDING samples wait for their events: this one is dropped */
}

static void ask(const struct job *j)
{
	memset(&procs, 0, offsetof(struct tlm_rec_devprocs, p));
	procs.sample = j->sample;
	procs.device = j->device;
	if (tlm__cfg.nvml_off)
		procs.status = TLM_DEVPROCS_NO_NVML;
	else
		tlm__nvml_procs(j->device, &procs);
	procs.time_ns = tlm__now_ns();
	if (!tlm__wf.failed)
		tlm__wf_check(tlm_tw_devprocs(tlm__wf.tw, &procs));
}

void tlm__wd_emit(uint32_t id)
{
	if (!id || id > PENDING || !pend[id - 1].used)
		return;
	struct pend *p = &pend[id - 1];
	p->used = false;
	struct tlm_rec_devmem d = {
		.sample = next_sample++, .device = p->device, .why = p->why, .flags = p->flags,
		.time_ns = tlm__ticks_to_ns(p->ticks), .total = p->total, .free = p->free_b,
	};
	if (!tlm__wf.failed)
		tlm__wf_check(tlm_tw_devmem(tlm__wf.tw, &d));
	struct job j = {d.sample, p->device};
	if (njobs == JOBS)
		ask(&j);
	else
		jobs[njobs++] = j;
}

void tlm__wd_jobs(bool now)
{
	if (!now && !on_writer)
		return; /* a host thread draining: NVML waits for the writer */
	for (uint32_t i = 0; i < njobs; i++)
		ask(&jobs[i]);
	njobs = 0;
}

/* The process ends at a high the rate limit skipped: sampled now, after its
 * last events, from the exiting thread (as another device's, if need be). */
void tlm__wd_exit(void)
{
	for (int d = 0; d < TLM__DM_DEVS; d++) {
		struct tlm__slot x = {0};
		if (!tlm__dm_exit_due(d) || !tlm__dm_take(&x, TLM_DEVMEM_EXIT, 0, (int16_t)d))
			continue;
		uint32_t id = tlm__wd_stage(&x);
		tlm__wd_emit(id);
	}
	tlm__wd_jobs(true);
}

void tlm__wd_reset(void)
{
	memset(pend, 0, sizeof pend);
	pend_next = next_sample = njobs = 0;
}
