/* SPDX-License-Identifier: MIT */
/*
 * cmd_run_live.h - `tlm run --live` (cmd_run_live.c): the run's traces on
 * the `tlm top` screen while the program runs.
 *
 * Contract: with a terminal (tlm__run_live_tty), tlm run makes a log file
 * (tlm__run_live_log) before it forks, the child moves its standard streams
 * there (tlm__run_live_child: stdin from /dev/null), the parent shows the
 * screen (tlm__run_live) and, once the program ended, copies the log to its
 * standard output (tlm__run_live_output). Without a terminal the view is
 * printed as text on stderr and the program's streams are left alone.
 */
#ifndef TLM_TOOLS_CMD_RUN_LIVE_H
#define TLM_TOOLS_CMD_RUN_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

bool tlm__run_live_tty(void);
int tlm__run_live_log(char *path, size_t n);   /* an fd, or -1 */
void tlm__run_live_child(int logfd);           /* in the child, before exec */
/* Until pid exits (0, its wait status in *st) or the screen is closed (1:
 * the caller waits as without --live). cmd: what is run; block: the signals tlm run takes
 * synchronously (the forwarded ones and SIGCHLD). */
int tlm__run_live(pid_t pid, const char *cmd, const char *manifest, const sigset_t *block, int *st, bool screen);
void tlm__run_live_output(int fd, const char *path); /* copies, closes, removes */

#endif
