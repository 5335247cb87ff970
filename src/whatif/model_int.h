/* SPDX-License-Identifier: MIT */
/*
 * model_int.h - the model's inner structures, shared by model.c (pools,
 * blocks, the malloc/free paths), model_expand.c (expandable segments) and
 * model_set.c (the ordered block sets and the address table).
 */
#ifndef TLM_WHATIF_MODEL_INT_H
#define TLM_WHATIF_MODEL_INT_H

#include "whatif/model.h"

struct wi_seg;

struct wi_block {
	uint64_t ptr, size, stream;
	struct wi_block *prev, *next; /* neighbours in the segment */
	struct wi_pool *pool;
	struct wi_seg *es;            /* the expandable segment, NULL for a cudaMalloc segment */
	int64_t gc_base;
	uint32_t reg;                 /* the segment's registration number (its age): split parts keep it */
	bool allocated, mapped;
};

/* Blocks ordered as std::set<Block*, Comparator> orders them. */
struct wi_set {
	struct wi_block **v;
	size_t n, cap;
	bool by_size;                 /* (stream, size, ptr), else (stream, ptr) */
	bool by_reg;                  /* by_size: (stream, size, reg, ptr), as newer PyTorch orders */
};

struct wi_pool {
	struct wi_set blocks;         /* cached free blocks, by (stream, size, ptr) */
	struct wi_set unmapped;       /* expandable segments' unmapped ranges, by (stream, ptr) */
	bool small;
	int64_t get_free_calls;       /* get_free_blocks_call_count */
};

/* An expandable segment: an address range mapped page by page. */
struct wi_seg {
	uint64_t base, page, npages;
	struct wi_seg *next_seg;
};

/* u64 -> nonzero u64 (the model: address -> allocated block; the replay:
 * trace address -> request index + 1) */
struct wi_table {
	uint64_t *key, *val;
	size_t cap, n;
};

struct tlm_wi_model {
	struct tlm_wi_settings s;
	struct tlm_wi_drv drv;
	uint64_t device_total, allowed_max;
	bool set_fraction;
	struct wi_pool small, large;
	struct wi_table active;
	struct wi_seg *segs;
	struct tlm_wi_stats st;
	bool peak_pending;
	bool sizes_rounded;           /* requests are recorded block sizes */
	uint32_t reg_counter;         /* segments made so far */
	uint64_t last_low;            /* the last malloc: the lowest request making its decision */
	bool nomem;                   /* the model itself ran out of memory */
};

/* model_set.c */
size_t tlm__wi_lower(const struct wi_set *s, uint64_t stream, uint64_t size, uint64_t ptr);
int tlm__wi_insert(struct wi_set *s, struct wi_block *b);
void tlm__wi_erase(struct wi_set *s, const struct wi_block *b);
void tlm__wi_set_free(struct wi_set *s);
int tlm__wi_table_put(struct wi_table *t, uint64_t key, uint64_t val);
uint64_t tlm__wi_table_take(struct wi_table *t, uint64_t key); /* 0: absent */
uint64_t tlm__wi_table_get(const struct wi_table *t, uint64_t key); /* 0: absent */
void tlm__wi_table_free(struct wi_table *t);

/* model.c, for model_expand.c */
struct wi_block *tlm__wi_block_new(struct tlm_wi_model *m, uint64_t ptr, uint64_t size, uint64_t stream,
				   struct wi_pool *pool);
size_t tlm__wi_try_merge(struct tlm_wi_model *m, struct wi_block *dst, struct wi_block *src);
void tlm__wi_insert_free(struct tlm_wi_model *m, struct wi_block *b);
void tlm__wi_reserved_add(struct tlm_wi_model *m, uint64_t bytes);
void tlm__wi_reserved_sub(struct tlm_wi_model *m, uint64_t bytes);

/* model_expand.c */
struct wi_block *tlm__wi_expand_alloc(struct tlm_wi_model *m, uint64_t stream, struct wi_pool *pool,
				      uint64_t size);
void tlm__wi_unmap_block(struct tlm_wi_model *m, struct wi_block *b);
void tlm__wi_release_segment(struct tlm_wi_model *m, struct wi_block *b);
void tlm__wi_segs_free(struct tlm_wi_model *m);

#endif
