/* SPDX-License-Identifier: MIT */
/*
 * writer_file.c - the open trace: its file, its header and its writes
 * (writer_int.h). Callers hold the writer lock.
 *
 * Every chunk goes through fdguard.c, which checks the descriptor is still
 * the file tlm created; the first failure is said once and the trace ends
 * there (TRUNCATED), the program unaffected.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recording/config.h"
#include "recording/fdguard.h"
#include "recording/log.h"
#include "recording/writer/output.h"
#include "recording/writer/writer_int.h"
#include "tlm_config.h"

struct tlm__wfile tlm__wf = {.fd = -1};

static int sink(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	return tlm__fd_write(tlm__wf.fd, buf, len); /* still our file? (fdguard.c) */
}

static void write_failed(int err)
{
	if (tlm__wf.failed)
		return;
	tlm__wf.failed = true;
	if (!tlm__fd_reported())
		tlm__log("writing the trace %s failed: %s; recording stops here and the trace ends truncated", tlm__wf.path,
		 strerror(-err));
}

void tlm__wf_check(int rc)
{
	if (rc < 0)
		write_failed(rc);
}

static char **read_cmdline(uint32_t *argc)
{
	static char buf[65536];
	static char *argv[1024];
	*argc = 0;
	FILE *f = fopen("/proc/self/cmdline", "re");
	if (!f)
		return argv;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	for (size_t i = 0; i < n && *argc < 1024;) {
		argv[(*argc)++] = &buf[i];
		i += strlen(&buf[i]) + 1;
	}
	return argv;
}

int tlm__wf_open(uint64_t start_realtime_ns, uint64_t start_monotonic_ns)
{
	char path[4200];
	if (tlm__output_expand(tlm__cfg.output, path, sizeof path) != 0)
		return -1;
	int fd = tlm__output_create(path, tlm__wf.path, sizeof tlm__wf.path);
	if (fd < 0)
		return -1;
	fd = tlm__fd_adopt(fd, tlm__wf.path);
	tlm__manifest_add(tlm__wf.path);
	static struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.flags = tlm__cfg.drop ? TLM_TRACE_F_DROP_MODE : 0;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	h.start_realtime_ns = start_realtime_ns;
	h.start_monotonic_ns = start_monotonic_ns;
	h.clock_id = CLOCK_MONOTONIC;
	h.stack_depth = tlm__cfg.stack_depth;
	if (gethostname(h.host, sizeof h.host - 1) != 0)
		strcpy(h.host, "unknown");
	ssize_t l = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
	h.exe[l > 0 ? l : 0] = 0;
	snprintf(h.tlm_version, sizeof h.tlm_version, "%s", TLM_VERSION);
	h.argv = read_cmdline(&h.argc);
	tlm__wf.fd = fd;
	tlm__wf.failed = false;
	tlm__wf.next_seq = 0;
	int err = 0;
	tlm__wf.tw = tlm_tw_open(&h, sink, NULL, 64 * 1024, tlm__cfg.compress ? TLM_TW_ZSTD_PAYS : 0, &err);
	if (!tlm__wf.tw) {
		tlm__log("cannot start the trace %s: %s; recording is off", tlm__wf.path, strerror(err ? -err : ENOMEM));
		close(fd);
		unlink(tlm__wf.path);
		tlm__wf.fd = -1;
		return -1;
	}
	return 0;
}

/* The child has only the forking thread: it drops the parent's trace (that
 * file stays the parent's) and starts its own at its first event. */
void tlm__wf_drop_child(void)
{
	if (tlm__wf.tw)
		tlm_tw_close(tlm__wf.tw);
	tlm__wf.tw = NULL;
	if (tlm__wf.fd >= 0)
		close(tlm__wf.fd);
	tlm__wf.fd = -1;
	tlm__wf.next_seq = tlm__wf.order_errors = tlm__wf.discarded = tlm__wf.late = 0;
	tlm__wf.bypassed = false;
	tlm__wf.failed = false;
}
