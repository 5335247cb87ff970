/* SPDX-License-Identifier: MIT */
/* sym_object.c - libdwfl: a file, its DWARF scopes, line table and symbols. */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/sym_debuginfo.h"
#include "symbolize/sym_demangle.h"
#include "symbolize/sym_elfsyms.h"
#include "symbolize/sym_object.h"
#include "symbolize/sym_scopes.h"

/* Inline nesting deeper than this is cut at the inner end (never seen:
 * compilers stop inlining long before). */
#define MAX_CHAIN 64

struct tlm__symobj {
	struct tlm__dbgstate dbg;   /* the module's userdata: what tlm__find_debuginfo found */
	bool dw_checked, no_dwarf;  /* no_dwarf: its dwz alt file was not found (see below) */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct tlm__scopes *scopes; /* NULL: out of memory, use the slow path */
	struct tlm__elfsyms *syms;  /* read on first use */
	bool syms_tried;
};

/* Debug files are found where libdwfl's standard callback looks, but never
 * waited on (a debug link can name a FIFO): sym_debuginfo.h. find_elf is
 * never called: the file is reported by name. */
static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = tlm__find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The path comes from a trace: open only a regular file, and never block
 * (O_NONBLOCK: a FIFO or a device would wait forever for a writer). */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct tlm__symobj *tlm__symobj_open(const char *path)
{
	int fd = open_regular(path);
	if (fd < 0)
		return NULL;
	struct tlm__symobj *o = calloc(1, sizeof *o);
	if (!o) {
		close(fd);
		return NULL;
	}
	o->dwfl = dwfl_begin(&callbacks);
	if (!o->dwfl) {
		close(fd);
		free(o);
		return NULL;
	}
	dwfl_report_begin(o->dwfl);
	/* add_p_vaddr = true with base 0: the module's addresses are its file
	 * vaddrs, for ET_DYN and ET_EXEC alike (libdwfl ignores base for ET_EXEC). */
	o->mod = dwfl_report_elf(o->dwfl, path, path, fd, 0, true); /* takes fd on success */
	dwfl_report_end(o->dwfl, NULL, NULL);
	if (!o->mod) {
		close(fd);
		dwfl_end(o->dwfl);
		free(o);
		return NULL;
	}
	void **ud;
	if (dwfl_module_info(o->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = &o->dbg;
	o->scopes = tlm__scopes_new();
	return o;
}

void tlm__symobj_close(struct tlm__symobj *o)
{
	if (!o)
		return;
	tlm__scopes_free(o->scopes); /* holds DIEs of the Dwfl's Dwarf */
	tlm__elfsyms_free(o->syms);  /* holds names of the Dwfl's Elf */
	dwfl_end(o->dwfl);
	free(o);
}

size_t tlm__symobj_build_id(struct tlm__symobj *o, const uint8_t **bits)
{
	const unsigned char *b = NULL;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(o->mod, &b, &vaddr);
	if (n <= 0 || !b)
		return 0;
	*bits = b;
	return (size_t)n;
}

/* The name people know a function by: the demangled linkage name (C++:
 * qualified, with parameter types), else DW_AT_name (C). Both are looked up
 * through abstract origins and specifications, since an inlined instance or
 * an out-of-line member definition carries neither itself. */
static const char *scope_name(Dwarf_Die *die, struct tlm__strtab *t)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (n)
		return tlm__demangle(t, n);
	return tlm__strtab_intern_str(t, dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a)));
}

/* Where an inlined instance was called from, in the function it was inlined
 * into: that is the next outer frame's location. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, struct tlm__strtab *t, const char **file, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &v) == 0 && v <= 0x7fffffff)
		*line = (int)v;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &v) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && v < nfiles)
		*file = tlm__strtab_intern_str(t, dwarf_filesrc(files, v, NULL, NULL));
}

/* The ELF function symbol holding addr; *inside: addr lies within its
 * st_size (not in the padding after it). */
