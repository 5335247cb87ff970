/* SPDX-License-Identifier: MIT */
/*
 * test_info.c - runs the `tlm` tool (path in argv[1]) on known traces and
 * compares the key lines of `tlm info` and the exit codes exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt.h"

static const char *tool;

/* Runs tool with args; returns its exit code, output (stdout+stderr) in out. */
static int run(const char *args, char *out, size_t cap)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", tool, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = 0;
	int st = pclose(p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void has_line(const char *out, const char *line)
{
	size_t l = strlen(line);
	for (const char *p = out; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, line, l) && (p[l] == '\n' || p[l] == 0))
			return;
	}
	fail_msg("line not found: \"%s\" in output:\n%s", line, out);
}

enum { K_CLEAN, K_SIGNAL };

/* A known trace: 2 threads, 3 stacks, 2 modules (1 unloaded), 10 events. */
static struct membuf known(int kind)
{
	struct membuf m = {0};
	struct tlm_trace_header h;
	tt_header(&h);
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 128, 0, NULL);
	struct tlm_rec_thread t1 = {.index = 0, .tid = 100, .name = "main"};
	struct tlm_rec_thread t2 = {.index = 1, .tid = 101, .name = "loader"};
	tlm_tw_thread(w, &t1);
	tlm_tw_thread(w, &t2);
	static struct tlm_rec_module mod = {.id = 1, .base = 0x400000, .nseg = 1, .path = "/usr/bin/train"};
	mod.seg[0].start = 0x400000;
	mod.seg[0].end = 0x500000;
	tlm_tw_module(w, &mod);
	mod.id = 2;
	strcpy(mod.path, "/usr/lib/libcudart.so.12");
	tlm_tw_module(w, &mod);
	uint64_t ip[3] = {0x401000, 0x402000, 0x403000};
	for (uint32_t s = 1; s <= 3; s++)
		tlm_tw_stack(w, s, ip, s);
	const uint64_t t = 1000000000ULL;
	const struct tlm_event evs[] = {
		{.time_ns = t + 1000, .addr = 0x7f0000000000, .size = 1 << 20, .op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .stack_id = 1, .api = TLM_API_cudaMalloc},
		{.time_ns = t + 2000, .addr = 0x7f0000200000, .size = 2 << 20, .op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .stack_id = 2, .thread = 1},
		{.time_ns = t + 3000, .addr = 0x7f0000400000, .size = 1000, .op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .stack_id = 3},
		{.time_ns = t + 4000, .addr = 0, .size = 1ULL << 30, .op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .result = 2, .device_free = 12345},
		{.time_ns = t + 5000, .addr = 0x7f0000000000, .op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE},
		{.time_ns = t + 6000, .addr = 0x7f1000000000, .size = 4096, .op = TLM_OP_ALLOC, .kind = TLM_KIND_HOST_PINNED},
		{.time_ns = t + 7000, .addr = 0x7f1000000000, .op = TLM_OP_FREE, .kind = TLM_KIND_HOST_PINNED},
		{.time_ns = t + 8000, .addr = 0x7e0000000000, .size = 1ULL << 30, .op = TLM_OP_ALLOC, .kind = TLM_KIND_MANAGED, .device = -1},
		{.time_ns = t + 9000, .addr = 0x5555, .op = TLM_OP_POOL_CREATE, .kind = TLM_KIND_POOL},
		{.time_ns = t + 10000, .addr = 0x5555, .size = 4096, .op = TLM_OP_POOL_TRIM, .kind = TLM_KIND_POOL},
	};
	for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
		tlm_tw_event(w, &evs[i]);
	tlm_tw_module_unload(w, 2);
	tlm_tw_lost(w, 1, 5);
	if (kind == K_SIGNAL) {
		tlm_tw_signal(w, 11);
		tlm_tw_flush(w);
	} else {
		tlm_tw_end(w, 3500000000ULL);
	}
	tlm_tw_close(w);
	return m;
}

