/* SPDX-License-Identifier: MIT */
/*
 * reserved_table.c - address -> (size, device) of every live device
 * allocation, and the per-device reserved bytes they add up to (devmem.h).
 *
 * Two open-addressing tables (device addresses, VMM handles: separate name
 * spaces), mapped once with MAP_NORESERVE so that only the pages touched
 * cost memory. Lock-free: a slot's key is claimed by CAS (EMPTY or TOMB ->
 * address), its size written, then its meta published (release); a free,
 * before the real call, moves meta LIVE -> DEAD by CAS and the key to TOMB
 * (the slot is free before the driver can hand the address out again), and
 * only a failed call inserts the allocation again: the usual free settles
 * with no atomic after the call. Probes are bounded: an allocation that
 * finds no slot within them makes the counts unknown from then on, with
 * one line.
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include "recording/config.h"
#include "recording/log.h"
#include "recording/reserved_table.h"
#include "tlm/event.h"

#define EMPTY 0ull
#define TOMB UINT64_MAX
#define PROBES 128u

/* meta: bits 0-15 device, 16 counted, 17-18 state, 32-63 generation (a
 * claim's CAS cannot take a later tenant of the slot for the one it read) */
#define M_COUNTED (1ull << 16)
#define M_STATE(m) (((m) >> 17) & 3u)
#define M_SET(m, s) (((m) & ~(3ull << 17)) | ((uint64_t)(s) << 17))
enum { S_NONE = 0, S_LIVE = 1, S_DEAD = 3 };

struct ent {
	_Atomic uint64_t key;
	_Atomic uint64_t meta;
	_Atomic uint64_t size;
};

struct table {
	struct ent *e;
	uint64_t mask;
	unsigned bits;
};

static struct table tabs[2];               /* [0] device addresses, [1] VMM handles */
static const unsigned tab_bits[2] = {19, 16}; /* 12 MiB and 1.5 MiB of address space */
static _Atomic uint64_t reserved[TLM__DM_DEVS];
/* Generations are taken by each thread in blocks (one shared atomic per
 * GEN_BLOCK allocations, not one per allocation). A signal handler's
 * allocation between the load and the store of t_gen can share its
 * interrupted call's generation: two allocations, two addresses, so two
 * slots; the generation tells apart only successive tenants of one slot. */
#define GEN_BLOCK 4096u
static _Atomic uint32_t gen_next = GEN_BLOCK;
static TLM_TLS uint32_t t_gen, t_gen_end;
static atomic_bool inexact, mapped;

void tlm__rt_init(void)
{
	if (atomic_load(&mapped))
		return;
	for (int i = 0; i < 2; i++) {
		unsigned bits = tab_bits[i];
		if (tlm__cfg.table_slots) /* tests: a small table fills up */
			bits = (unsigned)__builtin_ctz(tlm__cfg.table_slots);
		size_t n = (size_t)1 << bits;
		void *p = mmap(NULL, n * sizeof(struct ent), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			tlm__log("no memory for the table of live device allocations: the reserved-memory peaks "
				 "are not sampled, and frees name the device the driver gives");
			atomic_store(&inexact, true);
			return;
		}
		tabs[i] = (struct table){p, n - 1, bits};
	}
	atomic_store_explicit(&mapped, true, memory_order_release);
}

/* Which table an event kind's addresses live in (their namespace, tlm/event.h), or -1. */
static int ns_of(unsigned kind)
{
	enum tlm_ns ns = tlm_kind_ns(kind);
	return ns == TLM_NS_DEVVA ? 0 : ns == TLM_NS_VMM_PHYS ? 1 : -1;
}

static inline uint64_t hash(const struct table *t, uint64_t addr)
{
	return ((addr >> 8) * 0x9E3779B97F4A7C15ull) >> (64 - t->bits);
}

static void count(int16_t device, bool add, uint64_t bytes)
{
	if (device < 0 || device >= TLM__DM_DEVS)
		return;
	if (add)
		atomic_fetch_add_explicit(&reserved[device], bytes, memory_order_relaxed);
	else
		atomic_fetch_sub_explicit(&reserved[device], bytes, memory_order_relaxed);
}

static void lost_track(void)
{
	if (!atomic_exchange(&inexact, true))
		tlm__log("more than %u live device allocations hash alike or the table of live allocations is "
			 "full: the reserved-memory peaks are no longer sampled (the events stay complete)",
			 PROBES);
}

/* Tracks addr in table ns; *after as tlm__rt_insert's. A live tenant of
 * addr is replaced, or, with !replace, kept (and nothing inserted). */
