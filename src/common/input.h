/* SPDX-License-Identifier: MIT */
/*
 * input.h - opening a file that tlm reads but did not choose: a path from the
 * command line, a directory listing or a glob, or named inside another file
 * (a trace's modules and their debug links, a run's manifest).
 *
 * Contract: tlm_input_open() never blocks: the open is O_NONBLOCK (a FIFO
 * without a writer, a terminal or a device would wait in open(2)), then
 * fstat() decides: a regular file is kept; a pipe or FIFO only with
 * TLM_INPUT_PIPE (read as a stream: its reads wait for the writer, like
 * cat's, and end when it closes; a FIFO without a writer reads as empty);
 * anything else (directory, device, socket) is refused. O_NONBLOCK is then
 * cleared. On failure: -1, errno set, and why holds one line saying which
 * ("not a regular file (a FIFO)", "cannot open: Permission denied").
 */
#ifndef TLM_COMMON_INPUT_H
#define TLM_COMMON_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define TLM_INPUT_PIPE 0x1u /* a pipe or FIFO is read as a stream */

int tlm_input_open(const char *path, unsigned flags, char *why, size_t n);
/* The same as a stdio stream ("rb", close-on-exec). */
FILE *tlm_input_fopen(const char *path, unsigned flags, char *why, size_t n);
/* What a file of this mode is, in words ("a FIFO"); NULL for a regular file. */
const char *tlm_input_kind(mode_t mode);
/* Whether the open descriptor fd is a pipe or FIFO (read once, no seeking). */
bool tlm_input_is_pipe(int fd);

#endif
