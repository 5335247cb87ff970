/* SPDX-License-Identifier: MIT */
/*
 * frames.c - symbolization of the stacks a report prints, and only those:
 * resolved on first use at render time and cached per stack id. The module
 * map is fed to the symbolizer while streaming (cheap: it only records the
 * ranges); libdw work happens here, for a few dozen stacks at most.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "common/grow.h"

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

/* Without a symbolizer (a build without src/symbolize) frames keep their
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

static const struct tlm__key *py_key(const void *ctx, uint32_t v)
{
	const struct tlm__report_priv *p = ctx;
	return &p->py[v].key;
}

static const struct tlm__py_ent *py_of(const struct tlm__report_priv *p, uint32_t id);

static const struct tlm__key *canon_key(const void *ctx, uint32_t v)
{
	const struct tlm__report_priv *p = ctx;
	return &p->py[v].fkey;
}

#define MAX_STRING_ID (1u << 26) /* a crafted id must not make us allocate gigabytes */

int tlm__priv_string(struct tlm__report_priv *p, const struct tlm_rec_string *s)
{
	if (!s->id || s->id >= MAX_STRING_ID)
		return 0; /* ignored */
	if (s->id >= p->nstr) {
		size_t was = p->nstr;
		if (tlm__grow(&p->str, &p->nstr, (size_t)s->id + 1, sizeof *p->str, 256))
			return -1;
		memset(p->str + was, 0, (p->nstr - was) * sizeof *p->str);
	}
	char *old = p->str[s->id];
	if (old && !strcmp(old, s->s))
		return 0;
	if (old && tlm__grow(&p->retired, &p->capretired, p->nretired + 1, sizeof *p->retired, 16))
		return -1;
	char *c = strdup(s->s);
	if (!c)
		return -1;
	if (old) /* kept, not freed: resolved frames may name it (a damaged or crafted trace) */
		p->retired[p->nretired++] = old;
	p->str[s->id] = c;
	return 0;
}

int tlm__priv_pystack(struct tlm__report_priv *p, const struct tlm_rec_pystack *s)
{
	if (!p->pyidx_ok)
		return -1;
	if (tlm__grow(&p->pyf, &p->cappyf, p->npyf + s->depth, sizeof *p->pyf, 256) ||
	    tlm__grow(&p->py, &p->cappy, p->npy + 1, sizeof *p->py, 64))
		return -1;
	if (s->depth) /* a stack of no frames (a damaged trace) may have no array to copy */
		memcpy(p->pyf + p->npyf, s->f, s->depth * sizeof *s->f);
	uint64_t h = 1469598103934665603ull;
	for (uint32_t i = 0; i < s->depth; i++) {
		h = (h ^ s->f[i].file) * 1099511628211ull;
		h = (h ^ s->f[i].name) * 1099511628211ull;
		h = (h ^ (uint32_t)s->f[i].line) * 1099511628211ull;
	}
	struct tlm__key k = {s->id, 0, 0}, fk = {h, s->depth, 1};
	uint32_t canon = s->id;
	uint32_t c = s->depth ? tlm__index_get(&p->pycanon, &fk) : UINT32_MAX;
	if (c != UINT32_MAX && !memcmp(p->pyf + p->py[c].off, s->f, s->depth * sizeof *s->f))
		canon = p->py[c].canon;
	uint32_t v = tlm__index_get(&p->pyidx, &k);
	if (v != UINT32_MAX) { /* a redefinition: the latest wins */
		p->py[v].native = s->native;
		p->py[v].depth = s->depth;
		p->py[v].off = p->npyf;
		p->py[v].canon = s->id;
	} else {
		p->py[p->npy] = (struct tlm__py_ent){k, fk, s->native, s->depth, canon, p->npyf};
		if (tlm__index_add(&p->pyidx, &k, (uint32_t)p->npy))
			return -1;
		if (c == UINT32_MAX && s->depth && tlm__index_add(&p->pycanon, &fk, (uint32_t)p->npy))
			return -1;
		p->npy++;
	}
	p->npyf += s->depth;
	return 0;
}

