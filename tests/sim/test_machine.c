// SPDX-License-Identifier: MIT
/*
 * The simulated machine, exactly: a context's cost (8 MiB by default) in
 * cuMemGetInfo and nowhere in the allocation APIs; processes sharing one
 * TLM_SIM_MACHINE (sim_holder processes hold known amounts, this one sees
 * free = total - theirs - contexts and runs out exactly there); SIGKILL
 * and zombie reclaim; a fork child's accounting; the NVML stand-in's
 * answers and count protocol. Runs with TLM_SIM_MEMORY=64M,
 * TLM_SIM_DEVICES=2; main() names a fresh machine file.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_test.h"
#include "tlm_test.h"

/* not in sim_driver.h (cuda.h's prototypes) */
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev);
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);

static char machine[64] = "/tmp/tlm-test-machine-XXXXXX";

/* ---- holders: other processes on the machine ---- */

struct holder {
	pid_t pid;
	int in;      /* its stdin: closing it lets it free and exit */
	FILE *out;   /* its stdout */
	int err;     /* its stderr */
	int hpid, ndev;
	long long pages;
	unsigned long long free;
};

/* env: "NAME=VALUE" strings for the holder only ("NAME=" with nothing after
 * the = unsets NAME). */
static void holder_start(struct holder *h, const char *mib, const char *const *env)
{
	int in[2], out[2], err[2];
	/* close-on-exec: no holder keeps another's stdin open */
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);
	h->pid = fork();
	assert_true(h->pid >= 0);
	if (h->pid == 0) {
		tlm_test_child_signals();
		dup2(in[0], 0), dup2(out[1], 1), dup2(err[1], 2);
		for (int i = 0; env && env[i]; i++) {
			char name[64];
			const char *eq = strchr(env[i], '=');
			snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
			if (eq[1])
				setenv(name, eq + 1, 1);
			else
				unsetenv(name);
		}
		execl(getenv("TLM_TEST_HOLDER"), "sim_holder", mib, (char *)NULL);
		_exit(127);
	}
	close(in[0]), close(out[1]), close(err[1]);
	h->in = in[1];
	h->err = err[0];
	h->out = fdopen(out[0], "r");
	assert_non_null(h->out);
	assert_int_equal(fscanf(h->out, "ready %d %lld %d %llu", &h->hpid, &h->pages, &h->ndev, &h->free),
			 4);
	assert_int_equal(h->hpid, h->pid);
}

/* What the holder wrote on stderr (after it ended). */
static void holder_stderr(struct holder *h, char *buf, size_t n)
{
	ssize_t k, at = 0;
	while ((k = read(h->err, buf + at, n - 1 - (size_t)at)) > 0)
		at += k;
	buf[at] = 0;
}

static void holder_done(struct holder *h)
{
	fclose(h->out);
	close(h->err);
}

