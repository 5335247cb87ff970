// SPDX-License-Identifier: MIT
/*
 * The device model behind the attribute queries: every simulated device is
 * the same H100-class part (compute capability 9.0, 132 SMs, 50 MiB L2),
 * except its memory size (TLM_SIM_MEMORY), its PCI location (domain 0, bus
 * 0x10 + 8 * ordinal, device 0) and its UUID (fixed bytes, the ordinal in
 * the last byte). What a real runtime, cuBLAS and PyTorch ask is answered;
 * an attribute CUDA 13 does not define is CUDA_ERROR_INVALID_VALUE.
 */
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"

/* cuda.h's CUdevice_attribute numbers -> value. Index = attribute. */
static const int attrs[] = {
	[1] = 1024,       [2] = 1024,        [3] = 1024,     [4] = 64,       [5] = 2147483647,
	[6] = 65535,      [7] = 65535,       [8] = 49152,    [9] = 65536,    [10] = 32,
	[11] = 2147483647, [12] = 65536,     [13] = 1980000, [14] = 512,     [15] = 1,
	[16] = 132,       [17] = 0,          [18] = 0,       [19] = 1,       [20] = 0,
	[21] = 131072,    [22] = 131072,     [23] = 65536,   [24] = 16384,   [25] = 16384,
	[26] = 16384,     [27] = 32768,      [28] = 32768,   [29] = 2048,    [30] = 512,
	[31] = 1,         [32] = 1,          [33] = -1 /* per device */,     [34] = 0,
	[35] = 0,         [36] = 2619000,    [37] = 5120,    [38] = 52428800, [39] = 2048,
	[40] = 3,         [41] = 1,          [42] = 32768,   [43] = 2048,    [44] = 1,
	[45] = 32768,     [46] = 32768,      [47] = 8192,    [48] = 8192,    [49] = 32768,
	[50] = 0,         [51] = 32,         [52] = 32768,   [53] = 32768,   [54] = 2046,
	[55] = 32768,     [56] = 131072,     [57] = 65536,   [58] = 16384,   [59] = 16384,
	[60] = 16384,     [61] = 32768,      [62] = 2048,    [63] = 32768,   [64] = 32768,
	[65] = 2048,      [66] = 32768,      [67] = 32768,   [68] = 2046,    [69] = 268435456,
	[70] = 131072,    [71] = 65000,      [72] = 2097120, [73] = 32768,   [74] = 32768,
	[75] = 9,         [76] = 0,          [77] = 32768,   [78] = 1,       [79] = 1,
	[80] = 1,         [81] = 233472,     [82] = 65536,   [83] = 1,       [84] = 0,
	[85] = -2 /* ordinal */,             [86] = 0,       [87] = 2,       [88] = 0,
	[89] = 1,         [90] = 1,          [91] = 1,       [92] = 0,       [93] = 0,
	[94] = 0,         [95] = 1,          [96] = 0,       [97] = 232448,  [98] = 0,
	[99] = 1,         [100] = 0,         [101] = 0,      [102] = 1,      [103] = 1,
	[104] = 0,        [105] = 0,         [106] = 32,     [107] = 1,      [108] = 83886080,
	[109] = 134213632, [110] = 1,        [111] = 1024,   [112] = 1,      [113] = 1,
	[114] = 1,        [115] = 1,         [116] = 1,      [117] = 1,      [118] = 100,
	[119] = 9,        [120] = 1,         [121] = 1,      [122] = 1,      [123] = 1,
	[124] = 1,        [125] = 1,         [126] = 4,      [127] = 1,      [128] = 0,
	[129] = 0,        [130] = 0,         [131] = -1,     [132] = 0,      [133] = 0,
	[134] = -1,       [135] = 0,         [136] = 0,      [137] = 0,      [138] = 0,
	[139] = 0,        [140] = 0,         [141] = 0,      [142] = 0,      [143] = 0,
	[144] = 0,        [145] = 0,         [146] = 0,      [147] = 0,
};
#define NATTR ((int)(sizeof(attrs) / sizeof(attrs[0])))

int sim_device_pci_bus(int dev)
{
	return 0x10 + 8 * dev;
}

