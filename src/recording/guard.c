/* SPDX-License-Identifier: MIT */
/* guard.c - whether the outermost hooked call is still there (guard.h). */
#include <signal.h>

#include "recording/guard.h"
#include "recording/recorder.h"

TLM_TLS struct tlm__guard *tlm__guard_top;
TLM_TLS uint64_t tlm__guard_serial;

bool tlm__guard_nested(struct tlm__guard *g)
{
	struct tlm__guard *o = tlm__guard_top;
	/* The stack grows down: a call made from inside o's real call runs below
	 * o's frame, which holds o's token until o returns. */
	if ((uintptr_t)g < (uintptr_t)o) {
		if (o->token == tlm__guard_serial)
			return true;
	} else {
		stack_t ss;
		if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
			return true; /* a signal handler on its own stack: inside whatever it interrupted */
	}
	/* o was left without returning: longjmp'd past, or its frame reused */
	tlm__guard_top = NULL;
	tlm__rec_abandon();
	return false;
}
