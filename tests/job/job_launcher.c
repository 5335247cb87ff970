/* SPDX-License-Identifier: MIT */
/*
 * job_launcher.c - a launcher that behaves like torchrun for the job tests:
 * `job_launcher N PROGRAM ARGS...` forks N children, each setting RANK,
 * LOCAL_RANK and WORLD_SIZE (torchrun's variables) and exec'ing PROGRAM;
 * it waits for all of them and exits 0 only when all exited 0. It makes no
 * CUDA call itself, as torchrun's agent does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: job_launcher N PROGRAM [ARGS...]\n");
		return 64;
	}
	int n = atoi(argv[1]), failed = 0;
	char ws[16];
	snprintf(ws, sizeof ws, "%d", n);
	for (int r = 0; r < n; r++) {
		pid_t c = fork();
		if (c < 0)
			return 1;
		if (c == 0) {
			char rs[16];
			snprintf(rs, sizeof rs, "%d", r);
			setenv("RANK", rs, 1);
			setenv("LOCAL_RANK", rs, 1);
			setenv("WORLD_SIZE", ws, 1);
			execv(argv[2], argv + 2);
			perror("job_launcher: exec");
			_exit(127);
		}
	}
	int st;
	while (wait(&st) > 0)
		failed |= !WIFEXITED(st) || WEXITSTATUS(st);
	return failed;
}
