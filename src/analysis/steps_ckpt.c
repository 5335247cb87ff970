/* SPDX-License-Identifier: MIT */
/*
 * steps_ckpt.c - the checkpointing estimate of steps_act.c: the step's
 * memory replayed as if segments of N consecutive instances of a function
 * were checkpointed (docs/report.md, "Activations and checkpointing").
 *
 * A held activation of an instance is an allocation it made that lives past
 * the function's last allocation in the step (to the backward pass) and is
 * freed before the step ends. With checkpointing, a segment keeps only its
 * output (the held activation its last instance made last: the next
 * segment's input); every other held activation of the segment is not made
 * in the forward pass but re-made when the segment's backward pass begins
 * (right after the previous segment's, in the order backward reaches them,
 * freed its last held activation; for the first one, right after the
 * function's forward pass) and freed when it was freed.
 * The estimate is the highest point of that replay, from the memory live
 * when the step began; with nothing checkpointed it is the step's peak.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"

struct d2 {
	uint64_t key;   /* 2 x event ordinal (+1 for the event itself): re-made memory goes just before */
	int64_t bytes;
};

static int by_key(const void *a, const void *b)
{
	const struct d2 *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

uint64_t tlm__ckpt_replay(const struct tlm__srec *recs, size_t lo, size_t hi, uint64_t t0, uint64_t t1, int device,
			  uint64_t live_at_start, const size_t *fn, const size_t *inst, size_t nfn, size_t L,
			  unsigned every, bool *ok)
{
	*ok = false;
	if (!nfn || !L)
		return 0;
	uint64_t fwd_end = recs[fn[nfn - 1]].ev;
	/* per entry of fn: 0 not held, 1 held (re-made), 2 held and kept (a segment's output) */
	uint8_t *role = calloc(nfn, 1);
	uint64_t *seg_start = malloc(((L + every - 1) / every + 1) * sizeof *seg_start);
	uint8_t *skip = calloc(hi - lo + 1, 1); /* by window record: its forward allocation is not made */
	struct d2 *d = malloc((2 * hi + 2 * nfn + 2) * sizeof *d);
	uint64_t peak = 0;
	if (!role || !seg_start || !skip || !d)
		goto out;
	size_t nseg = (L + every - 1) / every;
	for (size_t s = 0; s < nseg; s++)
		seg_start[s] = UINT64_MAX;
	for (size_t q = 0; q < nfn; q++) {
		const struct tlm__srec *x = &recs[fn[q]];
		if (x->fev == UINT64_MAX || x->fev <= fwd_end || x->ft >= t1 || inst[q] >= L)
			continue;
		role[q] = 1;
		size_t s = inst[q] / every;
		if (x->fev < seg_start[s])
			seg_start[s] = x->fev;
	}
	/* A segment's backward pass begins when the one before it (in the order
	 * backward reaches them: by first free of a held activation) has freed
	 * its last; the first begins when the function's forward pass ends. */
	uint64_t *seg_end = calloc(nseg + 1, sizeof *seg_end);
	size_t *order = malloc((nseg + 1) * sizeof *order);
	if (!seg_end || !order) {
		free(seg_end);
		free(order);
		goto out;
	}
	for (size_t q = 0; q < nfn; q++)
		if (role[q] && recs[fn[q]].fev > seg_end[inst[q] / every])
			seg_end[inst[q] / every] = recs[fn[q]].fev;
	size_t no = 0;
	for (size_t s = 0; s < nseg; s++)
		if (seg_start[s] != UINT64_MAX)
			order[no++] = s;
	for (size_t a = 1; a < no; a++) /* insertion sort by first free: segments are few */
		for (size_t b = a; b > 0 && seg_start[order[b]] < seg_start[order[b - 1]]; b--) {
			size_t x = order[b];
			order[b] = order[b - 1];
			order[b - 1] = x;
		}
	for (size_t a = no; a-- > 0;)
		seg_start[order[a]] = a ? seg_end[order[a - 1]] + 1 : fwd_end + 1;
	free(seg_end);
	free(order);
	/* the output of each segment: the last held activation of its last instance */
	for (size_t s = 0; s < nseg; s++) {
		size_t last = (s + 1) * every < L ? (s + 1) * every - 1 : L - 1;
		for (size_t q = nfn; q-- > 0;)
			if (inst[q] == last && role[q]) {
				role[q] = 2;
				break;
			}
	}
	size_t nd = 0;
	for (size_t q = 0; q < nfn; q++) {
		if (role[q] != 1)
			continue;
		const struct tlm__srec *x = &recs[fn[q]];
		skip[fn[q] - lo] = 1;
		d[nd++] = (struct d2){2 * seg_start[inst[q] / every], (int64_t)x->size};
	}
	for (size_t i = 0; i < hi; i++) {
		const struct tlm__srec *x = &recs[i];
		if (x->device != device || x->mkind != TLM_MEM_DEVICE)
			continue;
		if (i >= lo && !skip[i - lo])
			d[nd++] = (struct d2){2 * x->ev + 1, (int64_t)x->size};
		if (x->fev != UINT64_MAX && x->ft >= t0 && x->ft < t1)
			d[nd++] = (struct d2){2 * x->fev + 1, -(int64_t)x->size};
	}
	qsort(d, nd, sizeof *d, by_key);
	int64_t cur = (int64_t)live_at_start;
	peak = live_at_start;
	for (size_t i = 0; i < nd; i++) {
		cur += d[i].bytes;
		if (cur > (int64_t)peak)
			peak = (uint64_t)cur;
	}
	*ok = true;
out:
	free(role);
	free(seg_start);
	free(skip);
	free(d);
	return peak;
}
