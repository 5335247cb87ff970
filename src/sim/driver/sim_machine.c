// SPDX-License-Identifier: MIT
/*
 * The simulated machine: the devices' physical memory, charged per process
 * (sim_machine.h has the contract; docs/simulated-device.md the behaviour).
 *
 * Sharing: the machine is one fixed-size table (config, per-device used
 * pages, 256 process slots) in a MAP_SHARED mapping of the TLM_SIM_MACHINE
 * file, guarded by a robust process-shared mutex. A robust mutex rather than
 * lock-free atomics because an allocation must check every process's
 * holdings and add its own as one step, and because a process killed while
 * holding the lock must not wedge the others: the next locker gets
 * EOWNERDEAD and recomputes the per-device sums from the slots, whose fields
 * are each written with one store, so the table is consistent again. The
 * file is created and initialised under flock(), so processes starting
 * together agree on one creator.
 *
 * Liveness: a slot names its process by pid and start time (field 22 of
 * /proc/PID/stat), so a recycled pid is not mistaken for the old process; a
 * zombie counts as dead (a real driver frees a process's memory when it
 * exits, not when it is reaped). A slot with this process's own pid and
 * start time that this image did not create is left from before an exec and
 * is dropped, as exec drops the old image's contexts.
 *
 * Fork: a real driver's context is unusable in a fork child, and the child
 * holds none of the parent's device memory. The simulator lets a child go on
 * calling (its copy of the driver state is private), so on a shared machine
 * a child is a new process that starts holding nothing: what it allocates is
 * its own, and its frees give back at most what it holds itself, so the
 * parent's memory is never given back by a child. Without TLM_SIM_MACHINE a
 * child keeps a private copy of everything, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_internal.h"
#include "sim_machine.h"

#define MACHINE_MAGIC 0x316863616d6d6c74ull /* "tlmmach1" */
#define MACHINE_PROCS 256

struct mproc {
	int32_t pid; /* 0: a free slot */
	uint32_t pad;
	uint64_t start;                  /* start time, against pid reuse */
	uint64_t pages[SIM_MAX_DEVICES]; /* device memory held */
	uint32_t ctxs[SIM_MAX_DEVICES];  /* live contexts */
};

struct machine {
	uint64_t magic; /* written last by the creator */
	uint32_t size;  /* sizeof(struct machine): a layout check */
	int32_t ndev;
	uint64_t ctx_pages;
	uint64_t total[SIM_MAX_DEVICES];
	uint64_t used[SIM_MAX_DEVICES]; /* sum over the slots of pages + ctxs * ctx_pages */
	pthread_mutex_t lock;
	struct mproc proc[MACHINE_PROCS];
};

static struct machine priv = {.lock = PTHREAD_MUTEX_INITIALIZER}; /* without TLM_SIM_MACHINE */
static struct machine *m = &priv;
static bool shared;
static int slot = -1;   /* this process's slot */
static pid_t slot_pid;  /* the process that joined it (a fork child differs) */
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;
/* getpid(), cached: every allocation and free asks, and in some sandboxes
 * a getpid() costs microseconds. A fork child's handler forgets it. */
static pid_t self_pid;

static pid_t me(void)
{
	pid_t p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);
	if (!p) {
		p = getpid();
		__atomic_store_n(&self_pid, p, __ATOMIC_RELAXED);
	}
	return p;
}

/* ---- liveness ---- */

/* Whether pid is a live (not zombie) process; its start time in *start
 * (0 when /proc cannot say). */
static bool proc_alive(pid_t pid, uint64_t *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	*start = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? false : kill(pid, 0) == 0 || errno == EPERM;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
	if (!p || p[1] != ' ')
		return true;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return false;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		*start = strtoull(p, NULL, 10);
	return true;
}

static bool slot_alive(const struct mproc *s)
{
	uint64_t start;
	if (!proc_alive(s->pid, &start))
		return false;
	return !start || !s->start || start == s->start;
}

/* ---- the table (machine lock held) ---- */

static void recompute(void)
{
	for (int d = 0; d < m->ndev; d++) {
		uint64_t u = 0;
		for (int i = 0; i < MACHINE_PROCS; i++)
			if (m->proc[i].pid)
				u += m->proc[i].pages[d] + m->proc[i].ctxs[d] * m->ctx_pages;
		m->used[d] = u;
	}
}

static bool mine(int i)
{
	return i == slot && slot_pid == me();
}

