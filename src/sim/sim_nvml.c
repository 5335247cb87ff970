/* SPDX-License-Identifier: MIT */
/*
 * sim_nvml.c - libnvidia-ml.so.1 for the simulated device (NVML, the
 * management library every NVIDIA driver installs next to libcuda.so.1).
 *
 * Contract: `tlm run --simulate` preloads it, so a program's
 * dlopen("libnvidia-ml.so.1") finds it (same soname) instead of a missing or
 * real NVML. PyTorch needs one: its expandable segments ask NVML for the GPU
 * fabric before each mapping and call the entry point without checking that
 * NVML was found, and its peer-access code asserts nvmlInit_v2. Answers:
 * init/shutdown and a device handle (an opaque non-null value) succeed; the
 * CUDA driver version is the simulated driver's; everything describing
 * hardware (fabric, NVLink, running processes) is NVML_ERROR_NOT_SUPPORTED,
 * which PyTorch handles ("fabric info unknown", no per-process lines in its
 * out-of-memory message). No memory effect.
 */
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3

#define API __attribute__((visibility("default")))

API int nvmlInit_v2(void);
API int nvmlInit(void);
API int nvmlInitWithFlags(unsigned flags);
API int nvmlShutdown(void);
API int nvmlSystemGetCudaDriverVersion_v2(int *version);
API int nvmlSystemGetCudaDriverVersion(int *version);
API int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **device);
API int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **device);
API const char *nvmlErrorString(int result);

int nvmlInit_v2(void) { return NVML_SUCCESS; }
int nvmlInit(void) { return NVML_SUCCESS; }
int nvmlInitWithFlags(unsigned flags) { (void)flags; return NVML_SUCCESS; }
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

/* One opaque handle for every device: nothing reads through it. */
static char handle;

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **device)
{
	if (!bus_id || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &handle;
	return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **device)
{
	(void)index;
	if (!device)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &handle;
	return NVML_SUCCESS;
}

const char *nvmlErrorString(int result)
{
	return result == NVML_SUCCESS ? "Success" : result == NVML_ERROR_NOT_SUPPORTED ? "Not Supported"
										     : "Invalid Argument";
}

/* Hardware queries: not supported. Arguments are not declared: the callee
 * never reads them (see sim_blas.c for why that is call-compatible). */
#define NOT_SUPPORTED(name) \
	API int name(void); \
	int name(void) { return NVML_ERROR_NOT_SUPPORTED; }

NOT_SUPPORTED(nvmlDeviceGetGpuFabricInfoV)
NOT_SUPPORTED(nvmlDeviceGetGpuFabricInfo)
NOT_SUPPORTED(nvmlDeviceGetNvLinkRemoteDeviceType)
NOT_SUPPORTED(nvmlDeviceGetNvLinkRemotePciInfo_v2)
NOT_SUPPORTED(nvmlDeviceGetComputeRunningProcesses)
NOT_SUPPORTED(nvmlDeviceGetComputeRunningProcesses_v3)
NOT_SUPPORTED(nvmlDeviceGetMemoryInfo)
NOT_SUPPORTED(nvmlDeviceGetMemoryInfo_v2)
NOT_SUPPORTED(nvmlDeviceGetCount_v2)
