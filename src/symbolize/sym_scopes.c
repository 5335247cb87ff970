/* SPDX-License-Identifier: MIT */
/* sym_scopes.c - per-CU sorted function ranges, then a descent (sym_scopes.h). */
#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_scopes.h"
#include "common/grow.h"

struct fn {
	Dwarf_Addr lo, hi; /* [lo, hi) */
	Dwarf_Die die;
};

struct cu_index {
	Dwarf_Off off; /* the CU DIE's offset: the key */
	bool used;
	struct fn *fns; /* sorted by lo */
	size_t n;
};

struct tlm__scopes {
	struct cu_index *tab; /* open addressing on off */
	size_t nslots, count;
};

/* Deeper nesting than this (namespaces in classes in namespaces...) is not
 * indexed; such functions go to the caller's exhaustive fallback. */
#define MAX_NEST 32

struct tlm__scopes *tlm__scopes_new(void)
{
	struct tlm__scopes *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	x->nslots = 64;
	x->tab = calloc(x->nslots, sizeof *x->tab);
	if (!x->tab) {
		free(x);
		return NULL;
	}
	return x;
}

void tlm__scopes_free(struct tlm__scopes *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nslots; i++)
		free(x->tab[i].fns);
	free(x->tab);
	free(x);
}

struct vec {
	struct fn *v;
	size_t n, cap;
	bool oom;
};

static void push(struct vec *v, Dwarf_Addr lo, Dwarf_Addr hi, const Dwarf_Die *die)
{
	if (v->n == v->cap && tlm__grow(&v->v, &v->cap, v->n + 1, sizeof *v->v, 64)) {
		v->oom = true;
		return;
	}

	v->v[v->n++] = (struct fn){.lo = lo, .hi = hi, .die = *die};
}

/* Concrete functions of a CU: its subprogram children with code, and those
 * nested in namespaces and types (C++). A function's own children are not
 * walked here: that is the expensive part, done per lookup in one function. */
static void collect(struct vec *v, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	if (dwarf_child(parent, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&c, off, &base, &lo, &hi)) > 0 && !v->oom)
				if (lo < hi)
					push(v, lo, hi, &c);
		} else if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			    tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
			    tag == DW_TAG_module) &&
			   depth < MAX_NEST && dwarf_haschildren(&c) > 0) {
			collect(v, &c, depth + 1);
		}
	} while (!v->oom && dwarf_siblingof(&c, &c) == 0);
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int grow(struct tlm__scopes *x)
{
	size_t n = x->nslots * 2;
	struct cu_index *t = calloc(n, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < x->nslots; i++) {
		if (!x->tab[i].used)
			continue;
		size_t j = (size_t)(x->tab[i].off * 0x9e3779b97f4a7c15ull >> 7) & (n - 1);
		while (t[j].used)
			j = (j + 1) & (n - 1);
		t[j] = x->tab[i];
	}
	free(x->tab);
	x->tab = t;
	x->nslots = n;
	return 0;
}

static struct cu_index *index_of(struct tlm__scopes *x, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	size_t mask = x->nslots - 1;
	size_t i = (size_t)(off * 0x9e3779b97f4a7c15ull >> 7) & mask;
	for (; x->tab[i].used; i = (i + 1) & mask)
		if (x->tab[i].off == off)
			return &x->tab[i];
	if ((x->count + 1) * 2 > x->nslots) {
		if (grow(x) < 0)
			return NULL;
		return index_of(x, cu); /* not there: inserts into the new table */
	}
	struct vec v = {0};
	collect(&v, cu, 0);
	if (v.oom) {
		free(v.v);
		return NULL;
	}
	qsort(v.v, v.n, sizeof *v.v, cmp_fn);
	x->tab[i] = (struct cu_index){.off = off, .used = true, .fns = v.v, .n = v.n};
	x->count++;
	return &x->tab[i];
}

/* Scopes that hold code at pc only when their ranges say so (libdw's
 * dwarf_getscopes prunes the same way); containers (namespaces, types) hold
 * no code themselves but may hold functions, so they are searched. */
static bool is_code_scope(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
	       tag == DW_TAG_catch_block || tag == DW_TAG_with_stmt;
}

static bool is_container(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
	       tag == DW_TAG_union_type || tag == DW_TAG_module;
}

struct search {
	Dwarf_Addr pc;
	Dwarf_Die *chain;
	int n, max;
};

/* Appends to s->chain the code scopes below parent that hold pc: a function
 * restarts the chain (a nested function is the real one), an inlined call
 * extends it, blocks are passed through. Returns whether one held pc. */
static bool search(struct search *s, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	if (depth > 4 * MAX_NEST || dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);
		if (is_code_scope(tag)) {
			if (dwarf_haspc(&c, s->pc) <= 0)
				continue;
			if (tag == DW_TAG_subprogram)
				s->n = 0;
			if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) && s->n < s->max)
				s->chain[s->n++] = c;
			search(s, &c, depth + 1);
			return true;
		}
		/* Types and namespaces (local classes too) may hold functions. */
		if (is_container(tag) && dwarf_haschildren(&c) > 0 && search(s, &c, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

int tlm__scopes_find(struct tlm__scopes *x, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max)
{
	if (max < 1)
		return 0;
	struct cu_index *ix = index_of(x, cu);
	if (!ix || !ix->n)
		return 0;
	/* The last function starting at or before pc. */
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->fns[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= ix->fns[lo - 1].hi)
		return 0;
	struct search s = {.pc = pc, .chain = chain, .max = max};
	chain[s.n++] = ix->fns[lo - 1].die;
	search(&s, &ix->fns[lo - 1].die, 0);
	return s.n;
}

int tlm__scopes_find_slow(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain, int max)
{
	if (max < 1)
		return 0;
	struct search s = {.pc = pc, .chain = chain, .max = max};
	search(&s, cu, 0);
	/* Inlined calls with no function around them: not a usable chain. */
	return s.n && dwarf_tag(&chain[0]) == DW_TAG_subprogram ? s.n : 0;
}
