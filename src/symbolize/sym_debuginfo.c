/* SPDX-License-Identifier: MIT */
/* sym_debuginfo.c - debug files found without blocking (sym_debuginfo.h). */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/input.h"
#include "common/text.h"
#include "symbolize/sym_debuginfo.h"

#define DEBUG_ROOT "/usr/lib/debug"

struct want {
	const char *module;       /* for the message */
	struct stat main;         /* the file itself: never its own debug file */
	bool have_main;
	GElf_Word crc;            /* 0: not checked */
	const unsigned char *id;  /* the build-id a candidate must have, or NULL */
	size_t idlen;
};

static bool crc_ok(int fd, GElf_Word want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	ssize_t k;
	while ((k = read(fd, buf, sizeof buf)) > 0)
		crc = crc32(crc, buf, (uInt)k);
	return k == 0 && (GElf_Word)crc == want && lseek(fd, 0, SEEK_SET) == 0;
}

static bool id_ok(int fd, const struct want *w)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id = NULL;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &id) : -1;
	bool ok = n > 0 && (size_t)n == w->idlen && !memcmp(id, w->id, w->idlen);
	elf_end(e);
	return ok;
}

/* A candidate: the fd when it is a usable debug file, else -1 (said when
 * it exists but is no file to read). */
static int try_one(const char *path, const struct want *w)
{
	char why[160];
	int fd = tlm_input_open(path, 0, why, sizeof why);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			tlm_text_line(stderr, "tlm: %s: its debug file %s: %s; not used\n", w->module, path, why);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) || (w->have_main && st.st_dev == w->main.st_dev && st.st_ino == w->main.st_ino) ||
	    (w->crc && !crc_ok(fd, w->crc)) || (w->id && !id_ok(fd, w))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int found(int fd, const char *path, char **name)
{
	if (fd >= 0)
		*name = strdup(path); /* libdwfl's to free; NULL is allowed */
	return fd;
}

/* NAME beside the file DIR, in DIR/.debug and under /usr/lib/debug/DIR. */
static int by_name(const char *dir, const char *name, const struct want *w, char **out)
{
	char path[PATH_MAX * 2];
	if (name[0] == '/')
		return found(try_one(name, w), name, out);
	static const char *const fmt[] = {"%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s"};
	for (size_t i = 0; i < sizeof fmt / sizeof *fmt; i++) {
		if (i == 2 && dir[0] != '/')
			break;
		snprintf(path, sizeof path, fmt[i], dir, name);
		int fd = try_one(path, w);
		if (fd >= 0)
			return found(fd, path, out);
	}
	return -1;
}

static int in_dirs_of(const char *file, const char *name, const struct want *w, char **out)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(file, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - file), file);
	return by_name(dir[0] ? dir : "/", name, w, out);
}

int tlm__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)base;
	struct tlm__dbgstate *st = userdata ? *userdata : NULL;
	struct want w = {.module = modname ? modname : file_name ? file_name : "?", .crc = debuglink_crc};
	w.have_main = file_name && stat(file_name, &w.main) == 0;
	/* the alt file of dwz: asked for with the name from .gnu_debugaltlink
	 * and no CRC, after the module's own debugging information is in */
	GElf_Addr bias;
	Elf *main_elf = dwfl_module_getelf(mod, &bias);
	GElf_Word main_crc = 0;
	const char *main_link = main_elf ? dwelf_elf_gnu_debuglink(main_elf, &main_crc) : NULL;
	bool alt = debuglink_file && !(main_link && !strcmp(main_link, debuglink_file) && main_crc == debuglink_crc);
	int fd = -1;
	if (!alt) {
		const unsigned char *id;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(mod, &id, &vaddr);
		if (n >= 2 && n <= 64) {
			char path[sizeof DEBUG_ROOT "/.build-id/" + 2 * 64 + 8];
			int o = snprintf(path, sizeof path, DEBUG_ROOT "/.build-id/%02x/", id[0]);
			for (int i = 1; i < n; i++)
				o += snprintf(path + o, sizeof path - (size_t)o, "%02x", id[i]);
			snprintf(path + o, sizeof path - (size_t)o, ".debug");
			struct want wb = w;
			wb.crc = 0;
			wb.id = id;
			wb.idlen = (size_t)n;
			if ((fd = found(try_one(path, &wb), path, debuginfo_file_name)) >= 0)
				return fd;
		}
	}
	if (!file_name)
		return -1;
	char dflt[NAME_MAX + 8];
	const char *name = debuglink_file;
	if (!name) { /* no debug link: FILE.debug */
		const char *b = strrchr(file_name, '/');
		snprintf(dflt, sizeof dflt, "%s.debug", b ? b + 1 : file_name);
		name = dflt;
		w.crc = 0;
	}
	fd = in_dirs_of(file_name, name, &w, debuginfo_file_name);
	if (fd < 0 && name[0] != '/') { /* a link's debug file may be beside its target */
		char *canon = realpath(file_name, NULL);
		if (canon && strcmp(canon, file_name))
			fd = in_dirs_of(canon, name, &w, debuginfo_file_name);
		free(canon);
	}
	if (alt && fd >= 0 && st)
		st->alt_found = true;
	return fd;
}
