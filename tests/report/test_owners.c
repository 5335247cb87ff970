/* SPDX-License-Identifier: MIT */
/*
 * test_owners.c - who holds the reserved memory (owners.h, docs/report.md
 * OWNERS) on synthetic traces whose truth the test writes itself: modules
 * laid out at known addresses, stacks through them, and the bytes each
 * owner holds at the reserved peak, at an OOM, at the end of the run and at
 * its own peak, worked out by hand below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/owners.h"
#include "rt.h"

#define MiB (1ull << 20)

enum { M_EXE = 1, M_C10, M_CUBLAS, M_CUDNN, M_NCCL, M_CUDART, M_FOO, M_TLM };
/* module i's code lies at [i << 28, (i << 28) + 1 MiB) */
#define AT(m) (((uint64_t)(m) << 28) + 0x1000)

static const char *const paths[] = {
	[M_EXE] = "/usr/bin/train", [M_C10] = "/venv/torch/lib/libc10_cuda.so",
	[M_CUBLAS] = "/venv/nvidia/cu13/lib/libcublasLt.so.13", [M_CUDNN] = "/venv/nvidia/cudnn/lib/libcudnn_graph.so.9",
	[M_NCCL] = "/venv/nvidia/nccl/lib/libnccl.so.2", [M_CUDART] = "/venv/nvidia/cu13/lib/libcudart.so.13",
	[M_FOO] = "/opt/lib/libfoo.so.1", [M_TLM] = "/opt/tlm/lib/libtlm.so",
};

static void module(struct rt *t, uint32_t id, const char *path, uint64_t base)
{
	struct tlm_rec_module m;
	memset(&m, 0, sizeof m);
	m.id = id;
	m.base = base;
	m.nseg = 1;
	m.seg[0].start = base;
	m.seg[0].end = base + MiB;
	snprintf(m.path, sizeof m.path, "%s", path);
	assert_int_equal(tlm_tw_module(rt_writer(t), &m), 0);
}

static void stack2(struct rt *t, uint32_t id, uint64_t a, uint64_t b)
{
	uint64_t ip[4] = {AT(M_TLM), a, b, AT(M_EXE)};
	rt_stack(t, id, ip, 4);
}

static void ev(struct rt *t, unsigned op, unsigned kind, unsigned api, uint64_t addr, uint64_t size, uint64_t ms,
	       uint32_t stack, int result, uint16_t flags)
{
	struct tlm_event e;
	memset(&e, 0, sizeof e);
	e.op = (uint8_t)op;
	e.kind = (uint8_t)kind;
	e.api = (uint16_t)api;
	e.addr = addr;
	e.size = size;
	e.time_ns = ms * RT_MS;
	e.stack_id = stack;
	e.result = result;
	e.flags = flags;
	e.device = 0;
	e.device_free = result ? 5 * MiB : 0;
	rt_event(t, &e);
}

static void alloc(struct rt *t, uint64_t addr, uint64_t size, uint64_t ms, uint32_t stack)
{
	ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, addr, size, ms, stack, 0, 0);
}

static void dfree(struct rt *t, uint64_t addr, uint64_t ms, uint16_t flags)
{
	ev(t, TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFree, addr, 0, ms, 0, 0, flags);
}

static const struct tlm_report_device *dev(const struct tlm_report *r, int device, int kind)
{
	for (size_t i = 0; i < r->ndevices; i++)
		if (r->devices[i].device == device && r->devices[i].kind == kind)
			return &r->devices[i];
	fail_msg("no device %d kind %d", device, kind);
	return NULL;
}

static const struct tlm_report_owner *owner(const struct tlm_report_device *d, const char *name)
{
	for (size_t i = 0; i < d->nowners; i++)
		if (!strcmp(d->owners[i].name, name))
			return &d->owners[i];
	fail_msg("no owner %s", name);
	return NULL;
}

static void expect(const struct tlm_report_device *d, const char *name, uint64_t at_peak, uint64_t peak,
		   uint64_t at_end)
{
	const struct tlm_report_owner *w = owner(d, name);
	if (w->at_reserved_peak != at_peak || w->peak != peak || w->at_end != at_end)
		fail_msg("%s: at the reserved peak %llu (expected %llu), peak %llu (%llu), at end %llu (%llu)", name,
			 (unsigned long long)w->at_reserved_peak, (unsigned long long)at_peak,
			 (unsigned long long)w->peak, (unsigned long long)peak, (unsigned long long)w->at_end,
			 (unsigned long long)at_end);
}

