/* SPDX-License-Identifier: MIT */
/*
 * symt.h - what the symbolizer tests share: return addresses captured in the
 * fixture, this process's module map (read by symt_setup, the group set-up),
 * a symbolizer fed all of it, and the checks of one resolved frame.
 */
#ifndef TLM_TESTS_SYMT_H
#define TLM_TESTS_SYMT_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolize/symbols.h"
#include "fixture.h"
#include "modmap.h"

extern uint64_t captured;              /* the last return address captured */
uint64_t ip_of(void (*f)(fix_cb));     /* a return address inside fixture function f */
struct tlm_symbolizer *sym_all(void); /* fed this process's whole module map */
const struct tlm_rec_module *mod_of(uint64_t ip);
const char *base_name(const char *p);
void expect_frame(const struct tlm_frame *f, const char *fn, const char *file, int line, bool inlined);
void expect_module(const struct tlm_frame *f, uint64_t ip, const struct tlm_rec_module *m);
int symt_setup(void **state);          /* the module map; no debuginfod */
int symt_teardown(void **state);

#endif
