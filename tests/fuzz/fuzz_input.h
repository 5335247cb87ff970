/* SPDX-License-Identifier: MIT */
/*
 * fuzz_input.h - shared by the fuzz harnesses: hands a fuzz input to code
 * that reads a trace by path (an in-memory file), and repairs the checksums
 * of an input so that mutations reach the record decoder instead of stopping
 * at the CRC of the header or of a chunk.
 */
#ifndef TLM_FUZZ_INPUT_H
#define TLM_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A harness's own check: names the file and line, then traps (a crash the
 * fuzzer keeps as a reproducer). */
#define FUZZ_CHECK(c)                                                                   \
	do {                                                                            \
		if (!(c)) {                                                             \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #c); \
			__builtin_trap();                                               \
		}                                                                       \
	} while (0)

/* Checks that s is one line of printable ASCII, NUL-terminated within n. */
void fuzz_check_line(const char *s, size_t n);
/* Checks that text (len bytes, UTF-8) reaches a terminal inert: no control
 * byte but newline and tab (C0, DEL), nor a C1 control (U+0080..U+009F),
 * which terminals also obey. */
void fuzz_check_inert_text(const char *text, size_t len);

/* Writes data to one in-memory file (reused across calls) and returns a path
 * that opens it ("/proc/self/fd/N"); aborts if no such file can be made. */
const char *fuzz_as_file(const uint8_t *data, size_t size);

/* Recomputes, in place, the header CRC and the CRC of every chunk that can be
 * walked from the header on (magic, length within the input). Returns how
 * many CRCs it changed. */
size_t fuzz_fix_crcs(uint8_t *b, size_t n);

/* Runs fn on the input as it is (mutations mostly hit a CRC: framing,
 * resynchronisation, truncation), then, when recomputing its checksums
 * changed any, on that repaired copy (mutations reach the decoder). */
void fuzz_as_is_and_repaired(const uint8_t *data, size_t size, void (*fn)(const uint8_t *, size_t));

#endif
