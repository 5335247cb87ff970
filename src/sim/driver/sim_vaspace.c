// SPDX-License-Identifier: MIT
/* First-fit lowest-address VA allocator over a treap of free ranges. */
#include "sim_vaspace.h"

void sim_vas_init(struct sim_vaspace *v, uint64_t base, uint64_t size)
{
	v->base = base;
	v->size = size;
	v->free.root = NULL;
	v->free.count = 0;
	v->free.rng = (uint32_t)(base >> 20) | 1u;
	sim_tree_insert(&v->free, base, size, 0);
}

bool sim_vas_contains(const struct sim_vaspace *v, uint64_t addr, uint64_t len)
{
	return addr >= v->base && len <= v->size && addr - v->base <= v->size - len;
}

/* The free range holding [addr, addr+len), or NULL. */
static struct sim_node *holder(const struct sim_vaspace *v, uint64_t addr, uint64_t len)
{
	struct sim_node *n = sim_tree_floor(&v->free, addr);
	if (!n || addr - n->key > n->len || n->len - (addr - n->key) < len)
		return NULL;
	return n;
}

/* Carve [addr, addr+len) out of the free range n that holds it. */
static bool take(struct sim_vaspace *v, struct sim_node *n, uint64_t addr, uint64_t len)
{
	uint64_t start = n->key, end = n->key + n->len;
	sim_tree_remove(&v->free, start, NULL, NULL);
	if (addr > start && !sim_tree_insert(&v->free, start, addr - start, 0))
		return false;
	if (addr + len < end && !sim_tree_insert(&v->free, addr + len, end - addr - len, 0))
		return false;
	return true;
}

bool sim_vas_alloc(struct sim_vaspace *v, uint64_t len, uint64_t align, uint64_t hint,
		   uint64_t *out)
{
	struct sim_node *n = NULL;
	uint64_t addr;
	if (!align)
		align = 1;
	if (len == 0 || (align & (align - 1)))
		return false;
	if (hint && !(hint & (align - 1)) && sim_vas_contains(v, hint, len) &&
	    (n = holder(v, hint, len)) != NULL) {
		addr = hint;
	} else {
		n = sim_tree_first_fit(&v->free, len, align);
		if (!n)
			return false;
		addr = (n->key + align - 1) & ~(align - 1);
	}
	if (!take(v, n, addr, len))
		return false;
	*out = addr;
	return true;
}

bool sim_vas_release(struct sim_vaspace *v, uint64_t addr, uint64_t len)
{
	struct sim_node *pred, *succ;
	if (!sim_vas_contains(v, addr, len))
		return false;
	pred = sim_tree_floor(&v->free, addr);
	if (pred && pred->key + pred->len > addr)
		return false; /* overlaps a free range: double release */
	succ = sim_tree_ceil(&v->free, addr);
	if (succ && succ->key < addr + len)
		return false;
	if (pred && pred->key + pred->len == addr) {
		addr = pred->key;
		len += pred->len;
		sim_tree_remove(&v->free, pred->key, NULL, NULL);
	}
	if (succ && succ->key == addr + len) {
		uint64_t slen = succ->len;
		sim_tree_remove(&v->free, succ->key, NULL, NULL);
		len += slen;
	}
	return sim_tree_insert(&v->free, addr, len, 0);
}
