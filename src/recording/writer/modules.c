/* SPDX-License-Identifier: MIT */
/* modules.c - loaded ELF objects into MODULE records. */
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recording/writer/modules.h"

struct known {
	uint32_t id;
	uint64_t base;
	char *path;
	bool seen;
};

static struct known *mods;
static size_t nmods, capmods;
static uint32_t next_id = 1;
static unsigned long long last_adds = ~0ull, last_subs = ~0ull;

struct scan {
	struct tlm_tw *tw;
	int err;
	struct tlm_rec_module rec; /* big: kept off the writer's stack */
};

static void build_id(const struct dl_phdr_info *info, struct tlm_rec_module *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_NOTE)
			continue;
		const char *n = (const char *)(info->dlpi_addr + p->p_vaddr);
		const char *end = n + p->p_memsz;
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

static struct known *find(uint64_t base, const char *path)
{
	for (size_t i = 0; i < nmods; i++)
		if (mods[i].base == base && !strcmp(mods[i].path, path))
			return &mods[i];
	return NULL;
}

/* The loader's name string is ordered after its writes by the loader's own
 * lock, held across dl_iterate_phdr. ThreadSanitizer cannot see that lock and
 * forgets only the string's characters, not its terminating NUL, so any
 * intercepted read of the whole string (snprintf, strcmp) was reported as a
 * race with the dlopen of another thread. One uninstrumented copy, then only
 * the copy is used. */
__attribute__((no_sanitize("thread"))) static void copy_name(char *dst, size_t cap, const char *src)
{
	size_t i = 0;
	for (const volatile char *v = src; i + 1 < cap && v[i]; i++)
		dst[i] = v[i];
	dst[i] = 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct scan *s = arg;
	char name[4096];
	const char *path = name;
	copy_name(name, sizeof name, info->dlpi_name ? info->dlpi_name : "");
	if (!*name) {
		ssize_t l = readlink("/proc/self/exe", name, sizeof name - 1);
		name[l > 0 ? l : 0] = 0;
	}
	struct known *k = find(info->dlpi_addr, path);
	if (k) {
		k->seen = true;
		return 0;
	}
	if (nmods == capmods) {
		size_t nc = capmods ? capmods * 2 : 64;
		struct known *nm = realloc(mods, nc * sizeof *nm);
		if (!nm)
			return 1;
		mods = nm;
		capmods = nc;
	}
	char *dup = strdup(path);
	if (!dup)
		return 1;
	k = &mods[nmods++];
	*k = (struct known){.id = next_id++, .base = info->dlpi_addr, .path = dup, .seen = true};

	struct tlm_rec_module *m = &s->rec;
	memset(m, 0, offsetof(struct tlm_rec_module, path));
	m->id = k->id;
	m->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && m->nseg < TLM_MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		m->seg[m->nseg].start = info->dlpi_addr + p->p_vaddr;
		m->seg[m->nseg].end = info->dlpi_addr + p->p_vaddr + p->p_memsz;
		m->nseg++;
	}
	build_id(info, m);
	snprintf(m->path, sizeof m->path, "%s", path);
	if (!s->err)
		s->err = tlm_tw_module(s->tw, m);
	return 0;
}

static int counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the counters are the same in every entry */
}

int tlm__modules_sync(struct tlm_tw *tw)
{
	unsigned long long c[2] = {0, 0};
	dl_iterate_phdr(counters, c);
	if (c[0] == last_adds && c[1] == last_subs && (c[0] | c[1]))
		return 0;
	last_adds = c[0];
	last_subs = c[1];
	static struct scan s;
	s.tw = tw;
	s.err = 0;
	for (size_t i = 0; i < nmods; i++)
		mods[i].seen = false;
	dl_iterate_phdr(visit, &s);
	size_t j = 0;
	for (size_t i = 0; i < nmods; i++) {
		if (mods[i].seen) {
			mods[j++] = mods[i];
			continue;
		}
		if (!s.err)
			s.err = tlm_tw_module_unload(tw, mods[i].id);
		free(mods[i].path);
	}
	nmods = j;
	return s.err;
}

void tlm__modules_reset(void)
{
	for (size_t i = 0; i < nmods; i++)
		free(mods[i].path);
	free(mods);
	mods = NULL;
	nmods = capmods = 0;
	next_id = 1;
	last_adds = last_subs = ~0ull;
}