static const char *elf_symbol(struct tlm__symobj *o, uint64_t addr, bool *inside)
{
	bool in = false;
	if (!o->syms_tried) {
		o->syms_tried = true;
		o->syms = tlm__elfsyms_new(o->mod);
	}
	const char *n = o->syms ? tlm__elfsyms_find(o->syms, addr, &in) : NULL;
	if (inside)
		*inside = in;
	return n;
}

/* The function and inlined-call DIEs holding pc, innermost first. Fast path:
 * the per-CU index (sym_scopes.h). Slow path, a search of the whole CU, only
 * for an address inside a function symbol: a bogus address in the padding
 * between functions does not cost a walk of a big CU. */
static int find_chain(struct tlm__symobj *o, Dwarf_Die *cu, Dwarf_Addr pc, uint64_t addr, Dwarf_Die *chain)
{
	Dwarf_Die outer_first[MAX_CHAIN];
	int n = o->scopes ? tlm__scopes_find(o->scopes, cu, pc, outer_first, MAX_CHAIN) : 0;
	if (n == 0) {
		bool inside = false;
		elf_symbol(o, addr, &inside);
		if (inside)
			n = tlm__scopes_find_slow(cu, pc, outer_first, MAX_CHAIN);
	}
	for (int i = 0; i < n; i++)
		chain[i] = outer_first[n - 1 - i];
	return n;
}

/* Whether the DWARF can be read. libdw opens a dwz alt file it was not given
 * by itself, with a plain open(2) (a FIFO named by .gnu_debugaltlink would
 * block it), the first time a DIE refers into it: a module whose alt file
 * tlm__find_debuginfo did not find is named from its ELF symbols only. */
static bool dwarf_usable(struct tlm__symobj *o)
{
	if (!o->dw_checked) {
		o->dw_checked = true;
		Dwarf_Addr bias;
		Dwarf *dw = dwfl_module_getdwarf(o->mod, &bias); /* finds the debug file and the alt file */
		const char *alt;
		const void *id;
		o->no_dwarf = dw && dwelf_dwarf_gnu_debugaltlink(dw, &alt, &id) > 0 && !o->dbg.alt_found;
	}
	return !o->no_dwarf;
}

size_t tlm__symobj_lookup(struct tlm__symobj *o, uint64_t addr, struct tlm__strtab *t,
			  struct tlm_frame *out, size_t max)
{
	if (!max)
		return 0;
	if (!dwarf_usable(o)) {
		out[0].function = tlm__demangle(t, elf_symbol(o, addr, NULL));
		out[0].file = NULL;
		out[0].line = 0;
		out[0].inlined = false;
		return 1;
	}
	/* The innermost location is the line table's row for the address. */
	const char *file = NULL;
	int line = 0;
	Dwfl_Line *l = dwfl_module_getsrc(o->mod, addr);
	if (l)
		file = tlm__strtab_intern_str(t, dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL));

	size_t n = 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(o->mod, addr, &bias);
	Dwarf_Die chain[MAX_CHAIN];
	int nchain = cu ? find_chain(o, cu, addr - bias, addr, chain) : 0;
	/* A chain always ends with its function; only a complete one is used. */
	bool reached_function = nchain > 0 && (size_t)nchain <= max;
	for (int i = 0; i < nchain && n < max; i++) {
		bool inl = dwarf_tag(&chain[i]) == DW_TAG_inlined_subroutine;
		out[n].function = scope_name(&chain[i], t);
		out[n].file = file;
		out[n].line = line;
		out[n].inlined = inl;
		n++;
		if (inl)
			call_site(cu, &chain[i], t, &file, &line);
	}

	/* A nameless function: the symbol table names it. No DWARF for the
	 * address: one frame, named from the symbol table. */
	if (reached_function && !out[n - 1].function)
		out[n - 1].function = tlm__demangle(t, elf_symbol(o, addr, NULL));
	else if (nchain == 0) {
		out[n].function = tlm__demangle(t, elf_symbol(o, addr, NULL));
		out[n].file = file;
		out[n].line = line;
		out[n].inlined = false;
		n++;
	}
	return n;
}
