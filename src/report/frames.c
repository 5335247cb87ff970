/* SPDX-License-Identifier: MIT */
/*
 * frames.c - symbolization of the stacks a report prints, and only those:
 * resolved on first use at render time and cached per stack id. The module
 * map is fed to the symbolizer while streaming (cheap: it only records the
 * ranges); libdw work happens here, for a few dozen stacks at most.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_INLINE 16 /* frames one address may expand to */

static const struct tlm__key *fr_key(const void *ctx, uint32_t v)
{
	const struct tlm__report_priv *p = ctx;
	return &p->fr[v].key;
}

#ifdef TLM_REPORT_HAVE_SYM
static size_t sym_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	return tlm_sym_resolve(ctx, ip, out, max);
}
#endif

/* Without a symbolizer (a build without src/analysis) frames keep their
 * address only: unknown, never wrong. */
static size_t no_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	if (!max)
		return 0;
	memset(out, 0, sizeof *out);
	out->ip = ip;
	return 1;
}

int tlm__priv_init(struct tlm__report_priv *p)
{
	memset(p, 0, sizeof *p);
	if (tlm__stacks_init(&p->stacks))
		return -1;
	if (tlm__index_init(&p->fridx, fr_key, p)) {
		tlm__stacks_fini(&p->stacks);
		return -1;
	}
	p->fridx_ok = true;
	p->resolve = no_resolve;
#ifdef TLM_REPORT_HAVE_SYM
	p->sym = tlm_sym_new();
	if (p->sym) {
		p->resolve = sym_resolve;
		p->resolve_ctx = p->sym;
	}
#endif
	return 0;
}

void tlm__priv_fini(struct tlm__report_priv *p)
{
	for (size_t i = 0; i < p->nfr; i++)
		free(p->fr[i].f);
	free(p->fr);
	if (p->fridx_ok)
		tlm__index_fini(&p->fridx);
	tlm__stacks_fini(&p->stacks);
#ifdef TLM_REPORT_HAVE_SYM
	if (p->sym)
		tlm_sym_free(p->sym);
#endif
	memset(p, 0, sizeof *p);
}

void tlm__priv_module(struct tlm__report_priv *p, const struct tlm_rec_module *m)
{
#ifdef TLM_REPORT_HAVE_SYM
	if (p->sym)
		tlm_sym_module(p->sym, m);
#else
	(void)p;
	(void)m;
#endif
}

void tlm__priv_module_unload(struct tlm__report_priv *p, uint32_t id)
{
#ifdef TLM_REPORT_HAVE_SYM
	if (p->sym)
		tlm_sym_module_unload(p->sym, id);
#else
	(void)p;
	(void)id;
#endif
}

void tlm_report_set_resolver(struct tlm_report *r, tlm_report_resolver fn, void *ctx)
{
	struct tlm__report_priv *p = r->priv;
	for (size_t i = 0; i < p->nfr; i++)
		free(p->fr[i].f);
	p->nfr = 0;
	tlm__index_fini(&p->fridx);
	p->fridx_ok = tlm__index_init(&p->fridx, fr_key, p) == 0;
	p->resolve = fn ? fn : no_resolve;
	p->resolve_ctx = ctx;
}

static struct tlm_frame *resolve_stack(struct tlm__report_priv *p, uint32_t id, size_t *n)
{
	uint32_t depth;
	const uint64_t *ip = tlm__stacks_get(&p->stacks, id, &depth);
	*n = 0;
	if (!ip || !depth)
		return NULL;
	size_t cap = depth + 8;
	struct tlm_frame *f = malloc(cap * sizeof *f);
	if (!f)
		return NULL;
	struct tlm_frame tmp[MAX_INLINE];
	for (uint32_t i = 0; i < depth; i++) {
		size_t k = p->resolve(p->resolve_ctx, ip[i], tmp, MAX_INLINE);
		if (!k) { /* a resolver that broke its contract: keep the address */
			no_resolve(NULL, ip[i], tmp, 1);
			k = 1;
		}
		if (*n + k > cap) {
			cap = (*n + k) * 2;
			struct tlm_frame *g = realloc(f, cap * sizeof *g);
			if (!g)
				break;
			f = g;
		}
		memcpy(f + *n, tmp, k * sizeof *tmp);
		*n += k;
	}
	return f;
}

size_t tlm_report_frames(struct tlm_report *r, uint32_t stack_id, const struct tlm_frame **out)
{
	struct tlm__report_priv *p = r->priv;
	*out = NULL;
	if (!stack_id || !p->fridx_ok)
		return 0;
	struct tlm__key k = {stack_id, 0, 0};
	uint32_t v = tlm__index_get(&p->fridx, &k);
	if (v != UINT32_MAX) {
		*out = p->fr[v].f;
		return p->fr[v].n;
	}
	size_t n;
	struct tlm_frame *f = resolve_stack(p, stack_id, &n);
	if (p->nfr == p->capfr) {
		size_t cap = p->capfr ? p->capfr * 2 : 32;
		struct tlm__frames_ent *e = realloc(p->fr, cap * sizeof *e);
		if (!e) {
			free(f);
			return 0;
		}
		p->fr = e;
		p->capfr = cap;
	}
	p->fr[p->nfr] = (struct tlm__frames_ent){k, f, n};
	if (tlm__index_add(&p->fridx, &k, (uint32_t)p->nfr)) {
		free(f);
		return 0;
	}
	p->nfr++;
	*out = f;
	return n;
}

/* Libraries between the program and the device: a frame in one of them is
 * rarely where the user can change anything. */
static const char *const not_own[] = {
	"libcuda", "libcudart", "libtlm", "libnccl", "libcublas", "libc10",
	"libtorch", "libpython", "ld-linux", "libc.so",
};

static bool own_code(const struct tlm_frame *f)
{
	if (f->kind == TLM_FRAME_PYTHON)
		return true;
	if (!f->module)
		return false;
	const char *base = strrchr(f->module, '/');
	base = base ? base + 1 : f->module;
	for (size_t i = 0; i < sizeof not_own / sizeof not_own[0]; i++)
		if (!strncmp(base, not_own[i], strlen(not_own[i])))
			return false;
	return true;
}

const struct tlm_frame *tlm_report_useful_frame(struct tlm_report *r, uint32_t stack_id)
{
	const struct tlm_frame *f;
	size_t n = tlm_report_frames(r, stack_id, &f);
	for (size_t i = 0; i < n; i++)
		if (own_code(&f[i]))
			return &f[i];
	return n ? &f[0] : NULL;
}
