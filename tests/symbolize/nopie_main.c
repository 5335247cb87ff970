/* SPDX-License-Identifier: MIT */
/*
 * nopie_main.c - a non-PIE (ET_EXEC) program for test_symbols: runs the
 * fix_exe.c inline case and prints "ip inner_line outer_line base nseg
 * start end ..." for its own main-program module record.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"
#include "modmap.h"

static uint64_t captured;

static __attribute__((noinline)) void capture(void)
{
	captured = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	fix_exe_outer(capture);
	size_t n;
	struct tlm_rec_module *m = tlm_test_modmap(&n);
	const struct tlm_rec_module *me = m ? tlm_test_modmap_find(m, n, captured - 1) : NULL;
	if (!me)
		return 1;
	printf("%" PRIu64 " %d %d %" PRIu64 " %u", captured, fix_exe_line_inner, fix_exe_line_outer,
	       me->base, me->nseg);
	for (uint32_t i = 0; i < me->nseg; i++)
		printf(" %" PRIu64 " %" PRIu64, me->seg[i].start, me->seg[i].end);
	printf("\n");
	free(m);
	return 0;
}
