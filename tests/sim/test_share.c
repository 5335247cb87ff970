// SPDX-License-Identifier: MIT
/* Device memory shared between processes (src/sim/driver/sim_vmm_share.c):
 * VMM handles exported as POSIX file descriptors and imported in another
 * process (the descriptor passed over a Unix socket, as NCCL does), retained
 * by address, their properties; host locations; legacy IPC of cuMemAlloc
 * blocks; pointer attributes of VMM and IPC memory. TLM_SIM_MEMORY=64M,
 * TLM_SIM_DEVICES=2. */
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_test.h"

/* not in sim_driver.h: the driver defines them (their cuda.h prototypes) */
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p);
CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p);

static CUmemAllocationProp prop_on(int dev, int handle_types)
{
	CUmemAllocationProp p = {0};
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.requestedHandleTypes = handle_types;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = dev;
	return p;
}

static CUdeviceptr map(CUmemGenericAllocationHandle h, size_t size)
{
	CUdeviceptr va;
	CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CU_OK(cuMemAddressReserve(&va, size, 0, 0, 0));
	CU_OK(cuMemMap(va, size, 0, h, 0));
	CU_OK(cuMemSetAccess(va, size, &acc, 1));
	return va;
}

static void unmap(CUdeviceptr va, size_t size)
{
	CU_OK(cuMemUnmap(va, size));
	CU_OK(cuMemAddressFree(va, size));
}

static void send_fd(int sock, int fd)
{
	char byte = 'f', ctl[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec io = {&byte, 1};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	assert_int_equal(sendmsg(sock, &m, 0), 1);
}

static int recv_fd(int sock)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec io = {&byte, 1};
	struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
	int fd = -1;
	if (recvmsg(sock, &m, 0) == 1 && CMSG_FIRSTHDR(&m))
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
	return fd;
}

/* The child imports what the parent exported, sees its bytes, holds none of
 * its pages, and writes bytes the parent then reads. Exit status: the first
 * failed step (0 = all held). */
