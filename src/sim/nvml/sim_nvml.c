/* SPDX-License-Identifier: MIT */
/*
 * sim_nvml.c - libnvidia-ml.so.1 for the simulated device (NVML, the
 * management library every NVIDIA driver installs next to libcuda.so.1).
 *
 * Contract: `tlm run --simulate` preloads it, so a program's
 * dlopen("libnvidia-ml.so.1") finds it (same soname) instead of a missing or
 * real NVML. It answers from the simulated driver's machine (found with
 * dlopen("libcuda.so.1"); its tlm_sim_machine_* calls need no cuInit): the
 * device count, a distinct handle per device (by index or by the PCI bus id
 * cuDeviceGetPCIBusId gives), index, UUID, memory (total, and used by every
 * process on the machine, contexts included) and the compute processes with
 * their used memory, in the v1 layout (the unversioned call) and the v2/v3
 * layout, with NVML's count protocol (NVML_ERROR_INSUFFICIENT_SIZE and the
 * count needed). PyTorch's needs stay as before: init/shutdown succeed,
 * the CUDA driver version is the simulated driver's, and fabric and NVLink
 * queries are NVML_ERROR_NOT_SUPPORTED ("fabric info unknown"). Init is not
 * required before a query (PyTorch asks for a handle without checking that
 * init ran). The structures are declared here from NVIDIA's nvml.h layouts:
 * docs/simulated-device.md.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_nvml.h"

#define MAX_PROCS 256
#define NO_INSTANCE 0xFFFFFFFFu /* gpuInstanceId / computeInstanceId outside MIG */

/* nvml.h's nvmlProcessInfo_v1_t (16 bytes) and nvmlProcessInfo_v2_t, which
 * is also nvmlProcessInfo_t, the _v3 call's (24 bytes). */
struct proc_v1 {
	unsigned int pid;
	unsigned long long usedGpuMemory;
};
struct proc_v2 {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
};
/* nvmlMemory_t and nvmlMemory_v2_t (version = NVML_STRUCT_VERSION(Memory, 2)). */
struct mem_v1 {
	unsigned long long total, free, used;
};
struct mem_v2 {
	unsigned int version;
	unsigned long long total, reserved, free, used;
};
#define MEM_V2_VERSION ((unsigned)sizeof(struct mem_v2) | (2u << 24))

_Static_assert(sizeof(struct proc_v1) == 16, "nvmlProcessInfo_v1_t");
_Static_assert(sizeof(struct proc_v2) == 24, "nvmlProcessInfo_v2_t");
_Static_assert(sizeof(struct mem_v2) == 40, "nvmlMemory_v2_t");


/* ---- the simulated driver ---- */

static struct {
	int (*devices)(void);
	int (*memory)(int, unsigned long long *, unsigned long long *);
	int (*processes)(int, unsigned *, unsigned long long *, int);
	int (*ids)(int, unsigned char *, int *);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static char handles[MAX_DEVICES];

static void find_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) { /* beside this library, as in build/src/sim */
		Dl_info info;
		char path[4096];
		const char *slash;
		if (dladdr((void *)find_driver, &info) && info.dli_fname &&
		    (slash = strrchr(info.dli_fname, '/')) &&
		    snprintf(path, sizeof path, "%.*s/libcuda.so.1", (int)(slash - info.dli_fname),
			     info.dli_fname) < (int)sizeof path)
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	if (!h)
		return;
	*(void **)&drv.devices = dlsym(h, "tlm_sim_machine_devices");
	*(void **)&drv.memory = dlsym(h, "tlm_sim_machine_memory");
	*(void **)&drv.processes = dlsym(h, "tlm_sim_machine_processes");
	*(void **)&drv.ids = dlsym(h, "tlm_sim_device_ids");
	if (!drv.memory || !drv.processes || !drv.ids)
		drv.devices = NULL; /* a real driver, or none: no devices to answer for */
}

static int ndev(void)
{
	pthread_once(&drv_once, find_driver);
	if (!drv.devices)
		return -1;
	int n = drv.devices();
	return n > MAX_DEVICES ? MAX_DEVICES : n;
}

int simnvml_dev(nvml_device d)
{
	char *p = d;
	int n = ndev();
	if (p < handles || p >= handles + MAX_DEVICES || p - handles >= n)
		return -1;
	return (int)(p - handles);
}

int simnvml_bus(int dev)
{
	int b = -1;
	return dev >= 0 && drv.ids(dev, NULL, &b) == 0 ? b : -1;
}

/* ---- init, system ---- */

API int nvmlInit_v2(void);
API int nvmlInit(void);
API int nvmlInitWithFlags(unsigned flags);
API int nvmlShutdown(void);
API int nvmlSystemGetCudaDriverVersion_v2(int *version);
API int nvmlSystemGetCudaDriverVersion(int *version);
API const char *nvmlErrorString(int result);

/* Init finds the driver (the queries then never dlopen: a dlopen on a
 * profiler's thread can deadlock with a host's inside dl_iterate_phdr;
 * src/recording/nvml_dl.c); a query without init finds it itself. */
int nvmlInit_v2(void) { pthread_once(&drv_once, find_driver); return NVML_SUCCESS; }
int nvmlInit(void) { return nvmlInit_v2(); }
int nvmlInitWithFlags(unsigned flags) { (void)flags; return nvmlInit_v2(); }
int nvmlShutdown(void) { return NVML_SUCCESS; }

int nvmlSystemGetCudaDriverVersion_v2(int *version)
{
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	*version = 13000; /* the simulated driver's (SIM_DRIVER_VERSION) */
	return NVML_SUCCESS;
}

int nvmlSystemGetCudaDriverVersion(int *version)
{
	return nvmlSystemGetCudaDriverVersion_v2(version);
}

