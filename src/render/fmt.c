/* SPDX-License-Identifier: MIT */
/* fmt.c - human units, time stamps and width-safe lines for the text output. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "common/text.h"
#include "render/render.h"

uint64_t tlm__clamp_u64(double v)
{
	if (!(v > 0)) /* also NaN */
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v;
}

char *tlm__human(char *buf, size_t n, uint64_t b)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)b;
	unsigned u = 0;
	/* Move up a unit when one decimal would round to 1024.0. */
	while (v >= 1023.95 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%" PRIu64 " B", b);
	else
		snprintf(buf, n, "%.1f %s", v, unit[u]);
	return buf;
}

void tlm__human_pair(char *xb, size_t nx, char *yb, size_t ny, uint64_t x, uint64_t y)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	tlm__human(xb, nx, x);
	tlm__human(yb, ny, y);
	if (x == y || strcmp(xb, yb))
		return;
	/* the unit of the larger, one more decimal at a time, then bytes */
	double big = (double)(x > y ? x : y), div = 1;
	unsigned u = 0;
	while (big / div >= 1023.95 && u < 6) {
		div *= 1024;
		u++;
	}
	for (int d = 2; d <= 4; d++) {
		snprintf(xb, nx, "%.*f %s", d, (double)x / div, unit[u]);
		snprintf(yb, ny, "%.*f %s", d, (double)y / div, unit[u]);
		if (strcmp(xb, yb))
			return;
	}
	snprintf(xb, nx, "%" PRIu64 " B", x);
	snprintf(yb, ny, "%" PRIu64 " B", y);
}

char *tlm__secs(char *buf, size_t n, int64_t ns)
{
	snprintf(buf, n, "%.3fs", (double)ns / 1e9);
	return buf;
}

const char *tlm__base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

static void put_clipped(FILE *f, char *s)
{
	size_t n = strlen(tlm_text_safe(s)); /* src/common/text.h: the one rule */
	/* Trailing spaces from padded columns are noise. */
	while (n && s[n - 1] == ' ')
		s[--n] = 0;
	if (n > TLM__WIDTH)
		memcpy(s + TLM__WIDTH - 3, "...", 4);
	fputs(s, f);
	fputc('\n', f);
}

void tlm__line(FILE *f, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	put_clipped(f, buf);
}

void tlm__command_line(FILE *f, const char *prefix, const char *path)
{
	fputs(prefix, f);
	int plain = *path != 0;
	for (const char *c = path; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-", *c))
			plain = 0;
	if (plain) {
		fputs(path, f);
	} else {
		fputc('\'', f);
		for (const char *c = path; *c; c++) {
			if (*c == '\'')
				fputs("'\\''", f);
			else
				fputc(tlm_text_ok((unsigned char)*c) ? *c : '?', f);
		}
		fputc('\'', f);
	}
	fputc('\n', f);
}

void tlm__frame_text(char *buf, size_t n, const struct tlm_frame *fr)
{
	char fn[96], loc[128] = "", mod[96] = "";
	if (fr->function)
		snprintf(fn, sizeof fn, "%s", fr->function);
	else
		snprintf(fn, sizeof fn, "0x%" PRIx64, fr->ip);
	if (fr->file && fr->line > 0)
		snprintf(loc, sizeof loc, " (%s:%d)", tlm__base(fr->file), fr->line);
	else if (fr->file)
		snprintf(loc, sizeof loc, " (%s)", tlm__base(fr->file));
	if (fr->module)
		snprintf(mod, sizeof mod, " [%s%s]", tlm__base(fr->module), fr->stale ? ", changed since the run" : "");
	else if (fr->stale)
		snprintf(mod, sizeof mod, " [module changed since the run]");
	snprintf(buf, n, "%s%s%s%s", fn, loc, mod, fr->inlined ? " (inlined)" : "");
}

void tlm__cupti_calls(char *buf, size_t n, const struct tlm_report *r)
{
	bool done[TLM_API_COUNT] = {false};
	size_t o = 0;
	buf[0] = 0;
	for (;;) { /* most frequent first, ties in API order */
		unsigned best = TLM_API_COUNT;
		for (unsigned a = 0; a < TLM_API_COUNT; a++)
			if (!done[a] && r->cupti_only_by_api[a] &&
			    (best == TLM_API_COUNT || r->cupti_only_by_api[a] > r->cupti_only_by_api[best]))
				best = a;
		if (best == TLM_API_COUNT || o + 1 >= n)
			return;
		done[best] = true;
		int k = snprintf(buf + o, n - o, "%s%s x%" PRIu64, o ? ", " : "", tlm_api_name(best),
				 r->cupti_only_by_api[best]);
		if (k < 0 || (size_t)k >= n - o) {
			buf[o] = 0;
			return;
		}
		o += (size_t)k;
	}
}

bool tlm__cupti_status(char *buf, size_t n, const char *state, const char *detail)
{
	static const struct {
		const char *state, *words;
		bool blind;
	} known[] = {
		{"attached", "CUPTI attached", false},
		{"held", "CUPTI held by another tool", true},
		{"absent", "CUPTI not found", true},
		{"unusable", "CUPTI unusable", true},
		{"off", "CUPTI off", true},
		{"skipped", "CUPTI not used", false},
	};
	if (!state[0]) {
		snprintf(buf, n, "CUPTI state not recorded (CUDA not initialised while recording, or an older tlm)");
		return false;
	}
	const char *words = NULL;
	bool blind = false;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcmp(state, known[i].state)) {
			words = known[i].words;
			blind = known[i].blind;
		}
	char head[64];
	if (!words) { /* a state from a newer tlm */
		snprintf(head, sizeof head, "CUPTI %s", state);
		words = head;
	}
	if (detail && detail[0])
		snprintf(buf, n, "%s (%s)", words, detail);
	else
		snprintf(buf, n, "%s", words);
	return blind;
}

bool tlm__native_stacks_off(const struct tlm_report *r)
{
	return !strncmp(r->native_stacks, "off", 3);
}

static void clip_copy(char *dst, size_t n, const char *src, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = 0;
}

void tlm__cupti_prop(const struct tlm_rec_prop *p, char *state, size_t ns, char *detail, size_t nd)
{
	if (!strcmp(p->key, "cupti"))
		clip_copy(state, ns, p->value, p->len);
	else if (!strcmp(p->key, "cupti.detail"))
		clip_copy(detail, nd, p->value, p->len);
}
