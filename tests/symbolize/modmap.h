/* SPDX-License-Identifier: MIT */
/*
 * modmap.h - this process's loaded objects as MODULE records, built the way
 * the shim builds them (src/recording/writer/modules.c): base = dlpi_addr, PT_LOAD
 * ranges, GNU build-id from PT_NOTE, path ("" = /proc/self/exe).
 *
 * Contract: tlm_test_modmap() returns a calloc'd array of *n records (ids
 * from 1); tlm_test_modmap_find() the record whose segments hold addr.
 */
#ifndef TLM_TEST_MODMAP_H
#define TLM_TEST_MODMAP_H

#include <stddef.h>
#include <stdint.h>

#include "tlm/trace.h"

struct tlm_rec_module *tlm_test_modmap(size_t *n);
const struct tlm_rec_module *tlm_test_modmap_find(const struct tlm_rec_module *m, size_t n, uint64_t addr);

#endif
