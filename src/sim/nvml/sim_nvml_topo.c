/* SPDX-License-Identifier: MIT */
/*
 * sim_nvml_topo.c - the hardware and topology half of the simulated NVML
 * (sim_nvml.h has the contract).
 *
 * What NCCL's NVML wrapper needs at communicator set-up (it resolves every
 * name with dlsym, and calls some without checking that they exist): the
 * compute capability of each device (9.0, as the driver's device model), the
 * P2P status of every pair (OK: the driver lets every pair of devices reach
 * each other, sim_peer.c), the PCI identity (the bus the driver gives, an
 * H100 SXM5's device id) and link (PCIe 5.0 x16), and confidential computing
 * off. NVLink, fabric, field values and platform queries are
 * NVML_ERROR_NOT_SUPPORTED, so NCCL sees a PCIe-only machine.
 */
#include <stdio.h>
#include <string.h>

#include "sim_nvml.h"

#define PCI_DEVICE_ID 0x233010deu /* device 0x2330 (H100 SXM5), vendor 0x10de (NVIDIA) */

/* nvml.h's nvmlPciInfo_t (the _v3 call's layout) and nvmlPciInfoExt_v1_t. */
struct pci_info {
	char busIdLegacy[16];
	unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
};
struct pci_info_ext {
	unsigned version, domain, bus, device, pciDeviceId, pciSubSystemId, baseClass, subClass;
	char busId[32];
};
#define PCI_EXT_VERSION ((unsigned)sizeof(struct pci_info_ext) | (1u << 24))
/* nvmlConfComputeSystemState_t and nvmlSystemConfComputeSettings_v1_t. */
struct cc_state {
	unsigned environment, ccFeature, devToolsMode;
};
struct cc_settings {
	unsigned version, environment, ccFeature, devToolsMode, multiGpuMode;
};
#define CC_SETTINGS_VERSION ((unsigned)sizeof(struct cc_settings) | (1u << 24))

_Static_assert(sizeof(struct pci_info) == 68, "nvmlPciInfo_t");
_Static_assert(sizeof(struct pci_info_ext) == 64, "nvmlPciInfoExt_v1_t");
_Static_assert(sizeof(struct cc_settings) == 20, "nvmlSystemConfComputeSettings_v1_t");

API int nvmlDeviceGetCudaComputeCapability(nvml_device device, int *major, int *minor);
API int nvmlDeviceGetP2PStatus(nvml_device a, nvml_device b, int index, int *status);
API int nvmlDeviceGetPciInfo_v3(nvml_device device, struct pci_info *pci);
API int nvmlDeviceGetPciInfoExt(nvml_device device, struct pci_info_ext *pci);
API int nvmlDeviceGetCurrPcieLinkGeneration(nvml_device device, unsigned *gen);
API int nvmlDeviceGetCurrPcieLinkWidth(nvml_device device, unsigned *width);
API int nvmlDeviceGetPcieLinkMaxSpeed(nvml_device device, unsigned *mbps);
API int nvmlSystemGetConfComputeState(struct cc_state *state);
API int nvmlSystemGetConfComputeSettings(struct cc_settings *settings);

