/* SPDX-License-Identifier: MIT */
/*
 * standalone.c - runs a fuzz harness over files and directories without
 * libFuzzer (any compiler): the seed corpus and every crash reproducer stay
 * regression tests of the normal and sanitized builds.
 *   fuzz_reader_replay PATH...   (files, or directories of files)
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *b = malloc(cap);
	size_t k;
	while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			uint8_t *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
		}
	}
	fclose(f);
	if (!b)
		return -1;
	LLVMFuzzerTestOneInput(b, n);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	size_t files = 0;
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]);
			files++;
			continue;
		}
		struct dirent **de;
		int n = scandir(argv[i], &de, NULL, alphasort);
		for (int j = 0; j < n; j++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", argv[i], de[j]->d_name);
			if (de[j]->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
				bad |= run_file(p);
				files++;
			}
			free(de[j]);
		}
		free(de);
	}
	printf("%zu inputs, no crash\n", files);
	return bad ? 1 : files ? 0 : 2;
}
