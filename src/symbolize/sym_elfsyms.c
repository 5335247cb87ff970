/* SPDX-License-Identifier: MIT */
/* sym_elfsyms.c - a sorted array of function symbols (sym_elfsyms.h). */
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_elfsyms.h"

struct esym {
	uint64_t lo, size;
	const char *name;
	int rank; /* lower is better among aliases */
};

struct tlm__elfsyms {
	struct esym *v; /* sorted by lo, then rank; one entry per address */
	size_t n;
};

/* How far back to look for a sized symbol that holds addr when the nearest
 * one does not (a local label symbol inside a bigger function). */
#define LOOKBACK 16

static int rank_of(const GElf_Sym *s, const char *name)
{
	int b = GELF_ST_BIND(s->st_info);
	int r = b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2;
	int u = 0;
	while (name[u] == '_' && u < 8)
		u++;
	return r * 16 + u;
}

static int cmp_esym(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;
	if (x->lo != y->lo)
		return (x->lo > y->lo) - (x->lo < y->lo);
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->size < y->size) - (x->size > y->size); /* the sized alias first */
}

struct tlm__elfsyms *tlm__elfsyms_new(Dwfl_Module *mod)
{
	struct tlm__elfsyms *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	int nsyms = dwfl_module_getsymtab(mod);
	if (nsyms <= 0)
		return x; /* no symbols: every lookup answers NULL */
	x->v = malloc((size_t)nsyms * sizeof *x->v);
	if (!x->v) {
		free(x);
		return NULL;
	}
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || (type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == SHN_UNDEF)
			continue;
		x->v[x->n++] = (struct esym){.lo = addr, .size = sym.st_size, .name = name,
					     .rank = rank_of(&sym, name)};
	}
	qsort(x->v, x->n, sizeof *x->v, cmp_esym);
	/* Keep the best alias of each address. */
	size_t u = 0;
	for (size_t i = 0; i < x->n; i++)
		if (!u || x->v[i].lo != x->v[u - 1].lo)
			x->v[u++] = x->v[i];
	x->n = u;
	return x;
}

void tlm__elfsyms_free(struct tlm__elfsyms *x)
{
	if (!x)
		return;
	free(x->v);
	free(x);
}

const char *tlm__elfsyms_find(const struct tlm__elfsyms *x, uint64_t addr, bool *inside)
{
	*inside = false;
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct esym *near = &x->v[lo - 1];
	for (size_t i = lo, k = 0; i-- > 0 && k < LOOKBACK; k++) {
		const struct esym *e = &x->v[i];
		if (e->size && addr - e->lo < e->size) {
			*inside = true;
			return e->name;
		}
	}
	return near->size == 0 ? near->name : NULL;
}