/* Dead processes' slots are dropped and their memory comes back. */
static void reclaim(void)
{
	bool dropped = false;
	if (!shared)
		return;
	for (int i = 0; i < MACHINE_PROCS; i++)
		if (m->proc[i].pid && !mine(i) && !slot_alive(&m->proc[i])) {
			m->proc[i].pid = 0;
			dropped = true;
		}
	if (dropped)
		recompute();
}

static void lock(void)
{
	int r = pthread_mutex_lock(&m->lock);
	if (r == EOWNERDEAD) {
		/* a process died inside: its half-made update is recomputed away */
		recompute();
		pthread_mutex_consistent(&m->lock);
	}
}

static void unlock(void)
{
	pthread_mutex_unlock(&m->lock);
}

/* This process's slot, joining the table on first use; -1 if it is full. */
static int join(void)
{
	pid_t self = me();
	uint64_t start;
	if (slot >= 0 && slot_pid == self)
		return slot;
	if (!shared) { /* private: a fork child goes on with its copy */
		slot = 0, slot_pid = self;
		m->proc[0].pid = self;
		return 0;
	}
	proc_alive(self, &start);
	int free_i = -1;
	for (int pass = 0; pass < 2 && free_i < 0; pass++) {
		if (pass)
			reclaim();
		for (int i = 0; i < MACHINE_PROCS; i++) {
			struct mproc *s = &m->proc[i];
			if (s->pid == self && s->start == start) { /* left from before an exec */
				s->pid = 0;
				recompute();
			}
			if (!s->pid && free_i < 0)
				free_i = i;
		}
	}
	if (free_i < 0) {
		static int said;
		if (!said++)
			fprintf(stderr, "tlm-sim: TLM_SIM_MACHINE: the machine's process table is full "
					"(%d processes); this process gets no device memory\n",
				MACHINE_PROCS);
		return -1;
	}
	struct mproc *s = &m->proc[free_i];
	memset(s, 0, sizeof *s);
	s->start = start;
	s->pid = self;
	slot = free_i, slot_pid = self;
	return slot;
}

/* Add pages to the process's holdings when the device has them free
 * (contexts: ctx = true, pages = the context cost). */
static bool take(int dev, uint64_t pages, bool ctx)
{
	bool ok = false;
	if (dev < 0 || dev >= m->ndev)
		return false;
	lock();
	int s = join();
	for (int pass = 0; s >= 0 && pass < 2 && !ok; pass++) {
		if (pass)
			reclaim(); /* short: perhaps a dead process still holds memory */
		if (pages <= m->total[dev] - m->used[dev]) {
			if (ctx)
				m->proc[s].ctxs[dev]++;
			else
				m->proc[s].pages[dev] += pages;
			m->used[dev] += pages;
			ok = true;
		}
	}
	unlock();
	return ok;
}

bool sim_machine_take(int dev, uint64_t pages)
{
	return take(dev, pages, false);
}

bool sim_machine_ctx_take(int dev)
{
	sim_machine_attach();
	return take(dev, m->ctx_pages, true);
}

void sim_machine_give(int dev, uint64_t pages)
{
	if (dev < 0 || dev >= m->ndev)
		return;
	lock();
	int s = join();
	if (s >= 0) {
		uint64_t n = pages < m->proc[s].pages[dev] ? pages : m->proc[s].pages[dev];
		m->proc[s].pages[dev] -= n;
		m->used[dev] -= n;
	}
	unlock();
}

void sim_machine_ctx_give(int dev)
{
	if (dev < 0 || dev >= m->ndev)
		return;
	lock();
	int s = join();
	if (s >= 0 && m->proc[s].ctxs[dev]) {
		m->proc[s].ctxs[dev]--;
		m->used[dev] -= m->ctx_pages;
	}
	unlock();
}

uint64_t sim_machine_used_pages(int dev)
{
	uint64_t u;
	sim_machine_attach();
	if (dev < 0 || dev >= m->ndev)
		return 0;
	lock();
	reclaim();
	u = m->used[dev];
	unlock();
	return u;
}

int sim_machine_processes(int dev, uint32_t *pid, uint64_t *bytes, int max)
{
	int n = 0;
	sim_machine_attach();
	if (dev < 0 || dev >= m->ndev)
		return 0;
	lock();
	reclaim();
	for (int i = 0; i < MACHINE_PROCS; i++) {
		const struct mproc *s = &m->proc[i];
		if (!s->pid || (!s->pages[dev] && !s->ctxs[dev]))
			continue;
		uint64_t b = (s->pages[dev] + s->ctxs[dev] * m->ctx_pages) * SIM_PAGE;
		/* insertion by pid: a stable order for readers and tests */
		int j = n < max ? n : max;
		while (j > 0 && pid[j - 1] > (uint32_t)s->pid) {
			if (j < max)
				pid[j] = pid[j - 1], bytes[j] = bytes[j - 1];
			j--;
		}
		if (j < max)
			pid[j] = (uint32_t)s->pid, bytes[j] = b;
		n++;
	}
	unlock();
	return n;
}