/* Every owner by its frames; a Python stack's owner from its own native
 * stack although the report groups it with another one of the same Python
 * frames; blocks never counted; the sums at each moment. */
static void test_owners_by_frame(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	for (uint32_t m = M_EXE; m <= M_TLM; m++)
		module(t, m, paths[m], (uint64_t)m << 28);
	stack2(t, 1, AT(M_CUDART), AT(M_C10));            /* the caching allocator */
	stack2(t, 2, AT(M_CUBLAS), AT(M_C10));            /* cuBLAS first: its workspace */
	stack2(t, 3, AT(M_CUDNN), AT(M_FOO));             /* cuDNN */
	stack2(t, 4, AT(M_NCCL), AT(M_C10));              /* NCCL */
	stack2(t, 5, AT(M_CUDART), AT(M_EXE));            /* the program */
	stack2(t, 6, AT(M_FOO), AT(M_C10));               /* another library by its file name */
	uint64_t only_rt[2] = {AT(M_TLM), AT(M_CUDART)};  /* carriers only: the innermost carrier */
	rt_stack(t, 7, only_rt, 2);
	uint64_t unmapped[3] = {0x123, AT(M_CUDART), AT(M_C10)}; /* no module: skipped */
	rt_stack(t, 8, unmapped, 3);
	/* two Python stacks with the same frames (one site in the report), made
	 * through cuBLAS and through the caching allocator */
	assert_int_equal(tlm_tw_string(rt_writer(t), 1, "model.py", 8), 0);
	assert_int_equal(tlm_tw_string(rt_writer(t), 2, "forward", 7), 0);
	struct tlm_rec_pystack ps;
	memset(&ps, 0, sizeof ps);
	ps.depth = 1;
	ps.f[0] = (struct tlm_py_frame){.file = 1, .name = 2, .line = 12};
	ps.id = 100;
	ps.native = 2;
	assert_int_equal(tlm_tw_pystack(rt_writer(t), &ps), 0);
	ps.id = 101;
	ps.native = 1;
	assert_int_equal(tlm_tw_pystack(rt_writer(t), &ps), 0);

	uint64_t ms = 1;
	alloc(t, 0x1000000, 20 * MiB, ms++, 101);  /* pytorch 20 (Python) */
	alloc(t, 0x3000000, 64 * MiB, ms++, 100);  /* cublas 64 (Python, same frames) */
	alloc(t, 0x8000000, 1 * MiB, ms++, 3);     /* cudnn 1 */
	ev(t, TLM_OP_ALLOC, TLM_KIND_VMM_PHYSICAL, TLM_API_cuMemCreate, 0x77, 4 * MiB, ms++, 4, 0, 0); /* nccl 4 */
	alloc(t, 0x9000000, 3 * MiB, ms++, 5);     /* program 3 */
	ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMallocAsync, 0xa000000, 2 * MiB, ms++, 5, 0, 0); /* pools 2 */
	alloc(t, 0xb000000, 5 * MiB, ms++, 6);     /* libfoo.so.1 5 */
	alloc(t, 0xc000000, 1 * MiB, ms++, 7);     /* libcudart.so.13 1 */
	alloc(t, 0xd000000, 2 * MiB, ms++, 8);     /* pytorch 2 more: 22 */
	alloc(t, 0xe000000, 6 * MiB, ms++, 0);     /* unknown 6 */
	ev(t, TLM_OP_ALLOC, TLM_KIND_BLOCK, TLM_API_c10_reportMemoryUsageToProfiler, 0x1000000, 8 * MiB, ms++, 1, 0,
	   0); /* a block inside pytorch's segment: not an owner's */
	/* reserved peak: 20+64+1+4+3+2+5+1+2+6 = 108 MiB */
	dfree(t, 0x3000000, ms++, 0);              /* cublas 0 */
	alloc(t, 0xf000000, 30 * MiB, ms++, 1);    /* pytorch 52: its own peak, reserved 74 */
	dfree(t, 0xf000000, ms++, 0);              /* pytorch 22 */
	ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, 0, 200 * MiB, ms++, 1, 2, 0); /* OOM at 44 MiB */
	dfree(t, 0xe000000, ms++, TLM_EVF_FINALIZING); /* the end of the run is before this free */
	dfree(t, 0x1000000, ms++, TLM_EVF_FINALIZING);
	struct tlm_report *r = rt_build(t, true, ms, NULL);

	const struct tlm_report_device *d = dev(r, 0, TLM_MEM_DEVICE);
	assert_int_equal(d->peak_reserved, 108 * MiB);
	assert_int_equal(d->reserved_at_end, 44 * MiB);
	assert_int_equal(d->nowners, 9);
	expect(d, TLM_OWNER_PYTORCH, 22 * MiB, 52 * MiB, 22 * MiB);
	expect(d, TLM_OWNER_CUBLAS, 64 * MiB, 64 * MiB, 0);
	expect(d, TLM_OWNER_CUDNN, 1 * MiB, 1 * MiB, 1 * MiB);
	expect(d, TLM_OWNER_NCCL, 4 * MiB, 4 * MiB, 4 * MiB);
	expect(d, TLM_OWNER_PROGRAM, 3 * MiB, 3 * MiB, 3 * MiB);
	expect(d, TLM_OWNER_POOLS, 2 * MiB, 2 * MiB, 2 * MiB);
	expect(d, "libfoo.so.1", 5 * MiB, 5 * MiB, 5 * MiB);
	expect(d, "libcudart.so.13", 1 * MiB, 1 * MiB, 1 * MiB);
	expect(d, TLM_OWNER_UNKNOWN, 6 * MiB, 6 * MiB, 6 * MiB);
	/* sorted by the bytes at the reserved peak */
	assert_string_equal(d->owners[0].name, TLM_OWNER_CUBLAS);
	assert_string_equal(d->owners[1].name, TLM_OWNER_PYTORCH);
	uint64_t at_peak = 0, at_end = 0;
	for (size_t i = 0; i < d->nowners; i++) {
		at_peak += d->owners[i].at_reserved_peak;
		at_end += d->owners[i].at_end;
	}
	assert_int_equal(at_peak, d->peak_reserved);
	assert_int_equal(at_end, d->reserved_at_end);
	/* the OOM: 44 MiB reserved, each owner's part */
	assert_int_equal(r->nooms, 1);
	const struct tlm_report_oom *o = &r->ooms[0];
	assert_int_equal(o->reserved, 44 * MiB);
	assert_non_null(o->owner_bytes);
	uint64_t sum = 0;
	for (size_t i = 0; i < d->nowners; i++) {
		sum += o->owner_bytes[i];
		if (!strcmp(d->owners[i].name, TLM_OWNER_PYTORCH))
			assert_int_equal(o->owner_bytes[i], 22 * MiB);
		if (!strcmp(d->owners[i].name, TLM_OWNER_CUBLAS))
			assert_int_equal(o->owner_bytes[i], 0);
	}
	assert_int_equal(sum, 44 * MiB);

	/* the renderings say it: text rows, JSON keys, the summary line */
	char *text = rt_render(r, tlm_report_text);
	assert_non_null(strstr(text, "OWNERS: who took the reserved memory"));
	assert_non_null(strstr(text, "torch.cuda.max_memory_reserved() is pytorch's own peak, 52.0 MiB."));
	assert_non_null(strstr(text, "held then: 44.0 MiB reserved: pytorch 22.0 MiB"));
	assert_non_null(strstr(text, "unknown: no native stack"));
	free(text);
	char *json = rt_render(r, tlm_report_json);
	assert_non_null(strstr(json, "\"owners\":[{\"owner\":\"cublas\",\"peak_bytes\":67108864,"));
	assert_non_null(strstr(json, "\"bytes_at_reserved_peak\":67108864,\"live_bytes_at_end\":0}"));
	free(json);
	char *sum_text = rt_render(r, tlm_report_summary);
	assert_non_null(strstr(sum_text, "  owners at the reserved peak 108.0 MiB: cublas 64.0 MiB, pytorch 22.0 MiB"));
	free(sum_text);
	tlm_report_free(r);
}