static void test_clean(void **state)
{
	(void)state;
	struct membuf m = known(K_CLEAN);
	char *path = tt_tmpfile(m.p, m.len);
	static char out[16384], args[512], line[512];
	snprintf(args, sizeof args, "info '%s'", path);
	assert_int_equal(run(args, out, sizeof out), 0);
	snprintf(line, sizeof line, "trace:        %s", path);
	has_line(out, line);
	has_line(out, "format:       v1, written by tlm 0.1.0");
	has_line(out, "pid:          4242 (ppid 1)");
	has_line(out, "host:         testhost");
	has_line(out, "command:      train --lr 0.1 'my file' ''");
	has_line(out, "exe:          /usr/bin/train");
	has_line(out, "start:        2023-11-14T22:13:20.123456789Z");
	has_line(out, "duration:     2.500000000 s");
	has_line(out, "stack depth:  16");
	has_line(out, "drop mode:    on");
	has_line(out, "state:        clean");
	has_line(out, "events:       10");
	has_line(out, "lost:         5");
	has_line(out, "threads:      2");
	has_line(out, "stacks:       3");
	has_line(out, "modules:      2 (1 unloaded)");
	has_line(out, "kind             allocs      frees   failed      bytes allocated");
	has_line(out, "device                3          1        1              3146728 (3.0 MiB)");
	has_line(out, "managed               1          0        0           1073741824 (1.0 GiB)");
	has_line(out, "host_pinned           1          1        0                 4096 (4.0 KiB)");
	has_line(out, "pool ops:     create 1, destroy 0, trim 1");
	has_line(out, "integrity:    ok");

	/* Cut inside the last chunk: still readable, exit 0. */
	size_t last = m.len - 1;
	while (memcmp(m.p + last, "TLMK", 4))
		last--;
	tt_rewrite(path, m.p, m.len - 3);
	assert_int_equal(run(args, out, sizeof out), 0);
	snprintf(line, sizeof line, "state:        truncated at offset %zu: last chunk incomplete (%zu of %zu bytes)",
		 last, m.len - 3 - last, m.len - last);
	has_line(out, line);
	has_line(out, "integrity:    ok");

	/* A damaged chunk: exit 2, the error and its offset listed. */
	m.p[last - 5] ^= 0x40; /* inside the chunk before the last */
	size_t prev = last - 1;
	while (memcmp(m.p + prev, "TLMK", 4))
		prev--;
	tt_rewrite(path, m.p, m.len);
	assert_int_equal(run(args, out, sizeof out), 2);
	has_line(out, "integrity:    1 error");
	snprintf(line, sizeof line, "  offset %zu: chunk checksum mismatch", prev);
	assert_non_null(strstr(out, line));

	/* Not a trace. */
	tt_rewrite(path, "hello world, this is not a trace", 32);
	assert_int_equal(run(args, out, sizeof out), 2);
	snprintf(line, sizeof line, "tlm: %s: not a tlm trace (bad magic at offset 0)", path);
	has_line(out, line);
	unlink(path);
	free(path);
	free(m.p);
}

static void test_signal(void **state)
{
	(void)state;
	struct membuf m = known(K_SIGNAL);
	char *path = tt_tmpfile(m.p, m.len);
	static char out[16384], args[512];
	snprintf(args, sizeof args, "info '%s'", path);
	assert_int_equal(run(args, out, sizeof out), 0);
	has_line(out, "state:        ended by signal 11 (SIGSEGV)");
	has_line(out, "duration:     0.000010000 s (to the last event)");
	unlink(path);
	free(path);
	free(m.p);
}

/* Text from the trace never reaches the terminal raw: escapes (window title,
 * screen clear, OSC 52 clipboard write) and other bytes outside printable
 * ASCII show as '?', as in the text report. */
static void test_escapes(void **state)
{
	(void)state;
	struct membuf m = {0};
	struct tlm_trace_header h;
	tt_header(&h);
	strcpy(h.host, "\x1b]0;owned\x07" "box");
	strcpy(h.exe, "/bin/\x1b[2Jtrain\xc3\xa9");
	strcpy(h.tlm_version, "0.1\x1b]52;c;aGk=\x07");
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 128, 0, NULL);
	tlm_tw_prop(w, "cupti", "held");
	tlm_tw_prop(w, "cupti.detail", "by \x1b[31mnsys\x9b");
	tlm_tw_end(w, 2000000000ULL);
	tlm_tw_close(w);
	char *path = tt_tmpfile(m.p, m.len);
	static char out[16384], args[512];
	snprintf(args, sizeof args, "info '%s'", path);
	assert_int_equal(run(args, out, sizeof out), 0);
	has_line(out, "host:         ?]0;owned?box");
	has_line(out, "exe:          /bin/?[2Jtrain??");
	has_line(out, "format:       v1, written by tlm 0.1?]52;c;aGk=?");
	has_line(out, "cupti:        CUPTI held by another tool (by ?[31mnsys?)");
	assert_null(strchr(out, 0x1b));
	assert_null(strchr(out, 0x07));
	unlink(path);
	free(path);
	free(m.p);
}

static void test_usage(void **state)
{
	(void)state;
	static char out[16384];
	assert_int_equal(run("--version", out, sizeof out), 0);
	has_line(out, "tlm 0.1.0");
	assert_int_equal(run("help", out, sizeof out), 0);
	assert_non_null(strstr(out, "usage: tlm"));
	assert_int_equal(run("", out, sizeof out), 64);
	assert_int_equal(run("frobnicate", out, sizeof out), 64);
	has_line(out, "tlm: unknown command 'frobnicate'");
	assert_int_equal(run("info", out, sizeof out), 64);
	has_line(out, "tlm info: missing TRACE");
	assert_int_equal(run("info a b", out, sizeof out), 64);
	assert_int_equal(run("info --bogus x", out, sizeof out), 64);
	assert_int_equal(run("info /nonexistent/x.trace", out, sizeof out), 2);
	has_line(out, "tlm: /nonexistent/x.trace: cannot open: No such file or directory");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-TO-TLM\n", argv[0]);
		return 2;
	}
	tool = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
