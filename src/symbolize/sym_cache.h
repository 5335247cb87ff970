/* SPDX-License-Identifier: MIT */
/*
 * sym_cache.h - resolved frames per stack address.
 *
 * Contract: tlm__symcache_put() stores a copy of the n frames resolved for ip;
 * tlm__symcache_get() finds them again (the pointer is valid until the next
 * put or clear). Frames point to interned strings, so copying them is
 * enough. A stack address is resolved once per symbolizer, whatever the
 * number of events that share it: memory grows with distinct addresses.
 * tlm__symcache_clear() forgets everything (a new module changes answers).
 */
#ifndef TLM_SYM_CACHE_H
#define TLM_SYM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/symbols.h"

struct tlm__symcache;

struct tlm__symcache *tlm__symcache_new(void);
void tlm__symcache_free(struct tlm__symcache *c);
const struct tlm_frame *tlm__symcache_get(const struct tlm__symcache *c, uint64_t ip, size_t *n);
/* 0, or -1 when memory runs out (the cache is then left as it was). */
int tlm__symcache_put(struct tlm__symcache *c, uint64_t ip, const struct tlm_frame *f, size_t n);
void tlm__symcache_clear(struct tlm__symcache *c);

#endif