/* A module unloaded and another loaded at its address: a stack there is
 * owned by what was loaded when it allocated. Without stacks: unknown only. */
static void test_owners_reload_and_no_stacks(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	module(t, 1, paths[M_EXE], (uint64_t)M_EXE << 28);
	module(t, 2, paths[M_CUBLAS], (uint64_t)M_FOO << 28);
	stack2(t, 1, AT(M_FOO), AT(M_EXE));
	alloc(t, 0x1000000, 4 * MiB, 1, 1);     /* cublas */
	assert_int_equal(tlm_tw_module_unload(rt_writer(t), 2), 0);
	module(t, 3, paths[M_FOO], (uint64_t)M_FOO << 28);
	alloc(t, 0x2000000, 2 * MiB, 2, 1);     /* libfoo.so.1 now */
	struct tlm_report *r = rt_build(t, true, 3, NULL);
	const struct tlm_report_device *d = dev(r, 0, TLM_MEM_DEVICE);
	expect(d, TLM_OWNER_CUBLAS, 4 * MiB, 4 * MiB, 4 * MiB);
	expect(d, "libfoo.so.1", 2 * MiB, 2 * MiB, 2 * MiB);
	tlm_report_free(r);

	t = rt_open();
	alloc(t, 0x1000000, 4 * MiB, 1, 0);
	ev(t, TLM_OP_ALLOC, TLM_KIND_MANAGED, TLM_API_cudaMallocManaged, 0x4000000, 1 * MiB, 2, 0, 0, 0);
	r = rt_build(t, true, 3, NULL);
	d = dev(r, 0, TLM_MEM_DEVICE);
	assert_int_equal(d->nowners, 1);
	expect(d, TLM_OWNER_UNKNOWN, 4 * MiB, 4 * MiB, 4 * MiB);
	d = dev(r, 0, TLM_MEM_MANAGED);
	expect(d, TLM_OWNER_UNKNOWN, 1 * MiB, 1 * MiB, 1 * MiB);
	tlm_report_free(r);
}

