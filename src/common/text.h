/* SPDX-License-Identifier: MIT */
/*
 * text.h - the one rule for a string from a trace or a JSON input (host and
 * file names, commands, function names, settings, error text quoting them)
 * on its way to a terminal or a text report: every byte outside printable
 * ASCII is shown as '?'. That covers ESC and the C0 controls (CSI, OSC 52
 * clipboard writes, window titles, cursor moves), DEL, and every byte from
 * 0x80 on: C1 controls (0x9b is CSI on some terminals, and U+009B encodes as
 * 0xc2 0x9b) and so all of UTF-8: the text output promises one column per
 * byte. JSON, HTML and pickle outputs escape by their own rules
 * (src/encoders); this is for plain text.
 */
#ifndef TLM_COMMON_TEXT_H
#define TLM_COMMON_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Whether byte c is shown as itself. */
static inline bool tlm_text_ok(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}
/* s made safe in place; returns s. */
char *tlm_text_safe(char *s);
/* src (NULL: "") copied safe into dst of n bytes, cut to fit; returns dst. */
char *tlm_text_copy(char *dst, size_t n, const char *src);
/* s (NULL: nothing) written safe. */
void tlm_text_put(FILE *f, const char *s);
/* For data formats that keep UTF-8 (the folded stacks): the length of the
 * well-formed UTF-8 sequence of a printable character at p (of n bytes),
 * or 0 where the byte at p is to be shown as '?': C0 and C1 controls
 * (U+0080..U+009F), DEL, and ill-formed UTF-8 (overlong, surrogates,
 * beyond U+10FFFF, cut); *bad is then the bytes that one '?' stands for. */
size_t tlm_text_utf8(const unsigned char *p, size_t n, size_t *bad);
/* Text whose arguments come from a trace or an input file: formatted and
 * written safe. The newlines that begin and end the format itself are kept;
 * every other newline (from an argument) is shown as '?', so that a string
 * cannot start a line of its own. Never cut (tlm__line in src/render cuts
 * to the report width). */
void tlm_text_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
