/* SPDX-License-Identifier: MIT */
/*
 * replay_int.h - the replay's inner pieces: what trace_in.c takes out of a
 * trace (per device, the allocator's requests in order and, for the check,
 * its driver calls), and the simulated device of sim_drv.c that the model
 * takes memory from during a replay.
 */
#ifndef TLM_WHATIF_REPLAY_INT_H
#define TLM_WHATIF_REPLAY_INT_H

#include "whatif/model_int.h"

#define WI_PAGE (2ull << 20) /* the driver's allocation granularity */

/* A request of the program, or another user of the device's memory. */
enum wi_op_type {
	WI_ALLOC = 1,   /* a block: size = the recorded block size */
	WI_FREE,        /* partner = index of its WI_ALLOC */
	WI_OOM,         /* the allocator failed: size = the rounded request */
	WI_FALLOC,      /* memory taken from the driver by others (NCCL, cuBLAS, ...) */
	WI_FFREE,       /* partner = index of its WI_FALLOC */
	WI_EMPTY,       /* torch.cuda.empty_cache(); size 1: or garbage collection (ambiguous), 2: sure */
};

struct wi_op {
	uint64_t t;          /* ns from the trace's start */
	uint64_t addr, size; /* as recorded */
	uint64_t allocated, reserved; /* the allocator's totals after it (block ops) */
	uint64_t partner;
	uint8_t type;
	uint32_t stack;      /* WI_ALLOC: the trace's stack id (0 none) */
};

/* An allocator's driver call, for the check. at = block ops before it. */
enum wi_dev_what {
	WI_SEG_ALLOC = 1, WI_SEG_FREE, WI_SEG_FAIL, WI_RESERVE, WI_RESERVE_FREE, WI_MAP, WI_UNMAP, WI_CREATE_FAIL,
};

struct wi_devev {
	uint64_t at, addr, size;
	uint8_t what;
};

struct wi_dev {
	int device;
	struct wi_op *op;
	size_t nop, capop;
	struct wi_devev *ev;
	size_t nev, capev;
	uint64_t memory;         /* bytes the process could take (driver usage + free at a failure): 0 = unknown */
	uint64_t sampled;        /* the same at libtlm's device memory samples, the least: 0 = none */
	uint64_t total;          /* the device's size (the trace's device.N.memory): 0 = unknown */
	uint64_t va_base;
	uint64_t reserve_min;    /* the smallest address range reserved for an expandable segment */
	bool totals;             /* block events carried the allocator's totals */
	bool vmm;                /* the allocator used expandable segments */
	uint64_t nalloc, nfree, nooms;
	uint64_t peak_reserved, peak_allocated;
};

struct wi_trace {
	struct wi_dev *dev;
	size_t ndev;
	char conf[256];
	bool has_conf;
	bool async_allocs;       /* cudaMallocAsync calls were seen */
};

int tlm__wi_trace_read(const char *path, struct wi_trace *t, char *err, size_t errlen);
void tlm__wi_trace_free(struct wi_trace *t);
int tlm__wi_push_ev(struct wi_devev **v, size_t *n, size_t *cap, const struct wi_devev *e);

/* requests.c: request sizes seen exact so far, for the guess of a request
 * that got a larger block whole. */
struct wi_size_seen {
	uint64_t size;
	uint32_t count;
};
#define WI_SITE_SIZES 8
struct wi_site {
	uint32_t stack;                  /* 0: a free slot */
	uint32_t next;                   /* where the next size goes in sizes[] */
	uint64_t sizes[WI_SITE_SIZES];   /* the last exact sizes at this stack */
};
struct wi_sizes {
	struct wi_size_seen *v;
	size_t n, cap;
	struct wi_site *site;            /* open addressing by stack id */
	size_t nsite, capsite;
};
void tlm__wi_sizes_seen(struct wi_sizes *s, uint64_t size, uint32_t stack);
/* The last exact size at the same stack in [low, size], else the one in
 * [low, size] seen most often (ties: the larger), else size. */
uint64_t tlm__wi_sizes_guess(const struct wi_sizes *s, uint64_t low, uint64_t size, uint32_t stack);
void tlm__wi_sizes_free(struct wi_sizes *s);

/* The simulated device. */
struct wi_range {
	uint64_t start, end;
};

struct wi_sim {
	uint64_t cap_pages;      /* 0 = unlimited */
	uint64_t used_pages;
	uint64_t va_base;
	struct wi_range *live;
	size_t nlive, caplive;
	/* the recorded run's addresses, taken in order while sizes agree */
	const struct wi_devev *oracle;
	size_t noracle, next_seg, next_res;
	/* the log of calls, for the check (NULL: not kept) */
	bool keep_log;
	struct wi_devev *log;
	size_t nlog, caplog;
	uint64_t at;
	bool nomem;
};

void tlm__wi_sim_init(struct wi_sim *s, uint64_t memory, uint64_t va_base);
void tlm__wi_sim_drv(struct wi_sim *s, struct tlm_wi_drv *d);
/* Others' memory: 0 ok (*addr), -1 no room. */
int tlm__wi_sim_take(struct wi_sim *s, uint64_t size, uint64_t *addr);
void tlm__wi_sim_give(struct wi_sim *s, uint64_t addr, uint64_t size);
uint64_t tlm__wi_sim_free_bytes(const struct wi_sim *s);
void tlm__wi_sim_fini(struct wi_sim *s);

#endif
