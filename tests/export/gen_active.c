/* SPDX-License-Identifier: MIT */
/*
 * gen_active.c - the HTML report of a synthetic training-like run of N
 * allocations on device 0, for the active-memory timeline's browser test
 * and benchmark (tests/export/active_browser.py). Not a test by itself.
 *   gen_active N OUT.html [OUT.trace]
 * The run: 40 weights that stay live, then steps of 48 activations
 * allocated in turn and freed in reverse order (a forward and a backward
 * pass), each with a temporary freed at once, and one leaked buffer every
 * 50 steps, until N allocations were made. Prints "allocations A peak P
 * end_live L" (P: the highest total of live bytes, exact). With OUT.trace
 * the trace is kept there (to time other exports on it).
 */
#include <stdio.h>
#include <stdlib.h>

#include "render/export.h"
#include "analysis/report.h"
#include "../report/rt.h"

#define MiB (1ull << 20)
#define STACKS 200

static uint64_t addr_of(uint64_t i)
{
	return 0x7f0000000000ull + i * 64 * MiB; /* never reused: each allocation its own address */
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: gen_active N OUT.html [OUT.trace]\n");
		return 2;
	}
	uint64_t n = strtoull(argv[1], NULL, 10), made = 0, t = 1000, live = 0, peak = 0;
	struct rt *w = rt_open();
	for (uint32_t s = 1; s <= STACKS; s++) {
		uint64_t ip[8];
		for (int k = 0; k < 8; k++)
			ip[k] = 0x400000 + s * 0x100 + (uint64_t)k * 0x10000;
		rt_stack(w, s, ip, 8);
	}
#define ALLOC(sz, st)                                                                                          \
	do {                                                                                                   \
		rt_alloc(w, TLM_KIND_DEVICE, addr_of(made), (sz), t += 1000, (st), 0);                         \
		live += (sz);                                                                                  \
		if (live > peak)                                                                               \
			peak = live;                                                                           \
		made++;                                                                                        \
	} while (0)
	for (int i = 0; i < 40 && made < n; i++)
		ALLOC((uint64_t)(8 + i % 8) * MiB, 1 + (uint32_t)(i % 4));
	uint64_t step = 0, act[48], leaks = 0;
	while (made < n) {
		size_t na = 0;
		for (int l = 0; l < 48 && made < n; l++) {
			uint64_t sz = (uint64_t)(1 + (l * 7 + step) % 16) * MiB / 2;
			act[na++] = made;
			ALLOC(sz, 10 + (uint32_t)(l % 100));
			if (made < n) { /* a temporary, freed at once */
				ALLOC(256 * 1024, 150 + (uint32_t)(l % 40));
				rt_free(w, TLM_KIND_DEVICE, addr_of(made - 1), t += 1000, 0);
				live -= 256 * 1024;
			}
		}
		for (size_t k = na; k-- > 0;) {
			uint64_t i = act[k], sz = (uint64_t)(1 + ((int)k * 7 + step) % 16) * MiB / 2;
			rt_free(w, TLM_KIND_DEVICE, addr_of(i), t += 1000, 0);
			live -= sz;
		}
		if (step % 50 == 49 && made < n) {
			ALLOC(2 * MiB, 199);
			leaks++;
		}
		step++;
	}
	char *path = rt_close(w, true, t + 1000);
	struct tlm_report *r = rt_report(path);
	FILE *f = fopen(argv[2], "w");
	char err[256];
	if (!f || tlm_report_html(r, f, err, sizeof err) || fclose(f)) {
		fprintf(stderr, "gen_active: %s: cannot write the page\n", argv[2]);
		return 1;
	}
	printf("allocations %llu peak %llu end_live %llu\n", (unsigned long long)made, (unsigned long long)peak,
	       (unsigned long long)live);
	tlm_report_free(r);
	if (argc == 4 && rename(path, argv[3])) { /* another file system: copy */
		FILE *in = fopen(path, "rb"), *out = fopen(argv[3], "wb");
		char buf[65536];
		size_t k;
		while (in && out && (k = fread(buf, 1, sizeof buf, in)) > 0)
			fwrite(buf, 1, k, out);
		if (!in || !out || ferror(in) || fclose(out)) {
			fprintf(stderr, "gen_active: %s: cannot write the trace\n", argv[3]);
			return 1;
		}
		fclose(in);
	}
	remove(path);
	free(path);
	return 0;
}
