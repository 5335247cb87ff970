/* SPDX-License-Identifier: MIT */
/* fuzz_input.c - see fuzz_input.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz_input.h"

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int put32(uint8_t *p, uint32_t v)
{
	int changed = get32(p) != v;
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
	return changed;
}

const char *fuzz_as_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("tlm-fuzz", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0) {
		perror("ftruncate");
		abort();
	}
	size_t done = 0;
	while (done < size) {
		ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
		if (k <= 0) {
			perror("pwrite");
			abort();
		}
		done += (size_t)k;
	}
	return path;
}

size_t fuzz_fix_crcs(uint8_t *b, size_t n)
{
	size_t changed = 0;
	if (n < 16 || memcmp(b, "TLMTRACE", 8))
		return 0;
	uint32_t hl = get32(b + 12);
	if (hl > n - 16 || n - 16 - hl < 4)
		return 0;
	size_t off = 16 + (size_t)hl;
	changed += (size_t)put32(b + off, (uint32_t)crc32(0, b, (uInt)off));
	off += 4;
	while (n - off >= 40 && !memcmp(b + off, "TLMK", 4)) {
		uint32_t disk = get32(b + off + 4);
		if (disk > n - off - 40)
			break;
		uLong c = crc32(0, b + off + 12, 28);
		c = crc32(c, b + off + 40, disk);
		changed += (size_t)put32(b + off + 8, (uint32_t)c);
		off += 40 + (size_t)disk;
	}
	return changed;
}

void fuzz_check_line(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	FUZZ_CHECK(len > 0 && len < n);
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK(s[i] >= 0x20 && s[i] < 0x7f);
}

void fuzz_check_inert_text(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		FUZZ_CHECK(c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f));
		FUZZ_CHECK(!(c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] >= 0x80 &&
			     (unsigned char)text[i + 1] <= 0x9f));
	}
}

void fuzz_as_is_and_repaired(const uint8_t *data, size_t size, void (*fn)(const uint8_t *, size_t))
{
	fn(data, size);
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	if (fuzz_fix_crcs(copy, size))
		fn(copy, size);
	free(copy);
}
