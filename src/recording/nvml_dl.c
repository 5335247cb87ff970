/* SPDX-License-Identifier: MIT */
/*
 * nvml_dl.c - NVML's list of the processes using a device, for DEVPROCS
 * records, asked by the writer thread (writer_devmem.c).
 *
 * libnvidia-ml.so.1 is opened (RTLD_NOW | RTLD_LOCAL, never a link-time
 * dependency) and initialised by the thread that starts the recording,
 * inside the host's first recorded CUDA call, once, never shut down (the
 * host may use NVML too: its init/shutdown count is its own); the writer
 * thread only asks. It must not load: a dlopen takes the loader's load lock,
 * then its list lock for a new object (ThreadSanitizer's dlopen also walks
 * the list under a lock of its own, even for a loaded one); a host that
 * calls dlopen inside a dl_iterate_phdr callback holds the list lock and
 * wants the load lock, and the two deadlock (seen:
 * test_dlclose_inside_dl_iterate_phdr under TSan, 3 runs in 300, the writer
 * in this dlopen; then 3 in 300 in the simulated NVML's first dlopen of the
 * driver, now made in its nvmlInit). A process that ends before it started
 * recording never loads NVML (a vfork child's exit ending the parent's trace
 * from a TLS destructor: loading then ran constructors in the middle of
 * exit). A CUDA
 * ordinal maps to an NVML device by its PCI bus id (cuDeviceGetPCIBusId),
 * read on a recording thread at the device's first memory sample
 * (tlm__nvml_note_device), else by the writer, cached per device. The process list is asked with
 * nvmlDeviceGetComputeRunningProcesses_v3, else _v2, else the unversioned
 * call (entries of 24, 24 and 16 bytes: nvml.h's nvmlProcessInfo_t,
 * nvmlProcessInfo_v2_t and nvmlProcessInfo_v1_t), in one call with room
 * for MAXP processes. Each kind of failure is said once and recorded as a
 * status; nothing here can stop the recording.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "recording/config.h"
#include "recording/driver_query.h"
#include "recording/log.h"
#include "recording/nvml_dl.h"
#include "recording/realsym.h"
#include "recording/reserved_table.h"

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define MAXP 1024u

typedef int (*init_fn)(void);
typedef int (*by_bus_fn)(const char *, void **);
typedef int (*procs_fn)(void *, unsigned *, void *);

static int state;      /* 0 untried, 1 ready, 2 unusable */
static int init_status;/* status recorded while unusable */
static by_bus_fn by_bus;
static procs_fn procs;
static size_t stride;
static struct {
	int tried;  /* 0 no, 1 handle below, 2 failed with status */
	int status;
	void *h;
} dev[TLM__DM_DEVS];
static unsigned char buf[MAXP * 32];
/* Each device's PCI bus id as read on a recording thread at its first device
 * memory sample, while the program's CUDA certainly answers (the writer's
 * NVML query may come at exit, later than the driver does: on an H200,
 * short programs' queries found no bus id). 0 unread, 1 being read, 2 read,
 * 3 the driver gave none. */
static struct {
	_Atomic int st;
	char id[32];
} bus_of[TLM__DM_DEVS];

void tlm__nvml_note_device(int device)
{
	if (device < 0 || device >= TLM__DM_DEVS || atomic_load_explicit(&bus_of[device].st, memory_order_acquire))
		return;
	int unread = 0;
	if (!atomic_compare_exchange_strong(&bus_of[device].st, &unread, 1))
		return;
	bool ok = tlm__device_pci_bus_id(device, bus_of[device].id, sizeof bus_of[device].id);
	atomic_store_explicit(&bus_of[device].st, ok ? 2 : 3, memory_order_release);
}

static bool bus_id(int device, char *out, int len)
{
	if (atomic_load_explicit(&bus_of[device].st, memory_order_acquire) == 2) {
		snprintf(out, (size_t)len, "%s", bus_of[device].id);
		return true;
	}
	return tlm__device_pci_bus_id(device, out, len);
}

