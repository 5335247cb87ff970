// SPDX-License-Identifier: MIT
/*
 * The driver surface NVIDIA's real runtime needs (src/sim/driver/sim_export.c,
 * sim_device.c, sim_module.c, sim_query.c, sim_copy.c, sim_pointer.c,
 * sim_pool.c attributes, sim_procaddr.c's ABI history): each entry point
 * reached by dlsym on the simulator, as a library would, and checked
 * against the documented model (docs/simulated-device.md).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_test.h"

static void *lib;
#define FN(type, name) ((type)dlsym_ok(#name))

static void *dlsym_ok(const char *name)
{
	void *p = dlsym(lib, name);
	if (!p)
		fail_msg("libcuda.so.1 does not export %s", name);
	return p;
}

typedef CUresult (*attr_fn)(int *, int, CUdevice);
typedef CUresult (*uuid_fn)(CUuuid_sim *, CUdevice);
typedef CUresult (*busid_fn)(char *, int, CUdevice);
typedef CUresult (*bybus_fn)(CUdevice *, const char *);
typedef CUresult (*table_fn)(const void **, const CUuuid_sim *);

static int setup(void **state)
{
	(void)state;
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(lib);
	sim_test_ctx(0);
	return 0;
}

static void test_device_model(void **state)
{
	(void)state;
	attr_fn attr = FN(attr_fn, cuDeviceGetAttribute);
	int v;
	CU_OK(attr(&v, 75, 0)); /* compute capability 9.0 */
	assert_int_equal(v, 9);
	CU_OK(attr(&v, 76, 0));
	assert_int_equal(v, 0);
	CU_OK(attr(&v, 16, 1)); /* 132 SMs */
	assert_int_equal(v, 132);
	CU_OK(attr(&v, 10, 0)); /* warp */
	assert_int_equal(v, 32);
	assert_int_equal(attr(&v, 0, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(attr(&v, 148, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(attr(&v, 1, 2), CUDA_ERROR_INVALID_DEVICE);
	/* per device: own PCI bus and UUID, consistent between the queries */
	CUuuid_sim u0, u1;
	CU_OK(FN(uuid_fn, cuDeviceGetUuid)(&u0, 0));
	CU_OK(FN(uuid_fn, cuDeviceGetUuid_v2)(&u1, 1));
	assert_memory_not_equal(u0.bytes, u1.bytes, 16);
	char bus[32];
	for (int d = 0; d < 2; d++) {
		int b;
		CUdevice back = -1;
		CU_OK(attr(&b, 33, d));
		CU_OK(FN(busid_fn, cuDeviceGetPCIBusId)(bus, sizeof bus, d));
		char want[32];
		snprintf(want, sizeof want, "00000000:%02X:00.0", b);
		assert_string_equal(bus, want);
		CU_OK(FN(bybus_fn, cuDeviceGetByPCIBusId)(&back, bus));
		assert_int_equal(back, d);
	}
	CUdevice none;
	assert_int_equal(FN(bybus_fn, cuDeviceGetByPCIBusId)(&none, "0000:99:00.0"), CUDA_ERROR_INVALID_DEVICE);
	assert_int_equal(FN(bybus_fn, cuDeviceGetByPCIBusId)(&none, "nonsense"), CUDA_ERROR_INVALID_VALUE);
}

static const CUuuid_sim cudart_id = {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39,
				      0x12, 0xfd, 0x9d, 0xf9}};
static const CUuuid_sim cls_id = {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55,
				   0xd8, 0x95, 0x93}};
static const CUuuid_sim integrity_id = {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12,
					 0x3c, 0x66, 0xe1, 0xf2}};