/* ---- configuration and attaching ---- */

static void mib_list(const struct machine *c, char *out, size_t n)
{
	size_t at = (size_t)snprintf(out, n, "%d device%s of", c->ndev, c->ndev == 1 ? "" : "s");
	for (int d = 0; d < c->ndev && at < n; d++)
		at += (size_t)snprintf(out + at, n - at, "%s %llu MiB", d ? "," : "",
				       (unsigned long long)(c->total[d] * 2));
	if (at < n)
		snprintf(out + at, n - at, ", contexts %llu MiB each",
			 (unsigned long long)(c->ctx_pages * 2));
}

static bool same_config(const struct machine *a, const struct machine *b)
{
	if (a->ndev != b->ndev || a->ctx_pages != b->ctx_pages)
		return false;
	for (int d = 0; d < a->ndev; d++)
		if (a->total[d] != b->total[d])
			return false;
	return true;
}

static void init_table(struct machine *t, const struct machine *want)
{
	pthread_mutexattr_t a;
	t->size = sizeof *t;
	t->ndev = want->ndev;
	t->ctx_pages = want->ctx_pages;
	memcpy(t->total, want->total, sizeof t->total);
	memset(t->used, 0, sizeof t->used);
	memset(t->proc, 0, sizeof t->proc);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&t->lock, &a);
	pthread_mutexattr_destroy(&a);
	__atomic_store_n(&t->magic, MACHINE_MAGIC, __ATOMIC_RELEASE);
}