const char *nvmlErrorString(int result)
{
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument Version Mismatch";
	default: return "Unknown Error";
	}
}

/* ---- devices ---- */

API int nvmlDeviceGetCount_v2(unsigned *count);
API int nvmlDeviceGetCount(unsigned *count);
API int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvml_device *device);
API int nvmlDeviceGetHandleByIndex(unsigned index, nvml_device *device);
API int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvml_device *device);
API int nvmlDeviceGetHandleByPciBusId(const char *bus_id, nvml_device *device);
API int nvmlDeviceGetIndex(nvml_device device, unsigned *index);
API int nvmlDeviceGetUUID(nvml_device device, char *uuid, unsigned length);

int nvmlDeviceGetCount_v2(unsigned *count)
{
	int n = ndev();
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (n < 0)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	*count = (unsigned)n;
	return NVML_SUCCESS;
}

int nvmlDeviceGetCount(unsigned *count)
{
	return nvmlDeviceGetCount_v2(count);
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvml_device *device)
{
	int n = ndev();
	if (!device || n < 0 || index >= (unsigned)n)
		return n < 0 && device ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_ERROR_INVALID_ARGUMENT;
	*device = &handles[index];
	return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex(unsigned index, nvml_device *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

/* "DDDDDDDD:BB:DD.F" (the domain may be 4 digits, as sysfs writes it) ->
 * the device whose bus it is; case and the domain's length do not matter. */
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvml_device *device)
{
	unsigned dom, bus, slot, fn;
	char end;
	int n = ndev();
	if (!bus_id || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (n < 0)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (sscanf(bus_id, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &end) != 4)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int d = 0; d < n; d++) {
		int b;
		if (drv.ids(d, NULL, &b) == 0 && dom == 0 && slot == 0 && fn == 0 &&
		    bus == (unsigned)b) {
			*device = &handles[d];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

int nvmlDeviceGetHandleByPciBusId(const char *bus_id, nvml_device *device)
{
	return nvmlDeviceGetHandleByPciBusId_v2(bus_id, device);
}

int nvmlDeviceGetIndex(nvml_device device, unsigned *index)
{
	int d = simnvml_dev(device);
	if (d < 0 || !index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = (unsigned)d;
	return NVML_SUCCESS;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": 41 characters and the NUL. */
int nvmlDeviceGetUUID(nvml_device device, char *uuid, unsigned length)
{
	unsigned char u[16];
	int d = simnvml_dev(device);
	if (d < 0 || !uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (length < 42)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	drv.ids(d, u, NULL);
	snprintf(uuid, length,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	return NVML_SUCCESS;
}

/* ---- memory and processes ---- */

API int nvmlDeviceGetMemoryInfo(nvml_device device, struct mem_v1 *memory);
API int nvmlDeviceGetMemoryInfo_v2(nvml_device device, struct mem_v2 *memory);
API int nvmlDeviceGetComputeRunningProcesses(nvml_device device, unsigned *count,
					     struct proc_v1 *infos);
API int nvmlDeviceGetComputeRunningProcesses_v2(nvml_device device, unsigned *count,
						struct proc_v2 *infos);
API int nvmlDeviceGetComputeRunningProcesses_v3(nvml_device device, unsigned *count,
						struct proc_v2 *infos);

static int memory(nvml_device device, unsigned long long *total, unsigned long long *used)
{
	int d = simnvml_dev(device);
	if (d < 0 || drv.memory(d, total, used) != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

int nvmlDeviceGetMemoryInfo(nvml_device device, struct mem_v1 *m)
{
	unsigned long long t, u;
	int r = m ? memory(device, &t, &u) : NVML_ERROR_INVALID_ARGUMENT;
	if (r)
		return r;
	m->total = t, m->used = u, m->free = t - u;
	return NVML_SUCCESS;
}

int nvmlDeviceGetMemoryInfo_v2(nvml_device device, struct mem_v2 *m)
{
	unsigned long long t, u;
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != MEM_V2_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	int r = memory(device, &t, &u);
	if (r)
		return r;
	m->total = t, m->reserved = 0, m->used = u, m->free = t - u;
	return NVML_SUCCESS;
}

/* The count protocol: *count in = room in infos; too little room (or
 * infos NULL with processes to list) -> INSUFFICIENT_SIZE and *count = the
 * number needed; else the processes and their number. */
static int processes(nvml_device device, unsigned *count, void *infos, int v2)
{
	unsigned pid[MAX_PROCS];
	unsigned long long bytes[MAX_PROCS];
	int d = simnvml_dev(device);
	if (d < 0 || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	int n = drv.processes(d, pid, bytes, MAX_PROCS);
	if (n < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (n > MAX_PROCS)
		n = MAX_PROCS;
	if (*count < (unsigned)n || (n && !infos)) {
		*count = (unsigned)n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (int i = 0; i < n; i++) {
		if (v2)
			((struct proc_v2 *)infos)[i] =
				(struct proc_v2){pid[i], bytes[i], NO_INSTANCE, NO_INSTANCE};
		else
			((struct proc_v1 *)infos)[i] = (struct proc_v1){pid[i], bytes[i]};
	}
	*count = (unsigned)n;
	return NVML_SUCCESS;
}

int nvmlDeviceGetComputeRunningProcesses(nvml_device device, unsigned *count,
					 struct proc_v1 *infos)
{
	return processes(device, count, infos, 0);
}

int nvmlDeviceGetComputeRunningProcesses_v2(nvml_device device, unsigned *count,
					    struct proc_v2 *infos)
{
	return processes(device, count, infos, 1);
}

int nvmlDeviceGetComputeRunningProcesses_v3(nvml_device device, unsigned *count,
					    struct proc_v2 *infos)
{
	return processes(device, count, infos, 1);
}
