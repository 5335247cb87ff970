/* SPDX-License-Identifier: MIT */
/*
 * bench_sym.c - symbolizer throughput: bench_sym FILE [N]
 *
 * Records FILE as if loaded at 0x7f0000000000 (0 for ET_EXEC), resolves N
 * distinct random addresses in its executable segments and prints the time
 * of the first lookup (opening the file, loading DWARF), of the other N-1
 * (and of their second half, by when most CUs they touch are loaded), and
 * of a second pass (all cache hits).
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/symbols.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_sym FILE [N]\n");
		return 2;
	}
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 0) : 10000;
	/* TLM_BENCH_PRINT=1: one line per address, "pc frame;frame..." with each
	 * frame "function@file:line", to compare with addr2line -f -i. */
	const char *pr = getenv("TLM_BENCH_PRINT");
	bool print = pr && *pr == '1';
	elf_version(EV_CURRENT);
	int fd = open(argv[1], O_RDONLY);
	Elf *e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	size_t phnum;
	if (!e || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &phnum)) {
		fprintf(stderr, "bench_sym: %s: not an ELF file\n", argv[1]);
		return 1;
	}
	static struct tlm_rec_module m;
	m.id = 1;
	m.base = eh.e_type == ET_EXEC ? 0 : 0x7f0000000000ull;
	snprintf(m.path, sizeof m.path, "%s", argv[1]);
	uint64_t xs[TLM_MAX_SEGMENTS], xe[TLM_MAX_SEGMENTS], code = 0;
	size_t nx = 0;
	for (size_t i = 0; i < phnum && m.nseg < TLM_MAX_SEGMENTS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m.seg[m.nseg].start = m.base + ph.p_vaddr;
		m.seg[m.nseg].end = m.base + ph.p_vaddr + ph.p_memsz;
		if (ph.p_flags & PF_X) {
			xs[nx] = m.seg[m.nseg].start;
			xe[nx] = m.seg[m.nseg].end;
			code += ph.p_memsz;
			nx++;
		}
		m.nseg++;
	}
	elf_end(e);
	close(fd);
	if (!code || n == 0 || n > code) {
		fprintf(stderr, "bench_sym: no code to sample\n");
		return 1;
	}
	/* n distinct addresses, uniform over the code. */
	uint64_t *ip = malloc(n * sizeof *ip);
	srand(42);
	for (size_t k = 0; k < n;) {
		for (; k < n; k++) {
			uint64_t off = (((uint64_t)rand() << 31) ^ (uint64_t)rand()) % code;
			size_t j = 0;
			while (off >= xe[j] - xs[j])
				off -= xe[j] - xs[j], j++;
			ip[k] = xs[j] + off + 1;
		}
		qsort(ip, n, sizeof *ip, cmp_u64);
		size_t u = 1;
		for (size_t i = 1; i < n; i++)
			if (ip[i] != ip[u - 1])
				ip[u++] = ip[i];
		k = u;
	}
	for (size_t i = n; i > 1; i--) { /* unsorted, as stacks come */
		size_t j = (size_t)rand() % i;
		uint64_t t = ip[i - 1];
		ip[i - 1] = ip[j];
		ip[j] = t;
	}

	struct tlm_symbolizer *s = tlm_sym_new();
	tlm_sym_module(s, &m);
	struct tlm_frame f[64];
	size_t named = 0, lined = 0, frames = 0;
	double t0 = now();
	tlm_sym_resolve(s, ip[0], f, 64);
	double t1 = now(), th = t1;
	for (size_t i = 1; i < n; i++) {
		if (i == n / 2)
			th = now();
		size_t k = tlm_sym_resolve(s, ip[i], f, 64);
		frames += k;
		named += f[k - 1].function != NULL;
		lined += f[0].line > 0;
	}
	double t2 = now();
	for (size_t i = 0; i < n; i++)
		tlm_sym_resolve(s, ip[i], f, 64);
	double t3 = now();
	for (size_t i = 0; print && i < n; i++) {
		size_t k = tlm_sym_resolve(s, ip[i], f, 64);
		printf("%#llx", (unsigned long long)(f[0].module_offset - 1));
		for (size_t j = 0; j < k; j++) {
			const char *file = f[j].file ? strrchr(f[j].file, '/') : NULL;
			printf("%s%s@%s:%d", j ? ";" : " ", f[j].function ? f[j].function : "??",
			       file ? file + 1 : f[j].file ? f[j].file : "??", f[j].line);
		}
		printf("\n");
	}
	printf("%s: %.1f MB code, %zu addresses\n", argv[1], (double)code / 1e6, n);
	printf("first lookup (open + DWARF load): %8.3f ms\n", (t1 - t0) * 1e3);
	printf("next %zu lookups:               %8.3f ms (%.2f us each)\n", n - 1, (t2 - t1) * 1e3,
	       (t2 - t1) * 1e6 / (double)(n - 1));
	printf("  of which the second half:     %8.3f ms (%.2f us each: CUs loaded)\n", (t2 - th) * 1e3,
	       (t2 - th) * 1e6 / (double)(n - n / 2));
	printf("second pass (cached):           %8.3f ms\n", (t3 - t2) * 1e3);
	printf("with function: %zu, with line: %zu, frames: %zu (%.2f per address)\n", named, lined,
	       frames, (double)frames / (double)(n - 1));
	tlm_sym_free(s);
	free(ip);
	return 0;
}
