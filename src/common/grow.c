/* SPDX-License-Identifier: MIT */
/*
 * grow.c - growing an array by doubling, overflow checked (grow.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

int tlm__grow(void *arrayp, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : (first ? first : 1);
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -1;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return -1;
	void *a;
	memcpy(&a, arrayp, sizeof a); /* the caller's pointer, whatever its type */
	void *p = realloc(a, n * elem);
	if (!p)
		return -1;
	memcpy(arrayp, &p, sizeof p);
	*cap = n;
	return 0;
}
