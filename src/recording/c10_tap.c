/* SPDX-License-Identifier: MIT */
/*
 * c10_tap.c - PyTorch's CUDA caching allocator, block by block.
 *
 * The allocator calls c10::reportMemoryUsageToProfiler on every block it
 * hands out and every block it takes back, from libc10_cuda.so into
 * libc10.so, through the PLT: the definitions below (one per mangled form
 * torch has used) win over libc10.so's, record a TLM_KIND_BLOCK event and
 * forward to the real function (torch.profiler keeps working).
 * c10::reportOutOfMemoryToProfiler is recorded as a failed block allocation
 * carrying the size the program asked for. docs/pytorch.md tells the story.
 *
 * These calls run with the allocator's mutex held. The hot path is a filter
 * on the device type, the recorder (no allocation, no lock, no CUDA) and the
 * forward. Only the first call of each form does more, once: it resolves the
 * real function and, for the forms whose c10::Device layout changed without
 * a change of mangled name, reads torch/version.py next to the libc10.so
 * that holds the real function.
 *
 * c10::Device {DeviceType type (int8); DeviceIndex index} arrives by value in
 * one integer register: type in byte 0; the index in byte 1 when
 * DeviceIndex is int8_t (torch < 2.3, and the 2.15 wheel), in bytes 2-3 when
 * it is int16_t. libc10_cuda.so's mangled names tell which (above).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recording/driver_query.h"
#include "recording/lifecycle.h"
#include "recording/log.h"
#include "recording/realsym.h"
#include "recording/recorder.h"
#include "recording/stack/pystack.h"

#define C10_CUDA 1 /* c10::DeviceType::CUDA */

/* ---- the real functions and the Device layout ---------------------------- */

enum form {
	F_MEM_V3,   /* (void*, int64_t, size_t, size_t, Device): about 2.0 on */
	F_MEM_V2,   /* (void*, int64_t, int64_t, int64_t, Device): 1.10 - 1.13 */
	F_MEM_V1,   /* (void*, int64_t, Device): 1.7 - 1.9 */
	F_MEM_V0,   /* (Device, int64_t): 1.6, no address: forwarded only */
	F_OOM_L,    /* (int64_t, size_t, size_t, Device) */
	F_OOM_M,    /* (size_t, size_t, size_t, Device) */
	F_COUNT
};

static const char *const form_name[F_COUNT] = {
	[F_MEM_V3] = "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE",
	[F_MEM_V2] = "_ZN3c1027reportMemoryUsageToProfilerEPvlllNS_6DeviceE",
	[F_MEM_V1] = "_ZN3c1027reportMemoryUsageToProfilerEPvlNS_6DeviceE",
	[F_MEM_V0] = "_ZN3c1027reportMemoryUsageToProfilerENS_6DeviceEl",
	[F_OOM_L] = "_ZN3c1027reportOutOfMemoryToProfilerElmmNS_6DeviceE",
	[F_OOM_M] = "_ZN3c1027reportOutOfMemoryToProfilerEmmmNS_6DeviceE",
};

/* Resolution state per form: 0 = not yet, 1 = resolving, 2 = done. */
TLM_HOT static _Atomic int resolved[F_COUNT];
TLM_HOT static void *real_fn[F_COUNT];

/* Layout of the loaded torch: 0 unknown yet, 8 or 16 (index bits). */
TLM_HOT static _Atomic int layout;

/* The real definition: the next one after libtlm in the global scope, else
 * libc10.so's own (Python loads extension libraries RTLD_LOCAL, out of
 * RTLD_NEXT's reach). */
static void *lookup_real(const char *name)
{
	tlm__resolve_dlsym();
	void *p = tlm__real_dlsym ? tlm__real_dlsym(RTLD_NEXT, name) : NULL;
	return p ? p : tlm__loaded_sym("libc10.so", name);
}

/* "__version__ = '2.4.0+cu121'" -> 2, 4. Returns 0 when not found. */
static int parse_version(const char *path, int *major, int *minor)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[512];
	int ok = 0;
	while (!ok && fgets(line, sizeof line, f)) {
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "__version__", 11))
			continue;
		p += 11;
		while (*p == ' ' || *p == '\t' || *p == ':' || (*p >= 'a' && *p <= 'z'))
			p++; /* also "__version__: str = ..." */
		if (*p++ != '=')
			continue;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\'' || *p == '"')
			p++;
		ok = sscanf(p, "%d.%d", major, minor) == 2;
	}
	fclose(f);
	return ok;
}

