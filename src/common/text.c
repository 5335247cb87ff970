/* SPDX-License-Identifier: MIT */
/* text.c - untrusted strings shown safe on a terminal (text.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"

char *tlm_text_safe(char *s)
{
	for (char *p = s; *p; p++)
		if (!tlm_text_ok((unsigned char)*p))
			*p = '?';
	return s;
}

char *tlm_text_copy(char *dst, size_t n, const char *src)
{
	if (!n)
		return dst;
	size_t i = 0;
	for (; src && src[i] && i + 1 < n; i++)
		dst[i] = tlm_text_ok((unsigned char)src[i]) ? src[i] : '?';
	dst[i] = 0;
	return dst;
}

void tlm_text_put(FILE *f, const char *s)
{
	for (; s && *s; s++)
		putc(tlm_text_ok((unsigned char)*s) ? *s : '?', f);
}

size_t tlm_text_utf8(const unsigned char *p, size_t n, size_t *bad)
{
	*bad = 1;
	if (!n)
		return 0;
	if (p[0] < 0x80)
		return tlm_text_ok(p[0]) ? 1 : 0;
	size_t k;
	uint32_t c, min;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		k = 2, c = p[0] & 0x1fu, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		k = 3, c = p[0] & 0x0fu, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		k = 4, c = p[0] & 0x07u, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < k; i++) {
		if (i >= n || (p[i] & 0xc0) != 0x80) {
			*bad = i; /* the lead and the continuation bytes before the break */
			return 0;
		}
		c = c << 6 | (p[i] & 0x3fu);
	}
	/* an overlong form, a surrogate or past U+10FFFF: only its lead byte is
	 * bad (Unicode's maximal subpart: one replacement per byte, as the
	 * page's U+FFFD); a C1 control is well formed: one replacement */
	*bad = (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) ? 1 : k;
	if (*bad == 1 && k > 1)
		return 0;
	return c < 0xa0 ? 0 : k;
}

void tlm_text_line(FILE *f, const char *fmt, ...)
{
	char buf[1024], *s = buf;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf) {
		char *big = NULL;
		va_start(ap, fmt);
		int m = vasprintf(&big, fmt, ap);
		va_end(ap);
		if (m >= 0) {
			s = big;
			n = m;
		} else {
			n = (int)sizeof buf - 1; /* without memory: the text cut */
		}
	}
	size_t lead = strspn(fmt, "\n"), flen = strlen(fmt), len = (size_t)n;
	size_t trail = 0;
	while (trail < flen - lead && fmt[flen - 1 - trail] == '\n')
		trail++;
	if (lead > len)
		lead = len;
	if (trail > len - lead)
		trail = len - lead;
	fwrite(s, 1, lead, f);
	for (size_t i = lead; i < len - trail; i++)
		putc(tlm_text_ok((unsigned char)s[i]) ? s[i] : '?', f);
	fwrite(s + len - trail, 1, trail, f);
	if (s != buf)
		free(s);
}