int nvmlDeviceGetCudaComputeCapability(nvml_device device, int *major, int *minor)
{
	if (simnvml_dev(device) < 0 || !major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = 9, *minor = 0; /* sim_device.c's device model */
	return NVML_SUCCESS;
}

/* index: READ 0, WRITE 1, NVLINK 2, ATOMICS 3, PROP 4 (nvmlGpuP2PCapsIndex_t).
 * Every pair, a device with itself included, can read, write and do atomics
 * over PCIe; none over NVLink. */
int nvmlDeviceGetP2PStatus(nvml_device a, nvml_device b, int index, int *status)
{
	enum { P2P_OK = 0, P2P_NOT_SUPPORTED = 5 };
	if (simnvml_dev(a) < 0 || simnvml_dev(b) < 0 || !status || index < 0 || index > 4)
		return NVML_ERROR_INVALID_ARGUMENT;
	*status = index == 2 ? P2P_NOT_SUPPORTED : P2P_OK;
	return NVML_SUCCESS;
}

int nvmlDeviceGetPciInfo_v3(nvml_device device, struct pci_info *pci)
{
	int bus = simnvml_bus(simnvml_dev(device));
	if (bus < 0 || !pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof *pci);
	pci->bus = (unsigned)bus;
	pci->pciDeviceId = PCI_DEVICE_ID;
	snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02x:00.0", bus & 0xff);
	snprintf(pci->busId, sizeof pci->busId, "00000000:%02x:00.0", bus & 0xff);
	return NVML_SUCCESS;
}

int nvmlDeviceGetPciInfoExt(nvml_device device, struct pci_info_ext *pci)
{
	int bus = simnvml_bus(simnvml_dev(device));
	if (bus < 0 || !pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (pci->version != PCI_EXT_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	memset(pci, 0, sizeof *pci);
	pci->version = PCI_EXT_VERSION;
	pci->bus = (unsigned)bus;
	pci->pciDeviceId = PCI_DEVICE_ID;
	pci->baseClass = 0x03, pci->subClass = 0x02; /* display controller, 3D */
	snprintf(pci->busId, sizeof pci->busId, "00000000:%02x:00.0", bus & 0xff);
	return NVML_SUCCESS;
}

int nvmlDeviceGetCurrPcieLinkGeneration(nvml_device device, unsigned *gen)
{
	if (simnvml_dev(device) < 0 || !gen)
		return NVML_ERROR_INVALID_ARGUMENT;
	*gen = 5;
	return NVML_SUCCESS;
}

int nvmlDeviceGetCurrPcieLinkWidth(nvml_device device, unsigned *width)
{
	if (simnvml_dev(device) < 0 || !width)
		return NVML_ERROR_INVALID_ARGUMENT;
	*width = 16;
	return NVML_SUCCESS;
}

/* In MB/s per lane, as nvmlPcieLinkMaxSpeed_t names it: 32000 for PCIe 5.0. */
int nvmlDeviceGetPcieLinkMaxSpeed(nvml_device device, unsigned *mbps)
{
	if (simnvml_dev(device) < 0 || !mbps)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mbps = 32000;
	return NVML_SUCCESS;
}

/* Confidential computing off: every field 0 (NVML_CC_SYSTEM_*_NONE/OFF). */
int nvmlSystemGetConfComputeState(struct cc_state *state)
{
	if (!state)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(state, 0, sizeof *state);
	return NVML_SUCCESS;
}

int nvmlSystemGetConfComputeSettings(struct cc_settings *settings)
{
	if (!settings)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (settings->version != CC_SETTINGS_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	memset(settings, 0, sizeof *settings);
	settings->version = CC_SETTINGS_VERSION;
	return NVML_SUCCESS;
}

/* Not supported: NVLink, fabric, field values, platform. Arguments are not
 * declared: the callee never reads them (see sim_blas.c for why that is
 * call-compatible). */
#define NOT_SUPPORTED(name) \
	API int name(void); \
	int name(void) { return NVML_ERROR_NOT_SUPPORTED; }

NOT_SUPPORTED(nvmlDeviceGetGpuFabricInfoV)
NOT_SUPPORTED(nvmlDeviceGetGpuFabricInfo)
NOT_SUPPORTED(nvmlDeviceGetNvLinkState)
NOT_SUPPORTED(nvmlDeviceGetNvLinkCapability)
NOT_SUPPORTED(nvmlDeviceGetNvLinkRemotePciInfo)
NOT_SUPPORTED(nvmlDeviceGetNvLinkRemotePciInfo_v2)
NOT_SUPPORTED(nvmlDeviceGetNvLinkRemoteDeviceType)
NOT_SUPPORTED(nvmlDeviceGetFieldValues)
NOT_SUPPORTED(nvmlDeviceGetPlatformInfo)
