/* SPDX-License-Identifier: MIT */
/*
 * sigdfl - runs a command with every signal at SIG_DFL and an empty signal
 * mask (tlm_test_child_signals): for shell and Python tests, whose shell
 * cannot undo a disposition ignored at its own start (POSIX), and whose
 * background jobs it starts with SIGINT and SIGQUIT ignored.
 *   sigdfl COMMAND [ARG...]
 */
#include <stdio.h>
#include <unistd.h>

#include "tlm_test.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sigdfl COMMAND [ARG...]\n");
		return 2;
	}
	tlm_test_child_signals();
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