/* Map the machine file, creating it when empty; NULL with *why on failure. */
static struct machine *map_machine(const char *path, const struct machine *want, const char **why)
{
	struct machine *t = NULL;
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	if (flock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0) {
		*why = strerror(errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		goto out;
	}
	if (st.st_size != 0 && st.st_size != (off_t)sizeof *t) {
		*why = "not a simulated machine: wrong size";
		goto out;
	}
	if (st.st_size == 0 && ftruncate(fd, sizeof *t) != 0) {
		*why = strerror(errno);
		goto out;
	}
	t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (t == MAP_FAILED) {
		*why = strerror(errno);
		t = NULL;
		goto out;
	}
	if (st.st_size == 0 || __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == 0) {
		init_table(t, want); /* new, or its creator died before finishing */
	} else if (t->magic != MACHINE_MAGIC || t->size != sizeof *t || t->ndev < 1 ||
		   t->ndev > SIM_MAX_DEVICES) {
		munmap(t, sizeof *t);
		t = NULL;
		*why = "not a simulated machine of this version";
	}
out:
	/* explicitly: the mapping keeps the open file (and so a flock) alive */
	flock(fd, LOCK_UN);
	close(fd);
	return t;
}

static void config(struct machine *c)
{
	uint64_t bytes[SIM_MAX_DEVICES], ctx = SIM_DEFAULT_CONTEXT_MEMORY;
	const char *env = getenv("TLM_SIM_DEVICES");
	c->ndev = SIM_DEFAULT_DEVICES;
	if (env && (c->ndev = sim_parse_devices(env)) < 0) {
		fprintf(stderr, "tlm-sim: TLM_SIM_DEVICES: bad value '%s' (expected 1..%d)\n", env,
			SIM_MAX_DEVICES);
		c->ndev = SIM_DEFAULT_DEVICES;
	}
	env = getenv("TLM_SIM_MEMORY");
	if (!env || !sim_parse_memory(env, bytes)) {
		if (env)
			fprintf(stderr,
				"tlm-sim: TLM_SIM_MEMORY: bad value '%s' (expected e.g. 1G or 1G,512M)\n",
				env);
		for (int i = 0; i < SIM_MAX_DEVICES; i++)
			bytes[i] = SIM_DEFAULT_MEMORY;
	}
	env = getenv("TLM_SIM_CONTEXT_MEMORY");
	if (env && !sim_parse_context_memory(env, &ctx)) {
		fprintf(stderr,
			"tlm-sim: TLM_SIM_CONTEXT_MEMORY: bad value '%s' (expected whole 2 MiB pages, "
			"e.g. 8M, 64M or 0)\n",
			env);
		ctx = SIM_DEFAULT_CONTEXT_MEMORY;
	}
	c->ctx_pages = ctx / SIM_PAGE;
	for (int d = 0; d < SIM_MAX_DEVICES; d++)
		c->total[d] = d < c->ndev ? bytes[d] / SIM_PAGE : 0;
}

/* In a fork child (sim_state.c's handler, which holds sim_lock): the pid
 * changes, and the private machine's lock is made anew. Fork does not wait
 * for that lock: every writer of the table holds sim_lock, which the fork
 * handlers hold, so the child's copy is consistent; the lock itself may have
 * been held by a reader (cuMemGetInfo, NVML on another thread), whose copy in
 * the child would never be unlocked. Not waiting for it matters: a profiler
 * whose fork handler waits for its own thread while that thread asks NVML
 * would deadlock. A shared machine's lock lives in shared memory and its
 * holder, in the parent, releases it. */
void sim_machine_fork_child(void)
{
	__atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
	if (!shared)
		pthread_mutex_init(&priv.lock, NULL);
}

static void do_attach(void)
{
	const char *path = getenv("TLM_SIM_MACHINE"), *why = NULL;
	config(&priv);
	priv.magic = MACHINE_MAGIC;
	priv.size = sizeof priv;
	if (!path || !*path)
		return;
	struct machine *t = map_machine(path, &priv, &why);
	if (!t) {
		fprintf(stderr, "tlm-sim: TLM_SIM_MACHINE: cannot use '%s' (%s); the devices are "
				"private to this process\n",
			path, why);
		return;
	}
	if (!same_config(t, &priv)) {
		char have[512], asked[512];
		mib_list(t, have, sizeof have);
		mib_list(&priv, asked, sizeof asked);
		fprintf(stderr, "tlm-sim: TLM_SIM_MACHINE '%s' has %s (its creator's); this process "
				"asked for %s and uses the machine's\n",
			path, have, asked);
	}
	m = t;
	shared = true;
	lock();
	reclaim();
	unlock();
}

void sim_machine_attach(void)
{
	pthread_once(&attach_once, do_attach);
}

int sim_machine_ndev(void)
{
	sim_machine_attach();
	return m->ndev;
}

uint64_t sim_machine_total_pages(int dev)
{
	sim_machine_attach();
	return dev >= 0 && dev < m->ndev ? m->total[dev] : 0;
}

uint64_t sim_machine_ctx_pages(void)
{
	sim_machine_attach();
	return m->ctx_pages;
}

bool sim_machine_shared(void)
{
	sim_machine_attach();
	return shared;
}

/* ---- the exported view, for the NVML stand-in ---- */

int sim_tlm_sim_machine_devices(void)
{
	return sim_machine_ndev();
}
SIM_EXPORT(tlm_sim_machine_devices);

int sim_tlm_sim_machine_memory(int dev, unsigned long long *total, unsigned long long *used)
{
	if (dev < 0 || dev >= sim_machine_ndev() || !total || !used)
		return -1;
	*total = m->total[dev] * SIM_PAGE;
	*used = sim_machine_used_pages(dev) * SIM_PAGE;
	return 0;
}
SIM_EXPORT(tlm_sim_machine_memory);

int sim_tlm_sim_machine_processes(int dev, unsigned *pids, unsigned long long *bytes, int max)
{
	uint32_t p[MACHINE_PROCS];
	uint64_t b[MACHINE_PROCS];
	if (dev < 0 || dev >= sim_machine_ndev() || max < 0 || (max && (!pids || !bytes)))
		return -1;
	int n = sim_machine_processes(dev, p, b, MACHINE_PROCS);
	for (int i = 0; i < n && i < max; i++)
		pids[i] = p[i], bytes[i] = b[i];
	return n;
}
SIM_EXPORT(tlm_sim_machine_processes);

int sim_tlm_sim_device_ids(int dev, unsigned char uuid[16], int *pci_bus)
{
	if (dev < 0 || dev >= sim_machine_ndev())
		return -1;
	if (uuid)
		sim_device_uuid(dev, uuid);
	if (pci_bus)
		*pci_bus = sim_device_pci_bus(dev);
	return 0;
}
SIM_EXPORT(tlm_sim_device_ids);

unsigned long long sim_tlm_sim_context_bytes(void)
{
	return sim_machine_ctx_pages() * SIM_PAGE;
}
SIM_EXPORT(tlm_sim_context_bytes);
