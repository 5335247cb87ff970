/* SPDX-License-Identifier: MIT */
/* modmap.c - dl_iterate_phdr into MODULE records (test side, see modmap.h). */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "modmap.h"

#define MAX_MODS 512

struct acc {
	struct tlm_rec_module *m;
	size_t n;
};

static void note_build_id(const struct dl_phdr_info *info, struct tlm_rec_module *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_NOTE)
			continue;
		const char *n = (const char *)(info->dlpi_addr + p->p_vaddr), *end = n + p->p_memsz;
		while (n + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)n;
			const char *name = n + sizeof *nh;
			const char *desc = name + ((nh->n_namesz + 3) & ~3u);
			const char *next = desc + ((nh->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nh->n_descsz <= sizeof m->build_id) {
				memcpy(m->build_id, desc, nh->n_descsz);
				m->build_id_len = nh->n_descsz;
				return;
			}
			n = next;
		}
	}
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct acc *a = arg;
	if (a->n == MAX_MODS)
		return 1;
	struct tlm_rec_module *m = &a->m[a->n];
	m->id = (uint32_t)++a->n;
	m->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && m->nseg < TLM_MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		m->seg[m->nseg].start = info->dlpi_addr + p->p_vaddr;
		m->seg[m->nseg].end = info->dlpi_addr + p->p_vaddr + p->p_memsz;
		m->nseg++;
	}
	note_build_id(info, m);
	if (info->dlpi_name && *info->dlpi_name) {
		snprintf(m->path, sizeof m->path, "%s", info->dlpi_name);
	} else {
		ssize_t l = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
		m->path[l > 0 ? l : 0] = 0;
	}
	return 0;
}

struct tlm_rec_module *tlm_test_modmap(size_t *n)
{
	struct acc a = {.m = calloc(MAX_MODS, sizeof *a.m)};
	if (a.m)
		dl_iterate_phdr(visit, &a);
	*n = a.n;
	return a.m;
}

const struct tlm_rec_module *tlm_test_modmap_find(const struct tlm_rec_module *m, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < m[i].nseg; j++)
			if (addr >= m[i].seg[j].start && addr < m[i].seg[j].end)
				return &m[i];
	return NULL;
}
