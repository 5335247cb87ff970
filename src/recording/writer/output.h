/* SPDX-License-Identifier: MIT */
/*
 * output.h - where the trace goes.
 *
 * Contract: tlm__output_expand() turns the TLM_OUTPUT pattern into a path
 * (%p pid, %h host, %r rank from RANK or LOCAL_RANK (else 0), %% a percent).
 * tlm__output_create() creates it 0600 without following a symlink; when the
 * name exists already (a rerun, an exec'd image of the same pid) it picks
 * PATH.1, PATH.2, ... and says so; an existing character device (/dev/null)
 * is opened as it is. Returns an fd or -1 after one clear line.
 */
#ifndef TLM_OUTPUT_H
#define TLM_OUTPUT_H

#include <stddef.h>

#include "recording/defs.h"

int tlm__output_expand(const char *pattern, char *out, size_t outlen) TLM_HIDDEN;
int tlm__output_create(const char *path, char *final, size_t finallen) TLM_HIDDEN;

#endif
