// SPDX-License-Identifier: MIT
/*
 * The simulator's environment values, parsed: TLM_SIM_DEVICES (1..16),
 * TLM_SIM_MEMORY ("1G", "1G,512M": per-device sizes, rounded down to whole
 * 2 MiB pages, a short list repeating its last entry) and
 * TLM_SIM_CONTEXT_MEMORY (whole pages, 0 allowed). Pure functions; the
 * caller (sim_machine.c's attach) reports a bad value.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* One byte count: digits with an optional K/M/G suffix, at most SIM_MAX_MEMORY. */
static bool parse_bytes(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	size_t i = 0;
	if (n == 0 || !isdigit((unsigned char)s[0]))
		return false;
	for (; i < n && isdigit((unsigned char)s[i]); i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n) {
		switch (s[i]) {
		case 'k': case 'K': mul = 1ull << 10; break;
		case 'm': case 'M': mul = 1ull << 20; break;
		case 'g': case 'G': mul = 1ull << 30; break;
		default: return false;
		}
		if (++i != n)
			return false;
	}
	if (v > SIM_MAX_MEMORY / mul)
		return false;
	*out = v * mul;
	return true;
}

/* One device size, rounded down to whole pages (at least one). */
static bool parse_size(const char *s, size_t n, uint64_t *out)
{
	uint64_t v;
	if (!parse_bytes(s, n, &v) || v < SIM_PAGE)
		return false;
	*out = v / SIM_PAGE * SIM_PAGE;
	return true;
}

/* TLM_SIM_CONTEXT_MEMORY: whole pages, 0 allowed ("8M", "0", "64M"). A
 * value that is not a whole number of pages is refused rather than rounded:
 * the figure is meant to be exact. */
bool sim_parse_context_memory(const char *s, uint64_t *bytes)
{
	uint64_t v;
	if (!parse_bytes(s, strlen(s), &v) || v % SIM_PAGE)
		return false;
	*bytes = v;
	return true;
}

/* "1G" or "1G,512M": per-device sizes; a short list repeats its last entry. */
bool sim_parse_memory(const char *s, uint64_t bytes[SIM_MAX_DEVICES])
{
	int i = 0;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		if (i == SIM_MAX_DEVICES || !parse_size(s, n, &bytes[i]))
			return false;
		i++;
		if (!comma)
			break;
		s = comma + 1;
	}
	for (; i < SIM_MAX_DEVICES; i++)
		bytes[i] = bytes[i - 1];
	return true;
}

int sim_parse_devices(const char *s)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > SIM_MAX_DEVICES)
		return -1;
	return (int)v;
}

