/* SPDX-License-Identifier: MIT */
/* sym_demangle.c - __cxa_demangle from libstdc++, called through its C ABI. */
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_demangle.h"

/* Declared by <cxxabi.h>, which is C++ only; the function itself is extern "C". */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *tlm__demangle(struct tlm__strtab *t, const char *name)
{
	if (!name)
		return NULL;
	/* Only "_Z" names are mangled; asking about others costs a malloc and
	 * may "demangle" a C name that happens to look like a type ("i" -> int). */
	if (strncmp(name, "_Z", 2) != 0)
		return tlm__strtab_intern_str(t, name);
	int status = -1;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	const char *r = tlm__strtab_intern_str(t, status == 0 && d ? d : name);
	free(d);
	return r;
}