static bool insert(int ns, uint64_t addr, uint64_t size, int16_t device, bool counted, bool replace,
		   uint64_t *after)
{
	const struct table *t = &tabs[ns];
	if (TLM_UNLIKELY(t_gen == t_gen_end)) {
		t_gen = atomic_fetch_add_explicit(&gen_next, GEN_BLOCK, memory_order_relaxed);
		t_gen_end = t_gen + GEN_BLOCK;
	}
	uint64_t meta = (uint64_t)(uint16_t)device | (counted ? M_COUNTED : 0) | (uint64_t)S_LIVE << 17 |
			(uint64_t)t_gen++ << 32;
	uint64_t h = hash(t, addr);
	for (int attempt = 0; attempt < 4; attempt++) {
		struct ent *free_slot = NULL;
		uint64_t free_key = 0;
		for (unsigned i = 0; i < PROBES; i++) {
			struct ent *e = &t->e[(h + i) & t->mask];
			uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
			if (k == EMPTY || k == TOMB) {
				if (!free_slot)
					free_slot = e, free_key = k;
				if (k == EMPTY)
					break;
				continue;
			}
			if (k != addr)
				continue;
			uint64_t m = atomic_load_explicit(&e->meta, memory_order_acquire);
			if (M_STATE(m) != S_LIVE)
				continue; /* being freed or published: not a tenant to replace */
			if (!replace)
				return false;
			if (!atomic_compare_exchange_strong(&e->meta, &m, meta))
				continue;
			/* a live one never seen freed (the report takes it as freed) */
			uint64_t old = atomic_exchange_explicit(&e->size, size, memory_order_relaxed);
			if (m & M_COUNTED)
				count((int16_t)(uint16_t)m, false, old);
			goto counted;
		}
		if (!free_slot)
			break;
		if (!atomic_compare_exchange_strong(&free_slot->key, &free_key, addr))
			continue; /* another allocation took it: probe again */
		atomic_store_explicit(&free_slot->size, size, memory_order_relaxed);
		atomic_store_explicit(&free_slot->meta, meta, memory_order_release);
		goto counted;
	}
	lost_track();
	return false;
counted:
	if (counted && device >= 0 && device < TLM__DM_DEVS)
		*after = atomic_fetch_add_explicit(&reserved[device], size, memory_order_relaxed) + size;
	return true;
}

bool tlm__rt_insert(unsigned kind, uint64_t addr, uint64_t size, int16_t device, uint64_t *after)
{
	int ns = ns_of(kind);
	*after = 0;
	if (ns < 0 || addr == EMPTY || addr == TOMB || !atomic_load_explicit(&mapped, memory_order_acquire))
		return false;
	return insert(ns, addr, size, device, kind != TLM_KIND_MANAGED, true, after);
}

bool tlm__rt_claim(unsigned kind, uint64_t addr, struct tlm__rt_claim *c)
{
	int ns = ns_of(kind);
	c->slot = -1;
	if (ns < 0 || addr == EMPTY || addr == TOMB || !atomic_load_explicit(&mapped, memory_order_acquire))
		return false;
	const struct table *t = &tabs[ns];
	uint64_t h = hash(t, addr);
	for (unsigned i = 0; i < PROBES; i++) {
		uint64_t idx = (h + i) & t->mask;
		struct ent *e = &t->e[idx];
		uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
		if (k == EMPTY)
			return false;
		if (k != addr)
			continue;
		uint64_t m = atomic_load_explicit(&e->meta, memory_order_acquire);
		if (M_STATE(m) != S_LIVE || !atomic_compare_exchange_strong(&e->meta, &m, M_SET(m, S_DEAD)))
			continue;
		*c = (struct tlm__rt_claim){
			.slot = (int32_t)idx, .ns = (uint8_t)ns, .counted = (m & M_COUNTED) != 0,
			.device = (int16_t)(uint16_t)m, .addr = addr,
			.size = atomic_load_explicit(&e->size, memory_order_relaxed),
		};
		/* ours alone since the CAS (no insert replaces a DEAD tenant) */
		atomic_store_explicit(&e->key, TOMB, memory_order_release);
		if (c->counted)
			count(c->device, false, c->size);
		return true;
	}
	return false;
}

void tlm__rt_settle(const struct tlm__rt_claim *c, bool freed)
{
	if (c->slot < 0 || freed)
		return;
	/* the free failed (or was left unfinished, recorder.h): tracked and
	 * counted again, unless the address came back to a new allocation */
	uint64_t after;
	(void)insert(c->ns, c->addr, c->size, c->device, c->counted, false, &after);
}

uint64_t tlm__rt_reserved(int device)
{
	return device >= 0 && device < TLM__DM_DEVS ? atomic_load_explicit(&reserved[device], memory_order_relaxed) : 0;
}

bool tlm__rt_exact(void)
{
	return !atomic_load_explicit(&inexact, memory_order_relaxed);
}