static void test_export_tables(void **state)
{
	(void)state;
	table_fn get = FN(table_fn, cuGetExportTable);
	const void *t = (const void *)0x1234;
	CUuuid_sim bogus = {{1, 2, 3}};
	assert_int_equal(get(&t, &bogus), CUDA_ERROR_INVALID_VALUE);
	assert_ptr_equal(t, (const void *)0x1234); /* untouched */
	/* CUDART_INTERFACE: slot 0 = size, [2] = a device's primary context */
	CU_OK(get(&t, &cudart_id));
	const uintptr_t *slots = t;
	assert_int_equal(slots[0], 13 * sizeof(void *));
	CUcontext pc = NULL, mine;
	CU_OK(((CUresult(*)(CUcontext *, CUdevice))slots[2])(&pc, 1));
	CU_OK(cuDevicePrimaryCtxRetain(&mine, 1));
	assert_ptr_equal(pc, mine);
	CU_OK(cuDevicePrimaryCtxRelease_v2(1));
	/* context-local storage: missing key 400, put/get per context, delete */
	CU_OK(get(&t, &cls_id));
	slots = t;
	CUresult (*put)(CUcontext, void *, void *, void *) = (void *)slots[0];
	CUresult (*del)(CUcontext, void *) = (void *)slots[1];
	CUresult (*cget)(void **, CUcontext, void *) = (void *)slots[2];
	void *v = NULL, *key = (void *)&v;
	assert_int_equal(cget(&v, NULL, key), CUDA_ERROR_INVALID_HANDLE);
	CU_OK(put(NULL, key, (void *)0x77, NULL));
	CU_OK(cget(&v, NULL, key));
	assert_ptr_equal(v, (void *)0x77);
	assert_int_equal(cget(&v, mine, key), CUDA_ERROR_INVALID_HANDLE); /* another context */
	CU_OK(del(NULL, key));
	assert_int_equal(cget(&v, NULL, key), CUDA_ERROR_INVALID_HANDLE);
	/* integrity: fixed answers for versions ending in 0 */
	CU_OK(get(&t, &integrity_id));
	slots = t;
	uint64_t out[2];
	CU_OK(((CUresult(*)(uint32_t, uint64_t, uint64_t *))slots[1])(13000, 1, out));
	assert_int_equal(out[0], 0x3341181C03CB675Cull);
}

static void test_copies_and_sets(void **state)
{
	(void)state;
	CUdeviceptr d, m;
	CU_OK(cuMemFree_v2(0)); /* as the real driver */
	CU_OK(cuMemAlloc_v2(&d, 4096));
	CU_OK(cuMemAllocManaged(&m, 4096, 1));
	uint8_t src[64], dst[64];
	memset(src, 0xab, sizeof src);
	memset(dst, 0xcd, sizeof dst);
	CU_OK(FN(CUresult(*)(CUdeviceptr, const void *, size_t), cuMemcpyHtoD_v2)(d, src, 64));
	/* device memory reads back what was written (tests/sim/test_contents.c) */
	CU_OK(FN(CUresult(*)(void *, CUdeviceptr, size_t), cuMemcpyDtoH_v2)(dst, d, 64));
	assert_memory_equal(dst, src, 64);
	/* managed memory is host memory: copies and sets are real */
	CU_OK(FN(CUresult(*)(CUdeviceptr, CUdeviceptr, size_t), cuMemcpy)(m, (uintptr_t)src, 64));
	assert_memory_equal((void *)(uintptr_t)m, src, 64);
	CU_OK(FN(CUresult(*)(CUdeviceptr, unsigned, size_t), cuMemsetD32_v2)(m, 0x01020304u, 4));
	assert_int_equal(((uint32_t *)(uintptr_t)m)[3], 0x01020304u);
	assert_int_equal(((uint8_t *)(uintptr_t)m)[16], 0xab); /* past the set */
	CU_OK(FN(CUresult(*)(CUdeviceptr, unsigned char, size_t), cuMemsetD8_v2)(d, 1, 4096));
	assert_int_equal(FN(CUresult(*)(CUdeviceptr, unsigned, size_t), cuMemsetD32_v2)(d + 1, 0, 1),
			 CUDA_ERROR_INVALID_VALUE); /* misaligned */
	/* pointer queries */
	int ord = -1;
	unsigned type = 0;
	CU_OK(FN(CUresult(*)(void *, int, CUdeviceptr), cuPointerGetAttribute)(&ord, 9, d + 100));
	assert_int_equal(ord, 0);
	CU_OK(FN(CUresult(*)(void *, int, CUdeviceptr), cuPointerGetAttribute)(&type, 2, d));
	assert_int_equal(type, 2);
	CUdeviceptr base;
	size_t size;
	CU_OK(FN(CUresult(*)(CUdeviceptr *, size_t *, CUdeviceptr), cuMemGetAddressRange_v2)(&base, &size, d + 5));
	assert_int_equal(base, d);
	assert_int_equal(size, PAGE);
	CU_OK(cuMemFree_v2(d));
	assert_int_equal(FN(CUresult(*)(void *, int, CUdeviceptr), cuPointerGetAttribute)(&ord, 9, d),
			 CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFree_v2(m));
	assert_int_equal(tlm_sim_used_pages(0), 0);
}

