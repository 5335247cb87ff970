/* SPDX-License-Identifier: MIT */
/*
 * sym_debuginfo.h - where the debugging information of an ELF file is, found
 * without ever blocking (libdwfl's find_debuginfo callback).
 *
 * Contract: looks where libdwfl's standard callback looks, in its order: by
 * build-id (/usr/lib/debug/.build-id/NN/REST.debug, the build-id checked),
 * then by the .gnu_debuglink name (or FILE.debug) beside the file, in .debug/
 * beside it and under /usr/lib/debug (its CRC checked), for the file's path
 * and for its real path; a dwz alt file (.gnu_debugaltlink) by its name,
 * absolute or beside the debug file. The paths come from a file that may be
 * hostile: each candidate is opened as an untrusted input (a regular file
 * only, never a wait in open(2): src/common/input.h), and one that exists
 * but cannot be used (a FIFO, a device, no permission) is said once on
 * stderr, with the module it was for. No debuginfod (no network).
 * *userdata, when set, is a struct tlm__dbgstate: alt_found tells whether
 * an alt file was given to libdwfl.
 */
#ifndef TLM_SYM_DEBUGINFO_H
#define TLM_SYM_DEBUGINFO_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>

struct tlm__dbgstate {
	bool alt_found;
};

int tlm__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name);

#endif
