// SPDX-License-Identifier: MIT
/*
 * Configuration from the environment. One configuration per process (the
 * driver reads it once, at cuInit), so meson runs this program once per case:
 *   test_env DEVICES MEMORY EXPECT_NDEV EXPECT_BYTES[,...] EXPECT_STDERR
 * DEVICES / MEMORY are the values to put in TLM_SIM_DEVICES / TLM_SIM_MEMORY
 * ("-" = unset); EXPECT_STDERR is the exact stderr output ("-" = none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_driver.h"

static int fail(const char *what)
{
	fprintf(stdout, "FAIL: %s\n", what);
	return 1;
}

static void set(const char *name, const char *v)
{
	if (strcmp(v, "-") == 0)
		unsetenv(name);
	else
		setenv(name, v, 1);
}

int main(int argc, char **argv)
{
	char captured[512] = "", *save;
	int n = 0, saved_fd;
	FILE *tmp;
	if (argc != 6)
		return fail("usage");
	set("TLM_SIM_DEVICES", argv[1]);
	set("TLM_SIM_MEMORY", argv[2]);

	/* capture what cuInit prints */
	tmp = tmpfile();
	fflush(stderr);
	saved_fd = dup(2);
	dup2(fileno(tmp), 2);
	CUresult r = cuInit(0);
	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	rewind(tmp);
	size_t got = fread(captured, 1, sizeof(captured) - 1, tmp);
	captured[got] = 0;
	fclose(tmp);

	if (r != CUDA_SUCCESS)
		return fail("cuInit");
	if (strcmp(argv[5], "-") == 0 ? got != 0 : strcmp(captured, argv[5]) != 0) {
		printf("stderr was: [%s]\n", captured);
		return fail("stderr");
	}
	if (cuDeviceGetCount(&n) != CUDA_SUCCESS || n != atoi(argv[3]))
		return fail("device count");
	char *sizes = strdup(argv[4]);
	int d = 0;
	for (char *tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save), d++) {
		size_t bytes = 0;
		if (cuDeviceTotalMem_v2(&bytes, d) != CUDA_SUCCESS ||
		    bytes != strtoull(tok, NULL, 10)) {
			printf("device %d: %zu bytes\n", d, bytes);
			free(sizes);
			return fail("memory size");
		}
	}
	free(sizes);
	if (d != n)
		return fail("expected sizes must list every device");
	printf("ok\n");
	return 0;
}