static void test_modules_and_launch(void **state)
{
	(void)state;
	void *libh, *k, *k2, *f;
	static const char image[16] = "fatbin";
	CU_OK(FN(CUresult(*)(void **, const void *, void *, void *, unsigned, void *, void *, unsigned),
		 cuLibraryLoadData)(&libh, image, NULL, NULL, 0, NULL, NULL, 0));
	CU_OK(FN(CUresult(*)(void **, void *, const char *), cuLibraryGetKernel)(&k, libh, "_Z1kPi"));
	CU_OK(FN(CUresult(*)(void **, void *, const char *), cuLibraryGetKernel)(&k2, libh, "_Z1kPi"));
	assert_ptr_equal(k, k2);
	CU_OK(FN(CUresult(*)(void **, void *), cuKernelGetFunction)(&f, k));
	CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
			   void **, void **) = FN(void *, cuLaunchKernel);
	CU_OK(launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
	assert_int_equal(launch(f, 0, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(launch((void *)image, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
	/* a global: an address outside every device's accounting */
	CUdeviceptr g;
	size_t gs;
	long long before = tlm_sim_used_pages(0);
	CU_OK(FN(CUresult(*)(CUdeviceptr *, size_t *, void *, const char *), cuLibraryGetGlobal)(&g, &gs, libh,
												   "deviceConstants"));
	assert_true(g >= 0x500000000000ull && gs > 0);
	assert_int_equal(tlm_sim_used_pages(0), before);
	CU_OK(FN(CUresult(*)(void *), cuLibraryUnload)(libh));
	assert_int_equal(FN(CUresult(*)(void *), cuLibraryUnload)(libh), CUDA_ERROR_INVALID_HANDLE);
	int mode = 0;
	CU_OK(FN(CUresult(*)(int *), cuModuleGetLoadingMode)(&mode));
	assert_int_equal(mode, 2);
}

static void test_events_streams_occupancy(void **state)
{
	(void)state;
	void *ev;
	CU_OK(FN(CUresult(*)(void **, unsigned), cuEventCreate)(&ev, 0));
	CU_OK(FN(CUresult(*)(void *, CUstream), cuEventRecord)(ev, NULL));
	CU_OK(FN(CUresult(*)(void *), cuEventQuery)(ev));
	float ms = -1;
	CU_OK(FN(CUresult(*)(float *, void *, void *), cuEventElapsedTime)(&ms, ev, ev));
	assert_true(ms == 0.0f);
	CU_OK(FN(CUresult(*)(void *), cuEventDestroy_v2)(ev));
	int st = -1;
	CU_OK(FN(CUresult(*)(CUstream, int *), cuStreamIsCapturing)(NULL, &st));
	assert_int_equal(st, 0);
	CU_OK(FN(CUresult(*)(CUstream), cuStreamQuery)(NULL));
	size_t lim;
	CU_OK(FN(CUresult(*)(int, size_t), cuCtxSetLimit)(2, 123456));
	CU_OK(FN(CUresult(*)(size_t *, int), cuCtxGetLimit)(&lim, 2));
	assert_int_equal(lim, 123456);
	int n;
	void *f = (void *)&n; /* occupancy needs only a non-NULL function here */
	CU_OK(FN(CUresult(*)(int *, void *, int, size_t, unsigned), cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)(
		&n, f, 256, 0, 0));
	assert_int_equal(n, 8); /* 2048 threads per SM / 256 */
	size_t smem;
	CU_OK(FN(CUresult(*)(size_t *, void *, int, int), cuOccupancyAvailableDynamicSMemPerBlock)(&smem, f, 1, 128));
	assert_int_equal(smem, 232448);
}

static void test_pool_attributes(void **state)
{
	(void)state;
	CUmemoryPool def, cur;
	CU_OK(cuDeviceGetDefaultMemPool(&def, 0));
	CU_OK(FN(CUresult(*)(CUmemoryPool *, CUdevice), cuDeviceGetMemPool)(&cur, 0));
	assert_ptr_equal(cur, def);
	CUresult (*getattr)(CUmemoryPool, int, void *) = FN(void *, cuMemPoolGetAttribute);
	CUresult (*setattr)(CUmemoryPool, int, void *) = FN(void *, cuMemPoolSetAttribute);
	uint64_t v = 1;
	CU_OK(getattr(def, 4, &v));
	assert_int_equal(v, 0);
	/* a release threshold keeps that much cached across a synchronisation */
	v = 4 * PAGE;
	CU_OK(setattr(def, 4, &v));
	CUdeviceptr a;
	CU_OK(cuMemAllocAsync(&a, 3 * PAGE, NULL));
	CU_OK(getattr(def, 7, &v));
	assert_int_equal(v, 3 * PAGE);
	CU_OK(cuMemFreeAsync(a, NULL));
	CU_OK(cuStreamSynchronize(NULL));
	CU_OK(getattr(def, 5, &v));
	assert_int_equal(v, 3 * PAGE); /* kept: below the threshold */
	CU_OK(getattr(def, 8, &v));
	assert_int_equal(v, 3 * PAGE); /* the high mark */
	v = 0;
	CU_OK(setattr(def, 4, &v));
	CU_OK(cuStreamSynchronize(NULL));
	CU_OK(getattr(def, 5, &v));
	assert_int_equal(v, 0);
	/* the device's current pool serves cuMemAllocAsync */
	CUmemPoolProps props;
	memset(&props, 0, sizeof props);
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	CUmemoryPool mine;
	CU_OK(cuMemPoolCreate(&mine, &props));
	CU_OK(FN(CUresult(*)(CUdevice, CUmemoryPool), cuDeviceSetMemPool)(0, mine));
	assert_int_equal(FN(CUresult(*)(CUdevice, CUmemoryPool), cuDeviceSetMemPool)(1, mine), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemAllocAsync(&a, 100, NULL));
	CU_OK(getattr(mine, 7, &v));
	assert_int_equal(v, PAGE);
	CU_OK(cuMemFreeAsync(a, NULL));
	CU_OK(cuMemPoolDestroy(mine));
	CU_OK(FN(CUresult(*)(CUmemoryPool *, CUdevice), cuDeviceGetMemPool)(&cur, 0));
	assert_ptr_equal(cur, def); /* back to the default */
}

/* Every request CUDA 13.0's runtime makes at start-up (the observed list):
 * each answered with success or CUDA_ERROR_NOT_FOUND (a flavour not modelled),
 * never INVALID_VALUE or VERSION_NOT_SUFFICIENT, and each pointer handed out
 * is the simulator's own code for that ABI flavour. */
static void test_runtime_requests(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/data/cudart-13.0-procaddress-requests.txt", getenv("TLM_TEST_SRCDIR"));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
		FN(void *, cuGetProcAddress_v2);
	char line[256], name[128];
	int ver, total = 0, served = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || sscanf(line, "%127s v%d", name, &ver) != 2)
			continue;
		void *p = (void *)1;
		CUdriverProcAddressQueryResult st = 99;
		CUresult r = gpa(name, &p, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st);
		total++;
		if (r == CUDA_SUCCESS) {
			served++;
			assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
			Dl_info di;
			assert_true(dladdr(p, &di) && di.dli_sname);
			assert_ptr_equal(di.dli_saddr, p);
		} else {
			if (r != CUDA_ERROR_NOT_FOUND || st != CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
				fail_msg("%s@%d: %d status %d", name, ver, r, st);
			assert_null(p);
		}
	}
	fclose(f);
	assert_int_equal(total, 439);
	printf("cuGetProcAddress: %d of %d CUDA 13.0 runtime requests served\n", served, total);
	assert_true(served >= 200);
	/* the ones start-up and the allocation calls cannot do without */
	static const char *const need[][2] = {
		{"cuMemAlloc", "cuMemAlloc_v2"}, {"cuDeviceTotalMem", "cuDeviceTotalMem_v2"},
		{"cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease"}, {"cuLaunchKernel", "cuLaunchKernel"},
		{"cuGetExportTable", "cuGetExportTable"}, {"cuLibraryLoadData", "cuLibraryLoadData"},
	};
	static const int need_ver[] = {3020, 3020, 7000, 4000, 3000, 12000};
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		void *p = NULL;
		CU_OK(gpa(need[i][0], &p, need_ver[i], 0, NULL));
		assert_ptr_equal(p, dlsym(lib, need[i][1]));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_model),     cmocka_unit_test(test_export_tables),
		cmocka_unit_test(test_copies_and_sets),  cmocka_unit_test(test_modules_and_launch),
		cmocka_unit_test(test_events_streams_occupancy), cmocka_unit_test(test_pool_attributes),
		cmocka_unit_test(test_runtime_requests),
	};
	return cmocka_run_group_tests(tests, setup, sim_test_no_leak);
}