/* The loaded libc10_cuda.so tells the index width in its own mangled names:
 * c10::cuda::ExchangeDevice / set_device take a DeviceIndex ('a' = int8_t,
 * 's' = int16_t). The torch version alone does not: the 2.15 wheel is back
 * to int8_t. 0 when no such name is found (then the version decides). */
static int layout_from_symbols(void)
{
	static const char *const probe[][2] = {
		{"_ZN3c104cuda14ExchangeDeviceEa", "_ZN3c104cuda14ExchangeDeviceEs"},
		{"_ZN3c104cuda10set_deviceEab", "_ZN3c104cuda10set_deviceEsb"},
		{"_ZN3c104cuda10set_deviceEa", "_ZN3c104cuda10set_deviceEs"},
	};
	for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++) {
		if (tlm__loaded_sym("libc10_cuda.so", probe[i][0]))
			return 8;
		if (tlm__loaded_sym("libc10_cuda.so", probe[i][1]))
			return 16;
	}
	return 0;
}

/* The index width of the loaded torch: its libc10_cuda.so's names, else
 * torch/version.py beside torch/lib/ that holds the real function. */
static int layout_of(void *real)
{
	Dl_info di;
	char path[4096];
	int major = 0, minor = 0;
	int bits = layout_from_symbols();
	if (bits)
		return bits;
	if (!real || !dladdr(real, &di) || !di.dli_fname) {
		tlm__log("torch: the real c10::reportMemoryUsageToProfiler was not found; "
			 "assuming the c10::Device layout of torch >= 2.3");
		return 16;
	}
	snprintf(path, sizeof path, "%s", di.dli_fname);
	char *s = strrchr(path, '/');          /* .../torch/lib/libc10.so */
	if (s) {
		*s = 0;
		s = strrchr(path, '/');            /* .../torch/lib */
	}
	if (s && (size_t)(s - path) + sizeof "/version.py" < sizeof path) {
		strcpy(s, "/version.py");          /* .../torch/version.py */
		if (parse_version(path, &major, &minor))
			return major > 2 || (major == 2 && minor >= 3) ? 16 : 8;
	}
	tlm__log("torch: no torch/version.py next to %s; assuming the c10::Device layout of torch >= 2.3",
		 di.dli_fname);
	return 16;
}

/* The allocator's settings, as torch read them when it set up (it reads the
 * environment once, before its first block): for `tlm whatif`. */
static void note_alloc_conf(void)
{
	const char *v = getenv("PYTORCH_ALLOC_CONF");
	if (!v)
		v = getenv("PYTORCH_CUDA_ALLOC_CONF");
	tlm__writer_prop("torch.alloc_conf", v ? v : "");
}

/* Once per form, off the hot path. */
static __attribute__((noinline)) void *real_of_slow(enum form f)
{
	int expect = 0;
	if (atomic_compare_exchange_strong(&resolved[f], &expect, 1)) {
		void *p = lookup_real(form_name[f]);
		real_fn[f] = p;
		if (f <= F_MEM_V1)
			note_alloc_conf();
		if ((f == F_MEM_V3 || f == F_OOM_L || f == F_OOM_M) &&
		    !atomic_load_explicit(&layout, memory_order_acquire))
			atomic_store_explicit(&layout, layout_of(p ? p : lookup_real(form_name[F_MEM_V3])),
					      memory_order_release);
		atomic_store_explicit(&resolved[f], 2, memory_order_release);
	} else {
		while (atomic_load_explicit(&resolved[f], memory_order_acquire) != 2)
			;
	}
	return real_fn[f];
}

/* Inline: every block passes here (LTO left the whole of it out of line) */
static inline void *real_of(enum form f)
{
	if (TLM_LIKELY(atomic_load_explicit(&resolved[f], memory_order_acquire) == 2))
		return real_fn[f];
	return real_of_slow(f);
}

/* Device index of a c10::Device passed in a register. */
static inline int16_t dev_index(uint64_t d, bool wide)
{
	return wide ? (int16_t)(uint16_t)(d >> 16) : (int16_t)(int8_t)(d >> 8);
}

