/* SPDX-License-Identifier: MIT */
/*
 * sites.c - per-site aggregates: churn groups built while streaming, the
 * survivors grouped by (device, stack) at the end of the run, and the leak
 * rule. A "site" is an allocation stack on one device.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "common/grow.h"

/* ---- churn: completed allocations by (device, stack, size) -------------- */

static const struct tlm__key *churn_key(const void *ctx, uint32_t v)
{
	const struct tlm__churn *c = ctx;
	return &c->ent[v].key;
}

int tlm__churn_init(struct tlm__churn *c)
{
	memset(c, 0, sizeof *c);
	return tlm__index_init(&c->idx, churn_key, c);
}

void tlm__churn_fini(struct tlm__churn *c)
{
	tlm__index_fini(&c->idx);
	free(c->ent);
	memset(c, 0, sizeof *c);
}

void tlm__churn_add(struct tlm__churn *c, int device, uint32_t stack, uint64_t size, uint64_t t)
{
	struct tlm__key k = {(uint64_t)(int64_t)device, stack, size};
	uint32_t v = tlm__index_get(&c->idx, &k);
	if (v != UINT32_MAX) {
		struct tlm__churn_ent *e = &c->ent[v];
		e->count++;
		if (t < e->first_t)
			e->first_t = t;
		if (t > e->last_t)
			e->last_t = t;
		return;
	}
	/* Sizes from one stack are normally few; the cap keeps memory bounded on
	 * a site that never repeats a size (those are not churn anyway). */
	if (c->n >= TLM__CHURN_MAX) {
		c->untracked++;
		return;
	}
	if (c->n == c->cap && tlm__grow(&c->ent, &c->cap, c->n + 1, sizeof *c->ent, 256)) {
		c->untracked++;
		return;
	}

	c->ent[c->n] = (struct tlm__churn_ent){k, 1, t, t};
	if (tlm__index_add(&c->idx, &k, (uint32_t)c->n)) {
		c->untracked++;
		return;
	}
	c->n++;
}

/* ---- survivors ------------------------------------------------------------ */

static int by_dev_stack(const void *a, const void *b)
{
	const struct tlm__live *x = *(const struct tlm__live *const *)a, *y = *(const struct tlm__live *const *)b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return 0;
}

/* Whether a live entry is counted at the allocated layer of its device: its
 * blocks where a tap reports them, else its driver allocations. */
static bool counted(const struct tlm__live *e, const struct tlm__accts *accts)
{
	if (e->mkind == 0xff)
		return false;
	for (size_t i = 0; i < accts->n; i++)
		if (accts->a[i].device == e->device && accts->a[i].mkind == e->mkind)
			return tlm__acct_counts(&accts->a[i], e);
	return e->ns != TLM_NS_BLOCK; /* no accounting yet: the driver layer */
}

void tlm__site_add(struct tlm_report_site *g, const struct tlm__live *e)
{
	g->bytes += e->size;
	g->count++;
	if ((int64_t)e->time_ns < g->first_ns)
		g->first_ns = (int64_t)e->time_ns;
	if ((int64_t)e->time_ns > g->last_ns)
		g->last_ns = (int64_t)e->time_ns;
}

int tlm__sites_group_live(const struct tlm__live_map *m, const struct tlm__accts *accts,
			  struct tlm_report_site **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	const struct tlm__live **v = malloc((m->count + 1) * sizeof *v);
	if (!v)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i <= m->mask; i++)
		if (m->slot[i].ns != TLM_NS_NONE && counted(&m->slot[i], accts))
			v[k++] = &m->slot[i];
	qsort(v, k, sizeof *v, by_dev_stack);
	struct tlm_report_site *s = calloc(k + 1, sizeof *s);
	if (!s) {
		free(v);
		return -1;
	}
	size_t ns = 0;
	for (size_t i = 0; i < k; i++) {
		const struct tlm__live *e = v[i];
		struct tlm_report_site *g = ns ? &s[ns - 1] : NULL;
		if (!g || g->device != e->device || g->stack_id != e->stack_id) {
			g = &s[ns++];
			g->device = e->device;
			g->stack_id = e->stack_id;
			g->first_ns = g->last_ns = (int64_t)e->time_ns;
		}
		tlm__site_add(g, e);
	}
	free(v);
	*out = s;
	*n = ns;
	return 0;
}

/* ---- the leak rule (docs/report.md, "Leaks") ------------------------------ */

bool tlm_report_is_leak(uint64_t count, int64_t first, int64_t last, int64_t run_first, int64_t run_end)
{
	if (count < 3 || run_end <= run_first || last <= first || last < run_first)
		return false;
	unsigned __int128 run = ((uint64_t)run_end - (uint64_t)run_first);
	unsigned __int128 span = ((uint64_t)last - (uint64_t)first);
	/* Differences in uint64_t: the true difference of two ordered int64_t
	 * always fits, and signed overflow on hostile times would be UB. */
	/* Spread over at least a quarter of the run: start-up allocations (model
	 * weights) are all made in a short burst. */
	if (4 * span < run)
		return false;
	/* Still growing in the second half: a site that stopped adding survivors
	 * early reached a steady state. */
	return 2 * (unsigned __int128)((uint64_t)last - (uint64_t)run_first) >= run;
}

/* Sites, most bytes first; then most allocations, lower device, lower stack. */
int tlm__site_by_bytes(const void *a, const void *b)
{
	const struct tlm_report_site *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}