static void test_owner_class(void **state)
{
	(void)state;
	const char *name;
	assert_int_equal(tlm__owner_class("/a/libcudart.so.12", "/bin/x", &name), TLM__OWN_CARRIER);
	assert_int_equal(tlm__owner_class("/lib/x86_64-linux-gnu/libc.so.6", "/bin/x", &name), TLM__OWN_CARRIER);
	assert_int_equal(tlm__owner_class("/usr/bin/python3.11", "/bin/x", &name), TLM__OWN_PROGRAM);
	assert_int_equal(tlm__owner_class("/bin/x", "/bin/x", &name), TLM__OWN_PROGRAM);
	assert_int_equal(tlm__owner_class("", "/bin/x", &name), TLM__OWN_PROGRAM);
	assert_int_equal(tlm__owner_class("/p/_ctypes.cpython-311-x86_64-linux-gnu.so", "/bin/x", &name),
			 TLM__OWN_PROGRAM);
	assert_int_equal(tlm__owner_class("/t/lib/libc10_cuda.so", "/bin/x", &name), TLM__OWN_NAMED);
	assert_string_equal(name, TLM_OWNER_PYTORCH);
	assert_int_equal(tlm__owner_class("/t/lib/libc10.so", "/bin/x", &name), TLM__OWN_NAMED);
	assert_null(name); /* CPU side of c10: not the caching allocator */
	assert_int_equal(tlm__owner_class("/n/libcudnn_engines_precompiled.so.9", "/bin/x", &name), TLM__OWN_NAMED);
	assert_string_equal(name, TLM_OWNER_CUDNN);
	assert_int_equal(tlm__owner_class("/n/libnccl.so.2", "/bin/x", &name), TLM__OWN_NAMED);
	assert_string_equal(name, TLM_OWNER_NCCL);
	assert_int_equal(tlm__owner_class("/n/libtorch_cuda.so", "/bin/x", &name), TLM__OWN_NAMED);
	assert_null(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owners_by_frame),
		cmocka_unit_test(test_owners_reload_and_no_stacks),
		cmocka_unit_test(test_owner_class),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