static void *sym(void *h, const char *name)
{
	return tlm__real_dlsym ? tlm__real_dlsym(h, name) : NULL;
}

void tlm__nvml_open(void)
{
	if (state)
		return; /* once (a fork child has its parent's) */
	state = 2;
	init_status = TLM_DEVPROCS_NO_NVML;
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		tlm__log("NVML: libnvidia-ml.so.1 could not be loaded: the trace has no per-process device memory");
		return;
	}
	init_fn init = (init_fn)sym(h, "nvmlInit_v2");
	if (!init)
		init = (init_fn)sym(h, "nvmlInit");
	by_bus = (by_bus_fn)sym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	if (!by_bus)
		by_bus = (by_bus_fn)sym(h, "nvmlDeviceGetHandleByPciBusId");
	static const struct {
		const char *name;
		size_t stride;
	} calls[] = {
		{"nvmlDeviceGetComputeRunningProcesses_v3", 24},
		{"nvmlDeviceGetComputeRunningProcesses_v2", 24},
		{"nvmlDeviceGetComputeRunningProcesses", 16},
	};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0] && !procs; i++) {
		procs = (procs_fn)sym(h, calls[i].name);
		stride = calls[i].stride;
	}
	if (!init || !by_bus || !procs) {
		tlm__log("NVML: libnvidia-ml.so.1 lacks %s: the trace has no per-process device memory",
			 !init ? "nvmlInit_v2" : !by_bus ? "nvmlDeviceGetHandleByPciBusId_v2"
							 : "nvmlDeviceGetComputeRunningProcesses");
		return;
	}
	int r = init();
	if (r != NVML_SUCCESS) {
		tlm__log("NVML: nvmlInit_v2 failed (NVML error %d): the trace has no per-process device memory", r);
		init_status = r;
		return;
	}
	state = 1;
}

static void *handle(int device, int *status)
{
	if (device < 0 || device >= TLM__DM_DEVS) {
		*status = TLM_DEVPROCS_NO_NVML;
		return NULL;
	}
	if (!dev[device].tried) {
		char bus[64] = "";
		dev[device].tried = 2;
		dev[device].status = TLM_DEVPROCS_NO_NVML;
		if (!bus_id(device, bus, sizeof bus)) {
			tlm__log_once(nvml_bus, "NVML: the driver gave no PCI bus id for device %d: no NVML process list for it",
				      device);
		} else {
			int r = by_bus(bus, &dev[device].h);
			if (r == NVML_SUCCESS && dev[device].h) {
				dev[device].tried = 1;
			} else {
				dev[device].status = r ? r : TLM_DEVPROCS_NO_NVML;
				tlm__log_once(nvml_handle, "NVML: no device at PCI bus id %s (NVML error %d): no NVML "
					      "process list for CUDA device %d", bus, r, device);
			}
		}
	}
	*status = dev[device].status;
	return dev[device].tried == 1 ? dev[device].h : NULL;
}

void tlm__nvml_procs(int device, struct tlm_rec_devprocs *out)
{
	out->n = 0;
	if (state != 1) {
		out->status = state ? init_status : TLM_DEVPROCS_NO_NVML;
		return;
	}
	int st;
	void *h = handle(device, &st);
	if (!h) {
		out->status = st;
		return;
	}
	unsigned n = MAXP;
	int r = procs(h, &n, buf);
	out->status = r;
	if (r != NVML_SUCCESS)
		return; /* NOT_SUPPORTED, INSUFFICIENT_SIZE (more than MAXP), ...: recorded as it is */
	if (n > MAXP)
		n = MAXP;
	for (unsigned i = 0; i < n && out->n < TLM_MAX_DEVPROCS; i++) {
		const unsigned char *e = buf + (size_t)i * stride;
		uint32_t pid;
		uint64_t used;
		memcpy(&pid, e, 4);
		memcpy(&used, e + 8, 8); /* after the pid's padding; ULLONG_MAX = not available */
		out->p[out->n].pid = pid;
		out->p[out->n].used = used;
		out->n++;
	}
}