/* ---- recording ----------------------------------------------------------- */

static void rec_block(uint8_t op, uint64_t addr, uint64_t size, uint64_t allocated, uint64_t reserved,
		      int16_t device, int32_t result, uint16_t flags, uint8_t api)
{
	if (!tlm__recording())
		return;
	struct tlm__rec rc;
	/* a failed allocation has an extension slot (device free bytes): the
	 * allocator's OOM leaves it 0, no CUDA call here; the report takes it
	 * from the driver failures folded into this OOM */
	bool failed = result != 0 && op == TLM_OP_ALLOC;
	/* a block free carries its Python frames (the line that let the tensor
	 * go, as PyTorch's snapshot has them), not a native unwind: the report
	 * keeps the allocation's, and unwinding a destructor path through
	 * libtorch would be most of an event's cost. An allocation made on a
	 * Python thread carries its Python frames, which name it, and its
	 * native frames (about 27 through c10 and ATen, shown only with
	 * --full-stacks) only with TLM_BLOCK_NATIVE_STACKS=1: their unwind was
	 * a fifth of what recording cost per training step */
	if (!(op == TLM_OP_FREE ? tlm__rec_begin_pyonly(&rc) : tlm__rec_begin_block(&rc, failed)))
		return;
	if (failed) {
		struct tlm__slot *x = &rc.ring->slots[(rc.head - 1) & rc.ring->mask];
		memset(x, 0, sizeof *x);
		x->type = TLM__SLOT_EXT;
	}
	struct tlm__slot *s = rc.ev;
	s->addr = addr;
	s->size = size;
	s->stream = reserved;
	s->aux = allocated;
	s->result = result;
	s->device = device;
	s->op = op;
	s->kind = TLM_KIND_BLOCK;
	s->flags = flags | (op == TLM_OP_FREE ? tlm__py_free_flags(rc.py_ts) : 0);
	s->api = api;
	tlm__rec_commit(&rc);
}

/* Once per device with blocks: its memory size, for `tlm whatif` (the replay
 * needs the device's size when no allocation failed). Off the hot path after
 * the first block of each device: one atomic load. */
TLM_HOT static _Atomic uint64_t sized_devices;

static __attribute__((noinline)) void note_device_memory_slow(int16_t device, uint64_t bit)
{
	if (atomic_fetch_or_explicit(&sized_devices, bit, memory_order_relaxed) & bit)
		return;
	uint64_t total = tlm__device_total_bytes(device);
	if (!total)
		return;
	char key[32], value[32];
	snprintf(key, sizeof key, "device.%d.memory", device);
	snprintf(value, sizeof value, "%llu", (unsigned long long)total);
	tlm__writer_prop(key, value);
}

static inline void note_device_memory(int16_t device)
{
	if (device < 0 || device >= 64)
		return;
	uint64_t bit = 1ull << device;
	if (TLM_LIKELY(atomic_load_explicit(&sized_devices, memory_order_relaxed) & bit))
		return;
	note_device_memory_slow(device, bit);
}

static inline void usage(void *ptr, int64_t delta, uint64_t allocated, uint64_t reserved, int16_t device,
			 uint16_t flags)
{
	if (!ptr || !delta)
		return;
	note_device_memory(device);
	uint64_t size = delta < 0 ? -(uint64_t)delta : (uint64_t)delta;
	rec_block(delta > 0 ? TLM_OP_ALLOC : TLM_OP_FREE, (uint64_t)(uintptr_t)ptr, size, allocated, reserved,
		  device, 0, flags, TLM_API_c10_reportMemoryUsageToProfiler);
}

/* Forms without totals: tlm keeps a running sum of allocated per device. */
static _Atomic uint64_t sum_alloc[16];

typedef void (*mem3_fn)(void *, int64_t, size_t, size_t, uint64_t);
TLM_EXPORT void tlm_c10_mem_v3(void *ptr, int64_t delta, size_t allocated, size_t reserved, uint64_t dev)
	__asm__("_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE");
void tlm_c10_mem_v3(void *ptr, int64_t delta, size_t allocated, size_t reserved, uint64_t dev)
{
	mem3_fn real = (mem3_fn)real_of(F_MEM_V3);
	if ((uint8_t)dev == C10_CUDA) {
		bool wide = atomic_load_explicit(&layout, memory_order_relaxed) != 8;
		usage(ptr, delta, allocated, reserved, dev_index(dev, wide), 0);
	}
	if (real)
		real(ptr, delta, allocated, reserved, dev);
}

