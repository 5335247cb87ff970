// SPDX-License-Identifier: MIT
/* The simulated NVML's hardware and topology half (src/sim/nvml/
 * sim_nvml_topo.c): what NCCL 2.30 resolves from libnvidia-ml.so.1 (every
 * name of its nvmlwrap.cc, some of which it calls without checking that they
 * exist) and the answers its set-up needs. TLM_SIM_DEVICES=2; the library is
 * TLM_TEST_NVML, opened as NCCL opens it. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "sim_test.h"

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev); /* the driver's, not in sim_driver.h */

/* nvml.h's layouts */
struct pci_info {
	char busIdLegacy[16];
	unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
};
struct pci_ext {
	unsigned version, domain, bus, device, pciDeviceId, pciSubSystemId, baseClass, subClass;
	char busId[32];
};
struct cc_settings {
	unsigned version, environment, ccFeature, devToolsMode, multiGpuMode;
};

static void *lib(void)
{
	static void *h;
	if (!h)
		h = dlopen(getenv("TLM_TEST_NVML"), RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	return h;
}

static void *fn(const char *name)
{
	void *f = dlsym(lib(), name);
	if (!f)
		fail_msg("libnvidia-ml.so.1 lacks %s", name);
	return f;
}

static void *dev(unsigned i)
{
	void *d = NULL;
	assert_int_equal(((int (*)(unsigned, void **))fn("nvmlDeviceGetHandleByIndex"))(i, &d), 0);
	return d;
}

/* NCCL 2.30.7's misc/nvmlwrap.cc: the names it dlsym's */
static void test_every_name_nccl_resolves(void **state)
{
	(void)state;
	static const char *const names[] = {
		"nvmlInit", "nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount", "nvmlDeviceGetCount_v2",
		"nvmlDeviceGetHandleByPciBusId", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetIndex",
		"nvmlErrorString", "nvmlDeviceGetNvLinkState", "nvmlDeviceGetNvLinkRemotePciInfo",
		"nvmlDeviceGetNvLinkCapability", "nvmlDeviceGetCudaComputeCapability",
		"nvmlDeviceGetP2PStatus", "nvmlDeviceGetFieldValues", "nvmlDeviceGetPciInfo_v3",
		"nvmlDeviceGetPciInfoExt", "nvmlDeviceGetPcieLinkMaxSpeed",
		"nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth",
		"nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetPlatformInfo", "nvmlSystemGetConfComputeState",
		"nvmlSystemGetConfComputeSettings"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		fn(names[i]);
}

static void test_set_up_answers(void **state)
{
	(void)state;
	int major = 0, minor = -1, st = -1;
	void *d0 = dev(0), *d1 = dev(1);
	int (*cc)(void *, int *, int *) = (int (*)(void *, int *, int *))fn("nvmlDeviceGetCudaComputeCapability");
	assert_int_equal(cc(d1, &major, &minor), 0);
	assert_int_equal(major, 9); /* the driver's device model */
	assert_int_equal(minor, 0);
	assert_int_equal(cc(NULL, &major, &minor), 2);
	int (*p2p)(void *, void *, int, int *) = (int (*)(void *, void *, int, int *))fn("nvmlDeviceGetP2PStatus");
	for (int idx = 0; idx < 2; idx++) { /* READ, WRITE: every ordered pair, itself too */
		assert_int_equal(p2p(d0, d1, idx, &st), 0);
		assert_int_equal(st, 0);
		assert_int_equal(p2p(d1, d1, idx, &st), 0);
		assert_int_equal(st, 0);
	}
	assert_int_equal(p2p(d0, d1, 2 /* NVLINK */, &st), 0);
	assert_int_equal(st, 5); /* NVML_P2P_STATUS_NOT_SUPPORTED: PCIe only */
}

/* The PCI identity: the bus the driver gives (cuDeviceGetPCIBusId), an NVIDIA device. */
static void test_pci(void **state)
{
	(void)state;
	struct pci_info p;
	struct pci_ext e = {.version = sizeof(struct pci_ext) | 1u << 24};
	char want[32];
	memset(&p, 0x5a, sizeof p);
	assert_int_equal(((int (*)(void *, struct pci_info *))fn("nvmlDeviceGetPciInfo_v3"))(dev(1), &p), 0);
	CU_OK(cuDeviceGetPCIBusId(want, sizeof want, 1));
	assert_string_equal(p.busIdLegacy, "0000:18:00.0");
	assert_int_equal(strcasecmp(p.busId, want), 0);
	assert_int_equal(p.bus, 0x18);
	assert_int_equal(p.domain, 0);
	assert_int_equal(p.pciDeviceId & 0xffff, 0x10de);
	void *back = NULL;
	assert_int_equal(((int (*)(const char *, void **))fn("nvmlDeviceGetHandleByPciBusId"))(p.busId, &back), 0);
	assert_ptr_equal(back, dev(1));
	int (*ext)(void *, struct pci_ext *) = (int (*)(void *, struct pci_ext *))fn("nvmlDeviceGetPciInfoExt");
	assert_int_equal(ext(dev(0), &e), 0);
	assert_int_equal(e.bus, 0x10);
	assert_string_equal(e.busId, "00000000:10:00.0");
	e.version = 0;
	assert_int_equal(ext(dev(0), &e), 25); /* ARGUMENT_VERSION_MISMATCH */
	unsigned gen = 0, width = 0;
	assert_int_equal(((int (*)(void *, unsigned *))fn("nvmlDeviceGetCurrPcieLinkGeneration"))(dev(0), &gen), 0);
	assert_int_equal(((int (*)(void *, unsigned *))fn("nvmlDeviceGetCurrPcieLinkWidth"))(dev(0), &width), 0);
	assert_int_equal(gen, 5);
	assert_int_equal(width, 16);
}

/* No NVLink, no fabric; confidential computing off. */
static void test_not_there(void **state)
{
	(void)state;
	static const char *const unsupported[] = {"nvmlDeviceGetNvLinkState", "nvmlDeviceGetNvLinkCapability",
		"nvmlDeviceGetNvLinkRemotePciInfo", "nvmlDeviceGetFieldValues", "nvmlDeviceGetPlatformInfo",
		"nvmlDeviceGetGpuFabricInfoV"};
	for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
		assert_int_equal(((int (*)(void))fn(unsupported[i]))(), 3);
	struct cc_settings s = {.version = sizeof s | 1u << 24, .ccFeature = 7};
	assert_int_equal(((int (*)(struct cc_settings *))fn("nvmlSystemGetConfComputeSettings"))(&s), 0);
	assert_int_equal(s.ccFeature, 0);
	assert_int_equal(s.multiGpuMode, 0);
	unsigned state3[3] = {7, 7, 7};
	assert_int_equal(((int (*)(unsigned *))fn("nvmlSystemGetConfComputeState"))(state3), 0);
	assert_int_equal(state3[1], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_name_nccl_resolves),
		cmocka_unit_test(test_set_up_answers),
		cmocka_unit_test(test_pci),
		cmocka_unit_test(test_not_there),
	};
	return cmocka_run_group_tests(tests, sim_test_setup_dev0, NULL);
}
