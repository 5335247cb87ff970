// SPDX-License-Identifier: MIT
/*
 * Device memory shared between processes, as NCCL's and PyTorch's IPC use it
 * (sim_vmm.h has the handle table's contract):
 *
 * - cuMemExportToShareableHandle / cuMemImportFromShareableHandle with POSIX
 *   file descriptors. The descriptor is a memfd: the handle's contents (a
 *   sparse file of its size, so only written pages cost host memory) and,
 *   past them, one page that names the allocation (device, pages,
 *   properties). Every process that imports it maps the same file, so all of
 *   them see the same bytes, and passing it over a Unix socket (SCM_RIGHTS)
 *   works as with a real driver's descriptor. An imported handle holds no
 *   pages: the memory is the exporter's, on the exporter's device. (When the
 *   exporter releases its handle while another process still has it
 *   imported, its pages go back to the device then; a GPU would keep them
 *   until the last import went.)
 * - The legacy cuIpcGetMemHandle / cuIpcOpenMemHandle / cuIpcCloseMemHandle
 *   of cuMemAlloc blocks: the 64-byte handle names the exporting process,
 *   the block's device, address and size; opening it maps an imported VMM
 *   handle of that size into this process's reservation region (once per
 *   handle, counted: a second open returns the same address). Its contents
 *   are this process's own, zeros at first: the exporter's bytes are not
 *   carried over.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_internal.h"
#include "sim_vmm.h"

#define SHARE_MAGIC 0x316572616873746cull /* "ltshare1" */
#define HEADER_BYTES 4096ull

struct share_header {
	uint64_t magic;
	int32_t dev, pid;
	uint64_t pages;
	CUmemAllocationProp prop;
};

/* Give h a memfd holding its contents and its header. Caller holds sim_lock. */
static CUresult make_shared(struct vmm_handle *h)
{
	uint64_t bytes = h->pages * SIM_PAGE;
	int fd = memfd_create("tlm-sim-device-memory", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct share_header hd = {SHARE_MAGIC, h->dev, (int32_t)getpid(), h->pages, h->prop};
	if (ftruncate(fd, (off_t)(bytes + HEADER_BYTES)) != 0 ||
	    pwrite(fd, &hd, sizeof hd, (off_t)bytes) != (ssize_t)sizeof hd) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (h->back) { /* carry over what was written: the resident pages */
		const uint64_t pg = 4096;
		unsigned char vec[512];
		for (uint64_t off = 0; off < bytes; off += sizeof vec * pg) {
			uint64_t n = bytes - off < sizeof vec * pg ? bytes - off : sizeof vec * pg;
			if (mincore(h->back + off, n, vec) != 0)
				memset(vec, 1, sizeof vec);
			for (uint64_t i = 0; i < (n + pg - 1) / pg; i++)
				if ((vec[i] & 1) && pwrite(fd, h->back + off + i * pg, pg,
							   (off_t)(off + i * pg)) != (ssize_t)pg) {
					close(fd);
					return CUDA_ERROR_OUT_OF_MEMORY;
				}
		}
		munmap(h->back, bytes);
		h->back = NULL; /* mapped from the file at the next touch */
	}
	h->fd = fd;
	return CUDA_SUCCESS;
}

CUresult sim_cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
					  int handleType, unsigned long long flags)
{
	CUresult r = sim_enter(!shareableHandle || flags != 0);
	if (r)
		return r;
	if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED; /* Win32 and fabric handles */
	pthread_mutex_lock(&sim_lock);
	struct vmm_handle *h = sim_vmm_find(handle);
	if (!h || !(h->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		r = CUDA_ERROR_INVALID_VALUE; /* not made exportable as a descriptor */
	else if (h->fd < 0)
		r = make_shared(h);
	if (!r) {
		int fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			r = CUDA_ERROR_OUT_OF_MEMORY;
		else
			*(int *)shareableHandle = fd;
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuMemExportToShareableHandle);

/* The descriptor stays the caller's; the handle keeps a duplicate. */
CUresult simi_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
					     int shHandleType)
{
	CUresult r = sim_enter(!handle);
	if (r)
		return r;
	if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	int fd = (int)(intptr_t)osHandle;
	struct stat st;
	struct share_header hd;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)HEADER_BYTES ||
	    pread(fd, &hd, sizeof hd, st.st_size - (off_t)HEADER_BYTES) != (ssize_t)sizeof hd ||
	    hd.magic != SHARE_MAGIC || hd.pages * SIM_PAGE + HEADER_BYTES != (uint64_t)st.st_size)
		return CUDA_ERROR_INVALID_VALUE; /* not a descriptor this driver exported */
	if (!sim_valid_device(hd.dev))
		return CUDA_ERROR_INVALID_DEVICE;
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&sim_lock);
	struct vmm_handle *h = sim_vmm_add(hd.dev, hd.pages, &hd.prop, true, own);
	if (h)
		*handle = h->id;
	pthread_mutex_unlock(&sim_lock);
	if (!h) {
		close(own);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}