void sim_device_uuid(int dev, uint8_t uuid[16])
{
	/* "tlm-simulated-" + 0x00 + ordinal: stable across runs and processes. */
	static const uint8_t base[15] = {'t', 'l', 'm', '-', 's', 'i', 'm', 'u',
					 'l', 'a', 't', 'e', 'd', '-', 0};
	memcpy(uuid, base, 15);
	uuid[15] = (uint8_t)dev;
}

CUresult sim_cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev)
{
	CUresult r = sim_enter_device(!pi || attrib < 1 || attrib >= NATTR, dev);
	if (r)
		return r;
	if (attrib == 33)
		*pi = sim_device_pci_bus(dev);
	else if (attrib == 85)
		*pi = dev;
	else
		*pi = attrs[attrib];
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetAttribute);

CUresult sim_cuDeviceGetUuid(CUuuid_sim *uuid, CUdevice dev)
{
	CUresult r = sim_enter_device(!uuid, dev);
	if (r)
		return r;
	sim_device_uuid(dev, uuid->bytes);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetUuid);

CUresult sim_cuDeviceGetUuid_v2(CUuuid_sim *uuid, CUdevice dev)
{
	return sim_cuDeviceGetUuid(uuid, dev);
}
SIM_EXPORT(cuDeviceGetUuid_v2);

CUresult sim_cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	CUresult r = sim_enter_device(!pciBusId || len <= 0, dev);
	if (r)
		return r;
	snprintf(pciBusId, (size_t)len, "00000000:%02X:00.0", sim_device_pci_bus(dev));
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetPCIBusId);

CUresult sim_cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
	CUresult r = sim_enter(!dev || !pciBusId);
	unsigned dom, bus, d, fn = 0;
	if (r)
		return r;
	/* domain:bus:device.function, or bus:device.function */
	if (sscanf(pciBusId, "%x:%x:%x.%x", &dom, &bus, &d, &fn) < 3) {
		dom = 0;
		if (sscanf(pciBusId, "%x:%x.%x", &bus, &d, &fn) < 2)
			return CUDA_ERROR_INVALID_VALUE;
	}
	for (int i = 0; i < sim_ndev; i++)
		if (dom == 0 && bus == (unsigned)sim_device_pci_bus(i) && d == 0 && fn == 0) {
			*dev = i;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_DEVICE;
}
SIM_EXPORT(cuDeviceGetByPCIBusId);

CUresult sim_cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	CUresult r = sim_enter_device(!major || !minor, dev);
	if (r)
		return r;
	*major = 9, *minor = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceComputeCapability);

CUresult sim_cuDeviceGetTexture1DLinearMaxWidth(size_t *maxWidth, int format, unsigned channels,
						CUdevice dev)
{
	CUresult r = sim_enter_device(!maxWidth, dev);
	(void)format, (void)channels;
	if (r)
		return r;
	*maxWidth = 268435456;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetTexture1DLinearMaxWidth);

CUresult sim_cuDeviceGetExecAffinitySupport(int *pi, int type, CUdevice dev)
{
	CUresult r = sim_enter_device(!pi, dev);
	(void)type;
	if (r)
		return r;
	*pi = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetExecAffinitySupport);

CUresult sim_cuDevicePrimaryCtxGetState(CUdevice dev, unsigned *flags, int *active)
{
	CUresult r = sim_enter_device(!flags || !active, dev);
	if (r)
		return r;
	*flags = 0;
	*active = sim_primary_active(dev);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDevicePrimaryCtxGetState);

/* Flags are accepted and not modelled (scheduling policy only). */
CUresult sim_cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned flags)
{
	(void)flags;
	return sim_enter_device(false, dev);
}
SIM_EXPORT(cuDevicePrimaryCtxSetFlags_v2);

/* Reset destroys the context (its cost comes back); allocations are not
 * freed (docs/simulated-device.md). */
CUresult sim_cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	CUresult r = sim_enter_device(false, dev);
	if (!r)
		sim_primary_reset(dev);
	return r;
}
SIM_EXPORT(cuDevicePrimaryCtxReset_v2);

CUresult sim_cuFlushGPUDirectRDMAWrites(int target, int scope)
{
	(void)target, (void)scope;
	return sim_enter(false);
}
SIM_EXPORT(cuFlushGPUDirectRDMAWrites);