typedef void (*mem2_fn)(void *, int64_t, int64_t, int64_t, uint64_t);
TLM_EXPORT void tlm_c10_mem_v2(void *ptr, int64_t delta, int64_t allocated, int64_t reserved, uint64_t dev)
	__asm__("_ZN3c1027reportMemoryUsageToProfilerEPvlllNS_6DeviceE");
void tlm_c10_mem_v2(void *ptr, int64_t delta, int64_t allocated, int64_t reserved, uint64_t dev)
{
	mem2_fn real = (mem2_fn)real_of(F_MEM_V2);
	if ((uint8_t)dev == C10_CUDA)
		usage(ptr, delta, (uint64_t)allocated, (uint64_t)reserved, dev_index(dev, false), 0);
	if (real)
		real(ptr, delta, allocated, reserved, dev);
}

typedef void (*mem1_fn)(void *, int64_t, uint64_t);
TLM_EXPORT void tlm_c10_mem_v1(void *ptr, int64_t delta, uint64_t dev)
	__asm__("_ZN3c1027reportMemoryUsageToProfilerEPvlNS_6DeviceE");
void tlm_c10_mem_v1(void *ptr, int64_t delta, uint64_t dev)
{
	mem1_fn real = (mem1_fn)real_of(F_MEM_V1);
	if ((uint8_t)dev == C10_CUDA && ptr && delta) {
		int16_t d = dev_index(dev, false);
		uint64_t a = atomic_fetch_add_explicit(&sum_alloc[(uint16_t)d & 15], (uint64_t)delta,
						       memory_order_relaxed) + (uint64_t)delta;
		usage(ptr, delta, a, 0, d, TLM_EVF_NO_TOTALS);
	}
	if (real)
		real(ptr, delta, dev);
}

typedef void (*mem0_fn)(uint64_t, int64_t);
TLM_EXPORT void tlm_c10_mem_v0(uint64_t dev, int64_t delta) __asm__("_ZN3c1027reportMemoryUsageToProfilerENS_6DeviceEl");
void tlm_c10_mem_v0(uint64_t dev, int64_t delta)
{
	mem0_fn real = (mem0_fn)real_of(F_MEM_V0);
	if ((uint8_t)dev == C10_CUDA)
		tlm__log_once(v0, "torch 1.6 reports no block addresses: PyTorch blocks are not recorded");
	if (real)
		real(dev, delta);
}

static inline void oom(uint64_t size, uint64_t allocated, uint64_t reserved, uint64_t dev)
{
	if ((uint8_t)dev != C10_CUDA)
		return;
	bool wide = atomic_load_explicit(&layout, memory_order_relaxed) != 8;
	rec_block(TLM_OP_ALLOC, 0, size, allocated, reserved, dev_index(dev, wide), 2 /* out of memory */, 0,
		  TLM_API_c10_reportOutOfMemoryToProfiler);
}

typedef void (*ooml_fn)(int64_t, size_t, size_t, uint64_t);
TLM_EXPORT void tlm_c10_oom_l(int64_t size, size_t allocated, size_t reserved, uint64_t dev)
	__asm__("_ZN3c1027reportOutOfMemoryToProfilerElmmNS_6DeviceE");
void tlm_c10_oom_l(int64_t size, size_t allocated, size_t reserved, uint64_t dev)
{
	ooml_fn real = (ooml_fn)real_of(F_OOM_L);
	oom((uint64_t)size, allocated, reserved, dev);
	if (real)
		real(size, allocated, reserved, dev);
}

typedef void (*oomm_fn)(size_t, size_t, size_t, uint64_t);
TLM_EXPORT void tlm_c10_oom_m(size_t size, size_t allocated, size_t reserved, uint64_t dev)
	__asm__("_ZN3c1027reportOutOfMemoryToProfilerEmmmNS_6DeviceE");
void tlm_c10_oom_m(size_t size, size_t allocated, size_t reserved, uint64_t dev)
{
	oomm_fn real = (oomm_fn)real_of(F_OOM_M);
	oom(size, allocated, reserved, dev);
	if (real)
		real(size, allocated, reserved, dev);
}
