/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - TLM_* parsing and trace path handling, in-process: each bad
 * value is named in one line and the default kept; %p/%h/%r/%% expand; the
 * trace is created 0600, never through a symlink, never over an existing file.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "recording/config.h"
#include "recording/writer/output.h"
#include "tlm_test.h"

static char errbuf[8192];

/* runs f with stderr captured into errbuf */
static void capture(void (*f)(void))
{
	char path[] = "/tmp/tlm-cfg-XXXXXX";
	int fd = mkstemp(path);
	int saved = dup(2);
	dup2(fd, 2);
	f();
	dup2(saved, 2);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, errbuf, sizeof errbuf - 1);
	errbuf[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
}

static void clear_env(void)
{
	const char *v[] = {"TLM_OUTPUT", "TLM_STACK_DEPTH", "TLM_DROP", "TLM_RING_SIZE", "TLM_DRAIN_MS",
			   "TLM_COMPRESS", "TLM_SIGNALS", "TLM_DISABLE", "RANK", "LOCAL_RANK", "TLM_CUPTI",
			   "TLM_CUPTI_LIBRARY"};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		unsetenv(v[i]);
}

static void test_defaults(void **s)
{
	(void)s;
	clear_env();
	capture(tlm__config_load);
	assert_string_equal(errbuf, "");
	/* relative: under the directory at load, so a later chdir moves nothing */
	char want[4200], cwd[4096];
	assert_non_null(getcwd(cwd, sizeof cwd));
	snprintf(want, sizeof want, "%s/tlm-%%p.trace", cwd);
	assert_string_equal(tlm__cfg.output, want);
	assert_int_equal(tlm__cfg.stack_depth, 64);
	assert_false(tlm__cfg.drop);
	assert_int_equal(tlm__cfg.ring_slots, 16384);
	assert_int_equal(tlm__cfg.drain_ms, 20);
	assert_true(tlm__cfg.compress);
	assert_true(tlm__cfg.signals);
	assert_false(tlm__cfg.disabled);
}

static void test_good_values(void **s)
{
	(void)s;
	clear_env();
	setenv("TLM_STACK_DEPTH", "0", 1);
	setenv("TLM_DROP", "1", 1);
	setenv("TLM_RING_SIZE", "1024", 1);
	setenv("TLM_DRAIN_MS", "5", 1);
	setenv("TLM_COMPRESS", "off", 1);
	setenv("TLM_OUTPUT", "/tmp/x-%r.trace", 1);
	capture(tlm__config_load);
	assert_string_equal(errbuf, "");
	assert_int_equal(tlm__cfg.stack_depth, 0);
	assert_true(tlm__cfg.drop);
	assert_int_equal(tlm__cfg.ring_slots, 1024);
	assert_int_equal(tlm__cfg.drain_ms, 5);
	assert_false(tlm__cfg.compress);
	assert_string_equal(tlm__cfg.output, "/tmp/x-%r.trace");
}

static void test_bad_values_one_line_each(void **s)
{
	(void)s;
	clear_env();
	setenv("TLM_STACK_DEPTH", "257", 1);
	setenv("TLM_DROP", "maybe", 1);
	setenv("TLM_RING_SIZE", "3000", 1);
	setenv("TLM_DRAIN_MS", "-4", 1);
	capture(tlm__config_load);
	char want[1024];
	int pid = (int)getpid();
	snprintf(want, sizeof want,
		 "tlm[%d]: TLM_STACK_DEPTH: bad value '257' (expected an integer 0..256, 0 turns stacks off); using 64\n"
		 "tlm[%d]: TLM_RING_SIZE: bad value '3000' (expected a power of two 256..16777216); using 16384\n"
		 "tlm[%d]: TLM_DRAIN_MS: bad value '-4' (expected milliseconds 1..10000); using 20\n"
		 "tlm[%d]: TLM_DROP: bad value 'maybe' (expected 0 or 1); using 0\n",
		 pid, pid, pid, pid);
	assert_string_equal(errbuf, want);
	assert_int_equal(tlm__cfg.stack_depth, 64);
	assert_int_equal(tlm__cfg.ring_slots, 16384);
	assert_int_equal(tlm__cfg.drain_ms, 20);
	assert_false(tlm__cfg.drop);
}

static char out[4200];
static int expand_rc;
static const char *pattern;
static void do_expand(void)
{
	expand_rc = tlm__output_expand(pattern, out, sizeof out);
}

static void test_expand(void **s)
{
	(void)s;
	clear_env();
	char want[512], host[256];
	gethostname(host, sizeof host);
	pattern = "a-%p-%h-%r-%%.trace";
	capture(do_expand);
	assert_int_equal(expand_rc, 0);
	snprintf(want, sizeof want, "a-%d-%s-0-%%.trace", (int)getpid(), host);
	assert_string_equal(out, want);
	setenv("LOCAL_RANK", "5", 1);
	pattern = "r%r";
	capture(do_expand);
	assert_string_equal(out, "r5");
	setenv("RANK", "12", 1);
	capture(do_expand);
	assert_string_equal(out, "r12"); /* RANK wins over LOCAL_RANK */
	pattern = "bad-%x";
	capture(do_expand);
	assert_int_equal(expand_rc, -1);
	snprintf(want, sizeof want,
		 "tlm[%d]: TLM_OUTPUT: bad value 'bad-%%x' (unknown escape %%x; use %%p, %%h, %%r or %%%%)\n",
		 (int)getpid());
	assert_string_equal(errbuf, want);
}