SIM_API(cuMemImportFromShareableHandle, (CUmemGenericAllocationHandle *handle, void *osHandle,
					 int shHandleType),
	(handle, osHandle, shHandleType), {handle, osHandle, shHandleType});

/* ---- legacy IPC ---- */

#define IPC_MAGIC 0x3163706973736c74ull /* "tlssipc1" */

struct ipc_handle {
	uint64_t magic;
	int32_t pid, dev;
	uint64_t base, size;
	char unused[32];
};
_Static_assert(sizeof(struct ipc_handle) == sizeof(CUipcMemHandle), "CUipcMemHandle");

/* What this process opened: key = the exporter's (pid, base) folded, one
 * entry per open handle; by address for the close. */
struct ipc_open {
	struct ipc_handle from;
	CUdeviceptr va;
	uint64_t refs;
	struct ipc_open *next;
};
static struct ipc_open *opens;
/* Outside sim_lock: an open reserves and maps through the VMM calls. */
static pthread_mutex_t ipc_lock = PTHREAD_MUTEX_INITIALIZER;

CUresult sim_cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	uint64_t base, len;
	CUresult r = sim_enter(!pHandle);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	/* a cuMemAlloc block: pool and VMM memory have no legacy IPC */
	if (!sim_live_span(dptr, &base, &len) || sim_live_pooled(base))
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	if (r)
		return r;
	struct ipc_handle h = {IPC_MAGIC, (int32_t)getpid(), sim_va_device(base), base, len, {0}};
	memcpy(pHandle, &h, sizeof h);
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuIpcGetMemHandle);

CUresult sim_cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	struct ipc_handle h;
	memcpy(&h, &handle, sizeof h);
	CUresult r = sim_enter(!pdptr || (Flags & ~CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) ||
			       h.magic != IPC_MAGIC || h.size == 0 || h.size % SIM_PAGE);
	if (r || (r = sim_enter_device(false, h.dev)))
		return r;
	pthread_mutex_lock(&ipc_lock);
	for (struct ipc_open *o = opens; o; o = o->next)
		if (o->from.pid == h.pid && o->from.base == h.base) {
			o->refs++;
			*pdptr = o->va;
			pthread_mutex_unlock(&ipc_lock);
			return CUDA_SUCCESS;
		}
	struct ipc_open *o = calloc(1, sizeof *o);
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
				    .location = {CU_MEM_LOCATION_TYPE_DEVICE, h.dev}};
	pthread_mutex_lock(&sim_lock);
	struct vmm_handle *vh = o ? sim_vmm_add(h.dev, h.size / SIM_PAGE, &prop, true, -1) : NULL;
	CUmemGenericAllocationHandle id = vh ? vh->id : 0;
	pthread_mutex_unlock(&sim_lock);
	r = vh ? simi_cuMemAddressReserve(&o->va, h.size, 0, 0, 0) : CUDA_ERROR_OUT_OF_MEMORY;
	if (!r && (r = simi_cuMemMap(o->va, h.size, 0, id, 0)))
		simi_cuMemAddressFree(o->va, h.size);
	if (vh)
		simi_cuMemRelease(id); /* the mapping holds it now */
	if (r) {
		free(o);
	} else {
		o->from = h;
		o->refs = 1;
		o->next = opens;
		opens = o;
		*pdptr = o->va;
	}
	pthread_mutex_unlock(&ipc_lock);
	return r;
}
SIM_EXPORT(cuIpcOpenMemHandle_v2);

/* CUDA 4.1's flavour: the same call. */
CUresult sim_cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	return sim_cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}
SIM_EXPORT(cuIpcOpenMemHandle);

CUresult sim_cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&ipc_lock);
	struct ipc_open **pp = &opens;
	while (*pp && (*pp)->va != dptr)
		pp = &(*pp)->next;
	struct ipc_open *o = *pp;
	if (!o) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (--o->refs == 0) {
		*pp = o->next;
		simi_cuMemUnmap(o->va, o->from.size);
		simi_cuMemAddressFree(o->va, o->from.size);
		free(o);
	}
	pthread_mutex_unlock(&ipc_lock);
	return r;
}
SIM_EXPORT(cuIpcCloseMemHandle);
