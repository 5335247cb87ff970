/* SPDX-License-Identifier: MIT */
/*
 * peak_rss.c - peak_rss CMD [ARGS...]: runs CMD (its stdout to /dev/null),
 * prints its peak resident set in KiB (getrusage of the waited child: a
 * fork of this small program, so its own pages hardly count) and exits with
 * CMD's status (128 + the signal when a signal ended it).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: peak_rss CMD [ARGS...]\n");
		return 64;
	}
	fflush(stdout);
	pid_t p = fork();
	if (p < 0)
		return 1;
	if (!p) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(p, &st, 0, &ru) != p)
		return 1;
	printf("%ld\n", ru.ru_maxrss);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