static char final_path[4300];
static int create_fd;
static const char *create_path;
static void do_create(void)
{
	create_fd = tlm__output_create(create_path, final_path, sizeof final_path);
}

static void test_create_safely(void **s)
{
	(void)s;
	char dir[] = "/tmp/tlm-out-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[256], link[256], want[600];
	snprintf(p, sizeof p, "%s/t.trace", dir);
	create_path = p;
	capture(do_create);
	assert_true(create_fd >= 0);
	assert_string_equal(final_path, p);
	struct stat st;
	assert_int_equal(fstat(create_fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	close(create_fd);
	/* exists: the next free suffix, said once */
	capture(do_create);
	assert_true(create_fd >= 0);
	snprintf(want, sizeof want, "%s.1", p);
	assert_string_equal(final_path, want);
	close(create_fd);
	/* a planted symlink is refused */
	snprintf(link, sizeof link, "%s/l.trace", dir);
	assert_int_equal(symlink("/tmp/tlm-victim-never", link), 0);
	create_path = link;
	capture(do_create);
	assert_int_equal(create_fd, -1);
	snprintf(want, sizeof want,
		 "tlm[%d]: refusing to write the trace through the symbolic link %s; recording is off\n",
		 (int)getpid(), link);
	assert_string_equal(errbuf, want);
	assert_int_equal(access("/tmp/tlm-victim-never", F_OK), -1);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* TLM_CUPTI: auto (default), on, off; a bad value is named and auto kept. */
static void test_cupti_mode(void **s)
{
	(void)s;
	static const struct {
		const char *v;
		int mode;
		int complains;
	} cases[] = {
		{NULL, TLM__CUPTI_AUTO, 0}, {"auto", TLM__CUPTI_AUTO, 0}, {"on", TLM__CUPTI_ON, 0},
		{"1", TLM__CUPTI_ON, 0},    {"off", TLM__CUPTI_OFF, 0},   {"0", TLM__CUPTI_OFF, 0},
		{"maybe", TLM__CUPTI_AUTO, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		clear_env();
		if (cases[i].v)
			setenv("TLM_CUPTI", cases[i].v, 1);
		capture(tlm__config_load);
		assert_int_equal(tlm__cfg.cupti, cases[i].mode);
		if (cases[i].complains)
			assert_non_null(strstr(errbuf, "TLM_CUPTI: bad value 'maybe' (expected auto, on or off); using auto\n"));
		else
			assert_string_equal(errbuf, "");
	}
	clear_env();
	setenv("TLM_CUPTI_LIBRARY", "/opt/x/libcupti.so.13", 1);
	capture(tlm__config_load);
	assert_string_equal(tlm__cfg.cupti_library, "/opt/x/libcupti.so.13");
	clear_env();
}

/* a relative TLM_OUTPUT is made absolute at load, a '%' of the directory
 * taken literally; an existing character device is opened, not replaced */
static void test_output_absolute_and_devices(void **s)
{
	(void)s;
	char p[4096] = "out-%p.trace";
	char old[4096];
	assert_non_null(getcwd(old, sizeof old));
	char dir[] = "/tmp/tlm-cfg-%d-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	tlm__output_absolute(p, sizeof p);
	char exp[8192], got[8192];
	snprintf(exp, sizeof exp, "%s/out-%d.trace", dir, (int)getpid());
	assert_int_equal(tlm__output_expand(p, got, sizeof got), 0);
	assert_string_equal(got, exp);
	char abs[4096] = "/abs/x.trace";
	tlm__output_absolute(abs, sizeof abs);
	assert_string_equal(abs, "/abs/x.trace");
	assert_int_equal(chdir(old), 0);
	assert_int_equal(rmdir(dir), 0);
	struct stat st;
	if (stat("/dev/null.1", &st) == 0)
		tlm_test_skip("clean-machine", "/dev/null.1 exists (left by an older tlm): cannot tell whether a trace goes there");
	char final[4300];
	int fd = tlm__output_create("/dev/null", final, sizeof final);
	assert_true(fd >= 0);
	assert_string_equal(final, "/dev/null");
	close(fd);
	assert_int_not_equal(stat("/dev/null.1", &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_output_absolute_and_devices),    cmocka_unit_test(test_good_values),
		cmocka_unit_test(test_bad_values_one_line_each), cmocka_unit_test(test_expand),
		cmocka_unit_test(test_create_safely), cmocka_unit_test(test_cupti_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
