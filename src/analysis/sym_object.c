/* SPDX-License-Identifier: MIT */
/* sym_object.c - libdwfl: a file, its DWARF scopes, line table and symbols. */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym_demangle.h"
#include "analysis/sym_object.h"

struct tlm__symobj {
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

/* debuginfo_path NULL = libdwfl's default ":.debug:/usr/lib/debug": next to
 * the file, in .debug/ beside it, and under /usr/lib/debug (by path and by
 * build-id). find_elf is never called: the file is reported by name. */
static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct tlm__symobj *tlm__symobj_open(const char *path)
{
	struct tlm__symobj *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	o->dwfl = dwfl_begin(&callbacks);
	if (!o->dwfl) {
		free(o);
		return NULL;
	}
	dwfl_report_begin(o->dwfl);
	/* add_p_vaddr = true with base 0: the module's addresses are its file
	 * vaddrs, for ET_DYN and ET_EXEC alike (libdwfl ignores base for ET_EXEC). */
	o->mod = dwfl_report_elf(o->dwfl, path, path, -1, 0, true);
	dwfl_report_end(o->dwfl, NULL, NULL);
	if (!o->mod) {
		dwfl_end(o->dwfl);
		free(o);
		return NULL;
	}
	return o;
}

void tlm__symobj_close(struct tlm__symobj *o)
{
	if (!o)
		return;
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

static const char *elf_symbol(struct tlm__symobj *o, uint64_t addr, struct tlm__strtab *t)
{
	GElf_Off off;
	GElf_Sym sym;
	return tlm__demangle(t, dwfl_module_addrinfo(o->mod, addr, &off, &sym, NULL, NULL, NULL));
}

size_t tlm__symobj_lookup(struct tlm__symobj *o, uint64_t addr, struct tlm__strtab *t,
			  struct tlm_frame *out, size_t max)
{
	if (!max)
		return 0;
	/* The innermost location is the line table's row for the address. */
	const char *file = NULL;
	int line = 0;
	Dwfl_Line *l = dwfl_module_getsrc(o->mod, addr);
	if (l)
		file = tlm__strtab_intern_str(t, dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL));

	size_t n = 0;
	bool reached_function = false;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(o->mod, addr, &bias);
	Dwarf_Die *scopes = NULL;
	int nscopes = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	for (int i = 0; i < nscopes && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue; /* lexical blocks, the CU */
		out[n].function = scope_name(&scopes[i], t);
		out[n].file = file;
		out[n].line = line;
		out[n].inlined = tag == DW_TAG_inlined_subroutine;
		n++;
		if (tag == DW_TAG_subprogram) {
			reached_function = true;
			break;
		}
		call_site(cu, &scopes[i], t, &file, &line);
	}
	free(scopes);

	/* No DWARF for the address, a nameless function, or inline scopes with
	 * no enclosing subprogram: the symbol table names the real function. */
	if (n && reached_function && !out[n - 1].function)
		out[n - 1].function = elf_symbol(o, addr, t);
	else if (!reached_function && n < max) {
		out[n].function = elf_symbol(o, addr, t);
		out[n].file = file;
		out[n].line = line;
		out[n].inlined = false;
		n++;
	}
	return n;
}