static void holder_stop(struct holder *h)
{
	int st;
	close(h->in);
	assert_int_equal(waitpid(h->pid, &st, 0), h->pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static size_t free_now(void)
{
	size_t f, t;
	CU_OK(cuMemGetInfo_v2(&f, &t));
	assert_int_equal(t, 64 * MiB);
	return f;
}

static unsigned long long machine_used(int dev)
{
	unsigned long long t, u;
	assert_int_equal(tlm_sim_machine_memory(dev, &t, &u), 0);
	assert_int_equal(t, 64 * MiB);
	return u;
}

/* ---- context cost ---- */

/* First: a fresh process holds nothing until a context is live. */
static void test_context_cost(void **state)
{
	(void)state;
	CUcontext p0, p0b, c;
	assert_int_equal(machine_used(0), 0);
	assert_int_equal(tlm_sim_context_bytes(), 8 * MiB);
	CU_OK(cuInit(0));
	assert_int_equal(machine_used(0), 0); /* cuInit makes no context */
	CU_OK(cuDevicePrimaryCtxRetain(&p0, 0));
	CU_OK(cuCtxSetCurrent(p0));
	assert_int_equal(free_now(), 56 * MiB);
	assert_int_equal(tlm_sim_used_pages(0), 0); /* no allocation API sees it */
	CU_OK(cuDevicePrimaryCtxRetain(&p0b, 0)); /* the same context: no more cost */
	assert_int_equal(free_now(), 56 * MiB);
	CU_OK(cuCtxCreate_v2(&c, 0, 1)); /* a created context costs as much */
	assert_int_equal(machine_used(1), 8 * MiB);
	CU_OK(cuCtxDestroy_v2(c));
	assert_int_equal(machine_used(1), 0);
	CU_OK(cuCtxCreate_v2(&c, 0, 0));
	assert_int_equal(free_now(), 48 * MiB);
	CU_OK(cuCtxDestroy_v2(c));
	assert_int_equal(free_now(), 56 * MiB);
	/* the last release destroys the primary context; a reset too */
	CU_OK(cuDevicePrimaryCtxRelease_v2(0));
	assert_int_equal(machine_used(0), 8 * MiB);
	CU_OK(cuDevicePrimaryCtxRelease_v2(0));
	assert_int_equal(machine_used(0), 0);
	CU_OK(cuDevicePrimaryCtxRetain(&p0, 0));
	assert_int_equal(machine_used(0), 8 * MiB);
	CU_OK(cuDevicePrimaryCtxReset_v2(0));
	assert_int_equal(machine_used(0), 0);
	CU_OK(cuDevicePrimaryCtxRetain(&p0, 0)); /* live again for the tests below */
	assert_int_equal(free_now(), 56 * MiB);
}

static void test_context_can_oom(void **state)
{
	(void)state;
	CUdeviceptr all;
	CUcontext c;
	CU_OK(cuMemAlloc_v2(&all, 50 * MiB)); /* 6 MiB left: less than a context */
	assert_int_equal(cuCtxCreate_v2(&c, 0, 0), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(free_now(), 6 * MiB);
	CU_OK(cuMemFree_v2(all));
	CU_OK(cuMemAlloc_v2(&all, 48 * MiB)); /* 8 MiB left: exactly one */
	CU_OK(cuCtxCreate_v2(&c, 0, 0));
	assert_int_equal(free_now(), 0);
	CU_OK(cuCtxDestroy_v2(c));
	CU_OK(cuMemFree_v2(all));
}

/* TLM_SIM_CONTEXT_MEMORY in a process of its own (no machine). */
static void test_context_memory_values(void **state)
{
	(void)state;
	static const struct {
		const char *v;
		unsigned long long free;
		const char *err;
	} cases[] = {
		{"TLM_SIM_CONTEXT_MEMORY=0", 60 * MiB, ""},
		{"TLM_SIM_CONTEXT_MEMORY=64M", 0, NULL}, /* the context takes it all: no 4 MiB */
		{"TLM_SIM_CONTEXT_MEMORY=16M", 44 * MiB, ""},
		{"TLM_SIM_CONTEXT_MEMORY=3M", 52 * MiB,
		 "tlm-sim: TLM_SIM_CONTEXT_MEMORY: bad value '3M' (expected whole 2 MiB pages, e.g. 8M, "
		 "64M or 0)\n"},
		{"TLM_SIM_CONTEXT_MEMORY=lots", 52 * MiB,
		 "tlm-sim: TLM_SIM_CONTEXT_MEMORY: bad value 'lots' (expected whole 2 MiB pages, e.g. "
		 "8M, 64M or 0)\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct holder h;
		char err[512];
		const char *env[] = {"TLM_SIM_MACHINE=", cases[i].v, NULL};
		if (!cases[i].err) { /* the holder cannot allocate: it says "failed" */
			int st;
			h.pid = 0;
			char cmd[256];
			snprintf(cmd, sizeof cmd,
				 "TLM_SIM_MACHINE= TLM_SIM_CONTEXT_MEMORY=64M %s 4 </dev/null | grep -qx failed",
				 getenv("TLM_TEST_HOLDER"));
			st = system(cmd);
			assert_int_equal(st, 0);
			continue;
		}
		holder_start(&h, "4", env);
		assert_int_equal(h.free, cases[i].free);
		holder_stop(&h);
		holder_stderr(&h, err, sizeof err);
		assert_string_equal(err, cases[i].err);
		holder_done(&h);
	}
	assert_int_equal(free_now(), 56 * MiB); /* none of them was on this machine */
}

/* ---- sharing ---- */

typedef int (*nvml_count_fn)(unsigned *);
typedef int (*nvml_index_fn)(unsigned, void **);
typedef int (*nvml_bus_fn)(const char *, void **);
typedef int (*nvml_getindex_fn)(void *, unsigned *);
typedef int (*nvml_uuid_fn)(void *, char *, unsigned);
typedef int (*nvml_void_fn)(void);
struct proc_v1 { unsigned pid; unsigned long long used; };
struct proc_v3 { unsigned pid; unsigned long long used; unsigned gi, ci; };
struct mem_v1 { unsigned long long total, free, used; };
struct mem_v2 { unsigned version; unsigned long long total, reserved, free, used; };
typedef int (*nvml_procs1_fn)(void *, unsigned *, struct proc_v1 *);
typedef int (*nvml_procs3_fn)(void *, unsigned *, struct proc_v3 *);
typedef int (*nvml_mem1_fn)(void *, struct mem_v1 *);
typedef int (*nvml_mem2_fn)(void *, struct mem_v2 *);

static void *nvml(const char *name)
{
	static void *h;
	if (!h)
		h = dlopen(getenv("TLM_TEST_NVML"), RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	void *f = dlsym(h, name);
	assert_non_null(f);
	return f;
}

static void *nvml_dev(unsigned i)
{
	void *d = NULL;
	assert_int_equal(((nvml_index_fn)nvml("nvmlDeviceGetHandleByIndex_v2"))(i, &d), 0);
	return d;
}

static void test_two_processes(void **state)
{
	(void)state;
	struct holder h;
	CUdeviceptr all, more;
	holder_start(&h, "20", NULL);
	assert_int_equal(h.pages, 10);
	/* the holder saw this process's context and its own: 64 - 8 - 8 - 20 */
	assert_int_equal(h.free, 28 * MiB);
	assert_int_equal(free_now(), 28 * MiB);
	CU_OK(cuMemAlloc_v2(&all, 28 * MiB));
	assert_int_equal(cuMemAlloc_v2(&more, 1), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(tlm_sim_used_pages(0), 14); /* only this process's own */

	/* NVML: both processes, by pid, with their contexts; the count protocol */
	nvml_procs1_fn p1 = (nvml_procs1_fn)nvml("nvmlDeviceGetComputeRunningProcesses");
	nvml_procs3_fn p3 = (nvml_procs3_fn)nvml("nvmlDeviceGetComputeRunningProcesses_v3");
	nvml_procs3_fn p2 = (nvml_procs3_fn)nvml("nvmlDeviceGetComputeRunningProcesses_v2");
	void *d0 = nvml_dev(0), *d1 = nvml_dev(1);
	struct proc_v3 v3[4];
	struct proc_v1 v1[4];
	unsigned n = 0;
	assert_int_equal(p3(d0, &n, NULL), 7); /* NVML_ERROR_INSUFFICIENT_SIZE */
	assert_int_equal(n, 2);
	n = 1;
	assert_int_equal(p3(d0, &n, v3), 7);
	assert_int_equal(n, 2);
	n = 4;
	assert_int_equal(p3(d0, &n, v3), 0);
	assert_int_equal(n, 2);
	pid_t me = getpid(), lo = me < h.pid ? me : h.pid, hi = me < h.pid ? h.pid : me;
	unsigned long long mine = 8 * MiB + 28 * MiB, theirs = 8 * MiB + 20 * MiB;
	assert_int_equal(v3[0].pid, lo);
	assert_int_equal(v3[1].pid, hi);
	assert_int_equal(v3[0].used, lo == me ? mine : theirs);
	assert_int_equal(v3[1].used, hi == me ? mine : theirs);
	assert_int_equal(v3[0].gi, 0xFFFFFFFFu);
	assert_int_equal(v3[0].ci, 0xFFFFFFFFu);
	memset(v3, 0, sizeof v3);
	n = 2;
	assert_int_equal(p2(d0, &n, v3), 0);
	assert_int_equal(v3[1].pid, hi);
	n = 2;
	assert_int_equal(p1(d0, &n, v1), 0); /* the 16-byte layout */
	assert_int_equal(v1[0].pid, lo);
	assert_int_equal(v1[1].used, hi == me ? mine : theirs);
	n = 0; /* nobody on device 1 */
	assert_int_equal(p3(d1, &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_int_equal(p3(NULL, &n, NULL), 2); /* not a handle */

	struct mem_v1 m1;
	struct mem_v2 m2 = {.version = 2u << 24};
	assert_int_equal(((nvml_mem1_fn)nvml("nvmlDeviceGetMemoryInfo"))(d0, &m1), 0);
	assert_int_equal(m1.total, 64 * MiB);
	assert_int_equal(m1.used, 64 * MiB);
	assert_int_equal(m1.free, 0);
	nvml_mem2_fn mem2 = (nvml_mem2_fn)nvml("nvmlDeviceGetMemoryInfo_v2");
	assert_int_equal(mem2(d0, &m2), 25); /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
	m2.version = (unsigned)sizeof m2 | (2u << 24);
	CU_OK(cuMemFree_v2(all));
	assert_int_equal(mem2(d0, &m2), 0);
	assert_int_equal(m2.total, 64 * MiB);
	assert_int_equal(m2.used, 36 * MiB);
	assert_int_equal(m2.free, 28 * MiB);
	assert_int_equal(m2.reserved, 0);

	holder_stop(&h); /* it freed and exited: all its memory is back */
	holder_done(&h);
	assert_int_equal(free_now(), 56 * MiB);
	n = 4;
	assert_int_equal(p3(d0, &n, v3), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v3[0].pid, me);
	assert_int_equal(v3[0].used, 8 * MiB);
}

static void test_sigkill_gives_memory_back(void **state)
{
	(void)state;
	struct holder h;
	CUdeviceptr p;
	int st;
	holder_start(&h, "40", NULL);
	assert_int_equal(free_now(), 8 * MiB);
	assert_int_equal(cuMemAlloc_v2(&p, 8 * MiB + 1), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(kill(h.pid, SIGKILL), 0);
	/* a zombie holds nothing: its memory is back before it is reaped */
	for (int i = 0; i < 200 && free_now() != 56 * MiB; i++)
		usleep(10000);
	assert_int_equal(free_now(), 56 * MiB);
	assert_int_equal(waitpid(h.pid, &st, 0), h.pid);
	assert_true(WIFSIGNALED(st));
	holder_done(&h);
	close(h.in);

	/* an allocation that finds the device short reclaims first */
	holder_start(&h, "40", NULL);
	assert_int_equal(kill(h.pid, SIGKILL), 0);
	assert_int_equal(waitpid(h.pid, &st, 0), h.pid);
	CU_OK(cuMemAlloc_v2(&p, 56 * MiB));
	CU_OK(cuMemFree_v2(p));
	holder_done(&h);
	close(h.in);
}

/* A fork child is a new process: it starts holding nothing, and never
 * gives the parent's memory back. */
static void test_fork_child(void **state)
{
	(void)state;
	CUdeviceptr a;
	int fds[2], st;
	unsigned long long seen[3];
	CU_OK(cuMemAlloc_v2(&a, 10 * MiB));
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		CUdeviceptr b;
		unsigned long long v[3] = {0};
		if (!cuMemAlloc_v2(&b, 6 * MiB)) {
			v[0] = free_now();
			cuMemFree_v2(b);
			v[1] = free_now();
			cuMemFree_v2(a); /* the parent's: not the child's to give back */
			v[2] = free_now();
		}
		_exit(write(fds[1], v, sizeof v) == sizeof v ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], seen, sizeof seen), sizeof seen);
	close(fds[0]);
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_int_equal(seen[0], 40 * MiB); /* 64 - 8 - 10 (parent) - 6 (child) */
	assert_int_equal(seen[1], 46 * MiB);
	assert_int_equal(seen[2], 46 * MiB);
	assert_int_equal(free_now(), 46 * MiB);
	CU_OK(cuMemFree_v2(a));
	assert_int_equal(free_now(), 56 * MiB);
}

/* A later process asking for other devices gets the machine's, and says so. */
static void test_machine_config_wins(void **state)
{
	(void)state;
	struct holder h;
	char err[1024], want[1024];
	const char *env[] = {"TLM_SIM_DEVICES=1", "TLM_SIM_MEMORY=32M", NULL};
	holder_start(&h, "2", env);
	assert_int_equal(h.ndev, 2);
	assert_int_equal(h.free, 46 * MiB); /* 64 MiB devices: 64 - 8 - 8 - 2 */
	holder_stop(&h);
	holder_stderr(&h, err, sizeof err);
	holder_done(&h);
	snprintf(want, sizeof want,
		 "tlm-sim: TLM_SIM_MACHINE '%s' has 2 devices of 64 MiB, 64 MiB, contexts 8 MiB each "
		 "(its creator's); this process asked for 1 device of 32 MiB, contexts 8 MiB each and "
		 "uses the machine's\n",
		 machine);
	assert_string_equal(err, want);
}

/* A path that cannot be a machine: one line, private devices. */
static void test_bad_machine(void **state)
{
	(void)state;
	static const char *const paths[][2] = {
		{"/nonexistent/dir/m", "No such file or directory"},
		{"/dev/null", "not a regular file"},
		{"/proc/self/exe", NULL}, /* set below: a file of another size */
	};
	char other[64] = "/tmp/tlm-test-notmachine-XXXXXX";
	int fd = mkstemp(other);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not a machine", 13), 13);
	close(fd);
	for (size_t i = 0; i < 3; i++) {
		const char *path = i == 2 ? other : paths[i][0];
		const char *why = i == 2 ? "not a simulated machine: wrong size" : paths[i][1];
		struct holder h;
		char env0[128], err[512], want[512];
		snprintf(env0, sizeof env0, "TLM_SIM_MACHINE=%s", path);
		const char *env[] = {env0, NULL};
		holder_start(&h, "2", env);
		assert_int_equal(h.free, 54 * MiB); /* alone on its own devices */
		holder_stop(&h);
		holder_stderr(&h, err, sizeof err);
		holder_done(&h);
		snprintf(want, sizeof want,
			 "tlm-sim: TLM_SIM_MACHINE: cannot use '%s' (%s); the devices are private to "
			 "this process\n",
			 path, why);
		assert_string_equal(err, want);
	}
	unlink(other);
}

/* ---- NVML identity ---- */

static void test_nvml_devices(void **state)
{
	(void)state;
	unsigned n = 0, idx = 9;
	void *d0 = nvml_dev(0), *d1 = nvml_dev(1), *d = NULL;
	char uuid[64], bus[32];
	assert_int_equal(((nvml_count_fn)nvml("nvmlDeviceGetCount_v2"))(&n), 0);
	assert_int_equal(n, 2);
	assert_ptr_not_equal(d0, d1);
	assert_int_equal(((nvml_index_fn)nvml("nvmlDeviceGetHandleByIndex_v2"))(2, &d), 2);
	assert_int_equal(((nvml_getindex_fn)nvml("nvmlDeviceGetIndex"))(d1, &idx), 0);
	assert_int_equal(idx, 1);
	/* by the bus id the driver gives */
	nvml_bus_fn by_bus = (nvml_bus_fn)nvml("nvmlDeviceGetHandleByPciBusId_v2");
	CU_OK(cuDeviceGetPCIBusId(bus, sizeof bus, 1));
	assert_string_equal(bus, "00000000:18:00.0");
	assert_int_equal(by_bus(bus, &d), 0);
	assert_ptr_equal(d, d1);
	assert_int_equal(by_bus("0000:10:00.0", &d), 0);
	assert_ptr_equal(d, d0);
	assert_int_equal(by_bus("00000000:20:00.0", &d), 6); /* NVML_ERROR_NOT_FOUND */
	assert_int_equal(by_bus("bus ten", &d), 2);
	nvml_uuid_fn get_uuid = (nvml_uuid_fn)nvml("nvmlDeviceGetUUID");
	assert_int_equal(get_uuid(d1, uuid, 41), 7);
	assert_int_equal(get_uuid(d1, uuid, sizeof uuid), 0);
	/* "tlm-simulated-", 0, ordinal: sim_device.c's bytes */
	assert_string_equal(uuid, "GPU-746c6d2d-7369-6d75-6c61-7465642d0001");
	assert_int_equal(((nvml_void_fn)nvml("nvmlDeviceGetGpuFabricInfoV"))(), 3);
	assert_int_equal(((nvml_void_fn)nvml("nvmlInit_v2"))(), 0);
}

int main(void)
{
	int fd = mkstemp(machine);
	if (fd < 0)
		return 1;
	close(fd);
	setenv("TLM_SIM_MACHINE", machine, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_context_cost),
		cmocka_unit_test(test_context_can_oom),
		cmocka_unit_test(test_context_memory_values),
		cmocka_unit_test(test_two_processes),
		cmocka_unit_test(test_sigkill_gives_memory_back),
		cmocka_unit_test(test_fork_child),
		cmocka_unit_test(test_machine_config_wins),
		cmocka_unit_test(test_bad_machine),
		cmocka_unit_test(test_nvml_devices),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(machine);
	return r;
}
