/* SPDX-License-Identifier: MIT */
/* guard.c - the nesting guard's per-thread state (guard.h). */
#include "recording/guard.h"

TLM_TLS unsigned tlm__depth;
