/* SPDX-License-Identifier: MIT */
/*
 * pytrie.c - the merged ids of a thread's Python stacks (pytrie.h).
 */
#include <string.h>

#include "recording/stack/pytrie.h"

void tlm__pytrie_reset(struct tlm__pytrie *t)
{
	memset(t->slot, 0, sizeof t->slot);
	memset(t->leaf, 0, sizeof t->leaf);
	memset(t->nd, 0, sizeof t->nd);
	t->nodes = 0;
	t->next_id = 0;
}

uint32_t tlm__pytrie_leaf(struct tlm__pytrie *t, uint32_t node, uint32_t native, bool *fresh)
{
	*fresh = false;
	if (!native) {
		if (!t->nd[node].id0) {
			if (t->next_id + 1 >= TLM__PY_STACKS)
				return 0;
			t->nd[node].id0 = ++t->next_id;
			*fresh = true;
		}
		return t->nd[node].id0;
	}
	uint32_t h = (uint32_t)(((uint64_t)node << 32 | native) * 0x9e3779b97f4a7c15ull >> 40);
	for (uint32_t i = h;; i++) {
		i &= TLM__PYTRIE_LEAVES - 1;
		if (t->leaf[i].id == 0) {
			if (t->next_id + 1 >= TLM__PY_STACKS)
				return 0; /* half the table at most: probes stay short */
			t->leaf[i].node = node;
			t->leaf[i].native = native;
			t->leaf[i].id = ++t->next_id;
			*fresh = true;
			return t->leaf[i].id;
		}
		if (t->leaf[i].node == node && t->leaf[i].native == native)
			return t->leaf[i].id;
	}
}
