// SPDX-License-Identifier: MIT
/*
 * The simulator's environment values, parsed: TLM_SIM_DEVICES (1..16) and
 * TLM_SIM_MEMORY ("1G", "1G,512M": per-device sizes, rounded down to whole
 * 2 MiB pages, a short list repeating its last entry). Pure functions; the
 * caller (sim_state.c's configure) reports a bad value.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* One size: digits with an optional K/M/G suffix, rounded down to whole pages. */
static bool parse_size(const char *s, size_t n, uint64_t *out)
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
	v = v * mul / SIM_PAGE * SIM_PAGE;
	if (v == 0)
		return false;
	*out = v;
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