static int importer(int sock, long long pages_before)
{
	int fd = recv_fd(sock);
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp got;
	CUdeviceptr va;
	CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	char buf[6] = {0};
	if (fd < 0)
		return 1;
	if (cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		return 2;
	close(fd); /* the handle keeps the memory, not the descriptor */
	if (tlm_sim_used_pages(1) != pages_before) /* the memory is the exporter's */
		return 3;
	if (cuMemGetAllocationPropertiesFromHandle(&got, h) || got.location.id != 1 ||
	    got.requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return 4;
	if (cuMemAddressReserve(&va, 2 * PAGE, 0, 0, 0) || cuMemMap(va, 2 * PAGE, 0, h, 0) ||
	    cuMemSetAccess(va, 2 * PAGE, &acc, 1))
		return 5;
	if (cuMemcpyDtoH_v2(buf, va + PAGE + 7, 5) || strcmp(buf, "ncclx"))
		return 6;
	int ordinal = -1;
	if (cuPointerGetAttribute(&ordinal, 9 /* DEVICE_ORDINAL */, va + 5) || ordinal != 1)
		return 7;
	if (cuMemcpyHtoD_v2(va + 100, "back", 4))
		return 8;
	if (cuMemUnmap(va, 2 * PAGE) || cuMemAddressFree(va, 2 * PAGE) || cuMemRelease(h))
		return 9;
	return 0;
}

static void test_export_import_across_processes(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	CUmemGenericAllocationHandle h;
	int fd = -1, sv[2];
	char buf[5] = {0};
	CU_OK(cuMemCreate(&h, 2 * PAGE, &prop, 0));
	CUdeviceptr va = map(h, 2 * PAGE);
	CU_OK(cuMemcpyHtoD_v2(va + PAGE + 7, "ncclx", 5)); /* written before the export */
	CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	assert_true(fd >= 0);
	long long pages = tlm_sim_used_pages(1);
	assert_int_equal(pages, 2);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(importer(sv[1], pages));
	}
	close(sv[1]);
	send_fd(sv[0], fd);
	close(fd);
	int st = -1;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(sv[0]);
	CU_OK(cuMemcpyDtoH_v2(buf, va + 100, 4)); /* what the importer wrote */
	assert_string_equal(buf, "back");
	unmap(va, 2 * PAGE);
	CU_OK(cuMemRelease(h));
}

static void test_export_needs_the_handle_type(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(0, 0);
	CUmemGenericAllocationHandle h, h2;
	int fd = -1;
	CU_OK(cuMemCreate(&h, PAGE, &prop, 0));
	assert_int_equal(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
			 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemExportToShareableHandle(&fd, h, 8 /* FABRIC */, 0), CUDA_ERROR_NOT_SUPPORTED);
	CU_OK(cuMemRelease(h));
	assert_int_equal(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
			 CUDA_ERROR_INVALID_VALUE);
	/* a descriptor this driver did not export */
	int devnull[2];
	assert_int_equal(pipe(devnull), 0);
	assert_int_equal(cuMemImportFromShareableHandle(&h2, (void *)(intptr_t)devnull[0],
							CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
			 CUDA_ERROR_INVALID_VALUE);
	close(devnull[0]);
	close(devnull[1]);
}

/* A retain adds a reference: the pages go with the last release, once unmapped. */
static void test_retain_and_properties(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), got;
	CUmemGenericAllocationHandle h, r1, r2;
	CU_OK(cuMemCreate(&h, 3 * PAGE, &prop, 0));
	CUdeviceptr va = map(h, 3 * PAGE);
	CU_OK(cuMemRetainAllocationHandle(&r1, (void *)(uintptr_t)(va + PAGE + 3)));
	assert_true(r1 == h); /* the same handle value, one more reference */
	CU_OK(cuMemGetAllocationPropertiesFromHandle(&got, r1));
	assert_int_equal(got.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
	assert_int_equal(got.location.id, 1);
	assert_int_equal(got.requestedHandleTypes, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	assert_int_equal(cuMemRetainAllocationHandle(&r2, (void *)(uintptr_t)(va + 3 * PAGE)),
			 CUDA_ERROR_INVALID_VALUE); /* not mapped */
	CU_OK(cuMemRelease(h));
	CU_OK(cuMemRelease(h));
	assert_int_equal(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemGetAllocationPropertiesFromHandle(&got, h), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(tlm_sim_used_pages(1), 3); /* still mapped */
	CU_OK(cuMemRetainAllocationHandle(&r2, (void *)(uintptr_t)va)); /* valid again */
	unmap(va, 3 * PAGE);
	assert_int_equal(tlm_sim_used_pages(1), 3);
	CU_OK(cuMemRelease(r2));
}

/* Host locations: a granularity, but no allocation (NCCL then uses /dev/shm). */
static void test_host_location(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	CUmemGenericAllocationHandle h;
	size_t g = 0;
	prop.location.type = 3; /* HOST_NUMA */
	prop.location.id = 0;
	CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	assert_int_equal(g, PAGE);
	assert_int_equal(cuMemCreate(&h, PAGE, &prop, 0), CUDA_ERROR_NOT_SUPPORTED);
	prop.location.type = 7;
	assert_int_equal(cuMemGetAllocationGranularity(&g, &prop, 0), CUDA_ERROR_INVALID_VALUE);
}

static int ipc_importer(CUipcMemHandle ipc, CUdeviceptr exporter_ptr)
{
	CUdeviceptr p, q;
	int ordinal = -1;
	long long before = tlm_sim_used_pages(0);
	if (cuIpcOpenMemHandle_v2(&p, ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
		return 1;
	if (p == exporter_ptr || tlm_sim_used_pages(0) != before)
		return 2; /* its own address; the exporter's pages */
	if (cuIpcOpenMemHandle_v2(&q, ipc, 0) || q != p)
		return 3; /* once per handle */
	if (cuPointerGetAttribute(&ordinal, 9, p + 100) || ordinal != 0)
		return 4;
	if (cuMemcpyHtoD_v2(p + PAGE, "x", 1))
		return 5; /* the whole block is there */
	if (cuIpcCloseMemHandle(p) || cuIpcCloseMemHandle(p))
		return 6;
	if (cuIpcCloseMemHandle(p) != CUDA_ERROR_INVALID_VALUE)
		return 7;
	return 0;
}

static void test_legacy_ipc(void **state)
{
	(void)state;
	CUdeviceptr p, pool_p;
	CUipcMemHandle ipc;
	int legacy = -1;
	CU_OK(cuMemAlloc_v2(&p, 3 * MiB)); /* two pages */
	CU_OK(cuPointerGetAttribute(&legacy, 10 /* IS_LEGACY_CUDA_IPC_CAPABLE */, p + 1));
	assert_int_equal(legacy, 1);
	CU_OK(cuIpcGetMemHandle(&ipc, p));
	pid_t pid = fork();
	if (pid == 0)
		_exit(ipc_importer(ipc, p));
	int st = -1;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* stream-ordered pool memory has no legacy IPC */
	CU_OK(cuMemAllocAsync(&pool_p, MiB, NULL));
	CU_OK(cuPointerGetAttribute(&legacy, 10, pool_p));
	assert_int_equal(legacy, 0);
	assert_int_equal(cuIpcGetMemHandle(&ipc, pool_p), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFreeAsync(pool_p, NULL));
	CU_OK(cuStreamSynchronize(NULL));
	CU_OK(cuMemFree_v2(p));
	memset(&ipc, 0, sizeof ipc);
	assert_int_equal(cuIpcOpenMemHandle_v2(&p, ipc, 0), CUDA_ERROR_INVALID_VALUE);
}

/* VMM memory is device memory of its handle's device to pointer queries. */
static void test_vmm_pointer_attributes(void **state)
{
	(void)state;
	CUmemAllocationProp prop = prop_on(1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	CUmemGenericAllocationHandle h;
	CUdeviceptr base = 0;
	size_t size = 0;
	unsigned type = 0;
	unsigned long long handles = 0;
	int ordinal = -1, legacy = -1;
	CU_OK(cuMemCreate(&h, 2 * PAGE, &prop, 0));
	CUdeviceptr va = map(h, 2 * PAGE);
	CU_OK(cuMemGetAddressRange_v2(&base, &size, va + PAGE));
	assert_true(base == va);
	assert_int_equal(size, 2 * PAGE);
	CU_OK(cuPointerGetAttribute(&type, 2 /* MEMORY_TYPE */, va));
	assert_int_equal(type, 2); /* CU_MEMORYTYPE_DEVICE */
	CU_OK(cuPointerGetAttribute(&ordinal, 9, va));
	assert_int_equal(ordinal, 1);
	CU_OK(cuPointerGetAttribute(&legacy, 10, va));
	assert_int_equal(legacy, 0);
	CU_OK(cuPointerGetAttribute(&handles, 14 /* ALLOWED_HANDLE_TYPES */, va));
	assert_int_equal(handles, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	unmap(va, 2 * PAGE);
	assert_int_equal(cuMemGetAddressRange_v2(&base, &size, va), CUDA_ERROR_NOT_FOUND);
	CU_OK(cuMemRelease(h));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_export_import_across_processes, sim_test_no_leak),
		cmocka_unit_test_teardown(test_export_needs_the_handle_type, sim_test_no_leak),
		cmocka_unit_test_teardown(test_retain_and_properties, sim_test_no_leak),
		cmocka_unit_test_teardown(test_host_location, sim_test_no_leak),
		cmocka_unit_test_teardown(test_legacy_ipc, sim_test_no_leak),
		cmocka_unit_test_teardown(test_vmm_pointer_attributes, sim_test_no_leak),
	};
	return cmocka_run_group_tests(tests, sim_test_setup_dev0, NULL);
}