uint32_t tlm__priv_canon(const struct tlm__report_priv *p, uint32_t id)
{
	const struct tlm__py_ent *e = py_of(p, id);
	return e ? e->canon : id;
}

uint32_t tlm__priv_native(const struct tlm__report_priv *p, uint32_t id)
{
	const struct tlm__py_ent *e = py_of(p, id);
	return e ? e->native : id;
}

void tlm_report_set_full_stacks(struct tlm_report *r, bool full)
{
	struct tlm__report_priv *p = r->priv;
	if (p->full_stacks == full)
		return;
	tlm_report_set_resolver(r, p->resolve, p->resolve_ctx); /* drops the frame cache */
	p->full_stacks = full;
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
	p->pyidx_ok = tlm__index_init(&p->pyidx, py_key, p) == 0;
	if (p->pyidx_ok && tlm__index_init(&p->pycanon, canon_key, p)) {
		tlm__index_fini(&p->pyidx);
		p->pyidx_ok = false;
	}
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
	for (size_t i = 0; i < p->nstr; i++)
		free(p->str[i]);
	free(p->str);
	for (size_t i = 0; i < p->nretired; i++)
		free(p->retired[i]);
	free(p->retired);
	free(p->py);
	free(p->pyf);
	if (p->pyidx_ok) {
		tlm__index_fini(&p->pyidx);
		tlm__index_fini(&p->pycanon);
	}
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

static const char *str_of(const struct tlm__report_priv *p, uint32_t id)
{
	return id < p->nstr ? p->str[id] : NULL;
}

/* A Python stack: its frames (innermost Python line first), then, with
 * full stacks or when it has no Python frame, those of its native stack. */
static const struct tlm__py_ent *py_of(const struct tlm__report_priv *p, uint32_t id)
{
	if (!p->pyidx_ok || !p->npy)
		return NULL;
	struct tlm__key k = {id, 0, 0};
	uint32_t v = tlm__index_get(&p->pyidx, &k);
	return v == UINT32_MAX ? NULL : &p->py[v];
}

/* The recorder's marker closing a Python stack cut at its frame limit: empty
 * file and name, line -1 (src/recording/stack/pystack.h, TLM__PY_CUT_LINE). */
static bool cut_marker(const struct tlm__report_priv *p, const struct tlm_py_frame *pf)
{
	const char *file = str_of(p, pf->file), *name = str_of(p, pf->name);
	return pf->line == -1 && file && !*file && name && !*name;
}

static struct tlm_frame *resolve_stack(struct tlm__report_priv *p, uint32_t id, size_t *n, bool *cut)
{
	uint32_t depth, npy = 0;
	const struct tlm__py_ent *py = py_of(p, id);
	*cut = false;
	if (py) {
		npy = py->depth;
		if (npy && cut_marker(p, &p->pyf[py->off + npy - 1])) {
			npy--;
			*cut = true;
		}
		id = npy && !p->full_stacks ? 0 : py->native;
	}
	const uint64_t *ip = id ? tlm__stacks_get(&p->stacks, id, &depth) : NULL;
	if (!ip)
		depth = 0;
	*n = 0;
	if (!depth && !npy)
		return NULL;
	size_t cap = depth + npy + 8;
	struct tlm_frame *f = malloc(cap * sizeof *f);
	if (!f)
		return NULL;
	for (uint32_t i = 0; i < npy; i++) {
		const struct tlm_py_frame *pf = &p->pyf[py->off + i];
		f[(*n)++] = (struct tlm_frame){.kind = TLM_FRAME_PYTHON, .function = str_of(p, pf->name),
					       .file = str_of(p, pf->file), .line = pf->line};
	}
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
	bool cut;
	struct tlm_frame *f = resolve_stack(p, stack_id, &n, &cut);
	if (p->nfr == p->capfr && tlm__grow(&p->fr, &p->capfr, p->nfr + 1, sizeof *p->fr, 32)) {
		free(f);
		return 0;
	}

	p->fr[p->nfr] = (struct tlm__frames_ent){k, f, n, cut};
	if (tlm__index_add(&p->fridx, &k, (uint32_t)p->nfr)) {
		free(f);
		return 0;
	}
	p->nfr++;
	*out = f;
	return n;
}

bool tlm_report_stack_cut(struct tlm_report *r, uint32_t stack_id)
{
	const struct tlm_frame *f;
	struct tlm__report_priv *p = r->priv;
	(void)tlm_report_frames(r, stack_id, &f); /* resolves and caches */
	struct tlm__key k = {stack_id, 0, 0};
	uint32_t v = stack_id && p->fridx_ok ? tlm__index_get(&p->fridx, &k) : UINT32_MAX;
	return v != UINT32_MAX && p->fr[v].cut;
}

/* Libraries between the program and the device: a frame in one of them is
 * rarely where the user can change anything. */
static const char *const not_own[] = {
	"libcuda", "libcudart", "libtlm", "libnccl", "libcublas", "libc10",
	"libtorch", "libpython", "ld-linux", "libc.so", "libcudnn", "libstdc++",
	"libgcc_s", "libm.so", "libpthread", "libnvrtc", "libcufft", "libcusparse",
	"libcusolver", "libcurand", "libnvJitLink", "libtriton",
};

bool tlm__frame_own(const struct tlm_frame *f)
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

/* A Python file of the interpreter's or of an installed package: not the
 * program's own (site-packages, dist-packages, the standard library,
 * frozen modules). */
static bool py_library(const char *file)
{
	if (!file || !*file)
		return true;
	if (file[0] == '<')
		return true; /* <frozen importlib._bootstrap>, <string> */
	if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
		return true;
	for (const char *p = file; (p = strstr(p, "/lib/python")); p++)
		if (p[11] >= '0' && p[11] <= '9')
			return true; /* .../lib/python3.X/...: the standard library */
	return false;
}

bool tlm__frame_user(const struct tlm_frame *f)
{
	if (f->kind == TLM_FRAME_PYTHON)
		return !py_library(f->file);
	return tlm__frame_own(f);
}

bool tlm__autograd_node(const struct tlm_frame *f, char *buf, size_t n)
{
	const char *fn = f->function;
	if (!fn || f->kind == TLM_FRAME_PYTHON)
		return false;
	/* torch::autograd::generated::ConvolutionBackward0::apply(...),
	 * ...::AddmmBackward0_apply_functional(...), torch::autograd::AccumulateGrad::apply */
	const char *e = strstr(fn, "::apply");
	const char *b = strstr(fn, "Backward");
	if (b && (!e || b < e)) {
		const char *x = b + 8;
		while (*x >= '0' && *x <= '9')
			x++;
		if (x == b + 8 || (strncmp(x, "::apply", 7) && strncmp(x, "_apply", 6)))
			return false;
		const char *s = b;
		while (s > fn && s[-1] != ':' && s[-1] != ' ')
			s--;
		snprintf(buf, n, "%.*s", (int)(x - s), s);
		return true;
	}
	if (e && strstr(fn, "torch::autograd::AccumulateGrad::apply") == fn) {
		snprintf(buf, n, "AccumulateGrad");
		return true;
	}
	return false;
}

/* The site's name: its first frame in the program's own files; else the
 * autograd node that made it (PyTorch's backward thread: native frames
 * only); else its first frame outside the libraries; else the first named
 * (symbolized) frame, never an address while a name is on the stack. */
const struct tlm_frame *tlm_report_useful_frame(struct tlm_report *r, uint32_t stack_id)
{
	const struct tlm_frame *f;
	size_t n = tlm_report_frames(r, stack_id, &f);
	char node[128];
	for (size_t i = 0; i < n; i++)
		if (tlm__frame_user(&f[i]) && f[i].function)
			return &f[i];
	for (size_t i = 0; i < n; i++)
		if (tlm__autograd_node(&f[i], node, sizeof node))
			return &f[i];
	for (size_t i = 0; i < n; i++)
		if (tlm__frame_own(&f[i]) && f[i].function)
			return &f[i];
	for (size_t i = 0; i < n; i++)
		if (f[i].function)
			return &f[i];
	return n ? &f[0] : NULL;
}
