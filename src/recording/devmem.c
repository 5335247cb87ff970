/* SPDX-License-Identifier: MIT */
/*
 * devmem.c - which events carry a sample of the device's memory, and taking
 * it (cuMemGetInfo) on the host's thread, in the event's extension slot, so
 * that the writer emits the DEVMEM record right after that event
 * (docs/trace-format.md, "Device memory samples").
 *
 * START: the first successful device allocation on a device; OOM: a failed
 * device allocation; PEAK: a successful allocation that takes the device's
 * tracked reserved bytes (reserved_table.c) above the highest sampled so
 * far, at most one per device per TLM_DEBUG_PEAK_MS (1 ms); a high skipped
 * by that limit is sampled before the next free on that device (F_BEFORE),
 * or at the end of the trace (EXIT) when no free came.
 * Only a new high pays for a clock read; the common event pays two loads.
 */
#include <string.h>

#include "recording/clock.h"
#include "recording/config.h"
#include "recording/devmem.h"
#include "recording/driver_query.h"
#include "recording/nvml_dl.h"

static _Atomic uint64_t hi[TLM__DM_DEVS];      /* highest reserved value sampled */
static _Atomic uint64_t last_peak[TLM__DM_DEVS];/* when the last PEAK sample was taken (ns) */
static _Atomic uint32_t pending[TLM__DM_DEVS];  /* a high went unsampled (rate limit) */

static void raise_hi(int d, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(&hi[d], memory_order_relaxed);
	while (v > cur && !atomic_compare_exchange_weak_explicit(&hi[d], &cur, v, memory_order_relaxed,
								 memory_order_relaxed))
		;
}

static bool peak_due(int d, uint64_t after)
{
	if (TLM_LIKELY(after <= atomic_load_explicit(&hi[d], memory_order_relaxed)))
		return false;
	uint64_t now = tlm__now_ns(), last = atomic_load_explicit(&last_peak[d], memory_order_relaxed);
	uint64_t period = (uint64_t)tlm__cfg.peak_ms * 1000000u;
	if ((last && now - last < period) ||
	    !atomic_compare_exchange_strong_explicit(&last_peak[d], &last, now, memory_order_relaxed,
						     memory_order_relaxed)) {
		atomic_store_explicit(&pending[d], 1, memory_order_relaxed);
		return false;
	}
	atomic_store_explicit(&pending[d], 0, memory_order_relaxed);
	raise_hi(d, after);
	return true;
}

int tlm__dm_after_alloc(unsigned op, unsigned kind, int32_t result, uint64_t addr, uint64_t size, int16_t device,
			bool first)
{
	bool device_mem = kind == TLM_KIND_DEVICE || kind == TLM_KIND_VMM_PHYSICAL;
	int d = device;
	if (op != TLM_OP_ALLOC)
		return -1;
	if (result)
		return device_mem && d >= 0 && d < TLM__DM_DEVS ? TLM_DEVMEM_OOM : -1;
	uint64_t after = 0;
	bool tracked = tlm__rt_insert(kind, addr, size, device, &after);
	if (!device_mem || d < 0 || d >= TLM__DM_DEVS)
		return -1;
	if (first) {
		raise_hi(d, after);
		return TLM_DEVMEM_START;
	}
	return tracked && tlm__rt_exact() && peak_due(d, after) ? TLM_DEVMEM_PEAK : -1;
}

bool tlm__dm_before_free(const struct tlm__rt_claim *c)
{
	int d = c->device;
	if (c->slot < 0 || !c->counted || !c->size || d < 0 || d >= TLM__DM_DEVS || !tlm__rt_exact())
		return false;
	if (TLM_LIKELY(!atomic_load_explicit(&pending[d], memory_order_relaxed)) ||
	    !atomic_exchange_explicit(&pending[d], 0, memory_order_relaxed))
		return false;
	raise_hi(d, tlm__rt_reserved(d) + c->size); /* the state before this free */
	return true;
}

bool tlm__dm_take(struct tlm__slot *x, int why, unsigned flags, int16_t device)
{
	uint64_t fr = 0, total = 0;
	if (!tlm__device_mem_info(device, &fr, &total))
		return false;
	tlm__nvml_note_device(device);
	x->op = (uint8_t)(why + 1);
	x->flags = (uint16_t)flags;
	x->device = device;
	x->size = fr;
	x->stream = total;
	x->aux = tlm__ticks();
	return true;
}

bool tlm__dm_exit_due(int d)
{
	return tlm__rt_exact() && atomic_exchange_explicit(&pending[d], 0, memory_order_relaxed);
}
