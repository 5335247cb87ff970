/* SPDX-License-Identifier: MIT */
/*
 * sim_nccl.c - libtlm_simnccl.so: what NCCL's collectives leave in their
 * output buffers on the simulated device.
 *
 * Contract: preloaded (after libtlm.so) into a program running on the
 * simulated driver, it defines NCCL's collective entry points. Each calls
 * the real one first (the loaded libnccl.so.2's), so everything NCCL does
 * stays NCCL's own: its communicators, its connections between the ranks
 * (the driver shares their buffers between processes), its device memory,
 * its kernel launches. Those kernels do not run on the simulated device, so
 * no data moves between ranks; what this library adds is the local part of
 * the result, as if every rank had contributed this rank's input: an
 * all-gather (and a gather at its root) puts this rank's buffer in every
 * rank's slot, an all-to-all puts the block this rank would receive from
 * itself in every slot, a broadcast or reduce at its root and an all-reduce
 * leave this rank's input in the output, a reduce-scatter and a scatter this
 * rank's own block; in a group, a broadcast from another root receives what
 * this rank broadcast in the same group with the same size (PyTorch's
 * all-gather of a tensor list is one broadcast per root). Reductions do not combine values (a sum is not
 * multiplied by the ranks). Shape and consistency checks that programs make
 * over collectives (DDP's all-gather of every rank's parameter count, its
 * broadcast of parameter shapes) then see what they see on a GPU when the
 * ranks agree. The copies are the driver's cuMemcpyAsync on the
 * collective's stream (so a captured collective captures them too);
 * nothing is allocated. A program that never calls NCCL never reaches this
 * library.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define API __attribute__((visibility("default")))

typedef int ncclResult;   /* ncclResult_t: 0 = ncclSuccess */
typedef void *ncclComm;   /* ncclComm_t */
typedef void *cudaStream; /* cudaStream_t, which is a CUstream */

/* ncclDataType_t 0..11: int8, uint8, int32, uint32, int64, uint64, float16,
 * float32, float64, bfloat16, float8e4m3, float8e5m2 */
static size_t type_size(int t)
{
	static const unsigned char sz[12] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
	return t >= 0 && t < 12 ? sz[t] : 0;
}

/* The real NCCL function, resolved once (any thread may ask first). NCCL
 * may sit in a local scope (a library dlopen'ed without RTLD_GLOBAL needs
 * it), which RTLD_NEXT does not search: ask the loaded libnccl.so.2 itself. */
static void *real(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!f) {
		void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
		f = h ? dlsym(h, name) : NULL;
		if (h)
			dlclose(h); /* only drops the reference RTLD_NOLOAD took */
		if (!f)
			f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

#define REAL(name) static void *real_##name

static int comm_info(ncclComm comm, int *nranks, int *rank)
{
	static void *count_fn, *rank_fn;
	ncclResult (*count)(ncclComm, int *) = (ncclResult(*)(ncclComm, int *))real(&count_fn, "ncclCommCount");
	ncclResult (*user)(ncclComm, int *) = (ncclResult(*)(ncclComm, int *))real(&rank_fn, "ncclCommUserRank");
	return count && user && count(comm, nranks) == 0 && user(comm, rank) == 0 && *nranks > 0 ? 0 : -1;
}

/* dst <- src, n bytes, on the collective's stream; nothing when they are one buffer */
static void copy(const void *dst, const void *src, size_t n, cudaStream s)
{
	static void *fn;
	if (!__atomic_load_n(&fn, __ATOMIC_ACQUIRE))
		__atomic_store_n(&fn, dlsym(RTLD_DEFAULT, "cuMemcpyAsync"), __ATOMIC_RELEASE);
	int (*memcpy_async)(uintptr_t, uintptr_t, size_t, cudaStream) =
		(int (*)(uintptr_t, uintptr_t, size_t, cudaStream))__atomic_load_n(&fn, __ATOMIC_ACQUIRE);
	if (memcpy_async && dst && src && dst != src && n)
		(void)memcpy_async((uintptr_t)dst, (uintptr_t)src, n, s);
}

/* every one of nranks slots of `each` bytes at recv <- src */
static void fill_slots(void *recv, const void *src, size_t each, int nranks, cudaStream s)
{
	for (int i = 0; i < nranks; i++)
		copy((char *)recv + (size_t)i * each, src, each, s);
}

typedef ncclResult (*gather_fn)(const void *, void *, size_t, int, ncclComm, cudaStream);
typedef ncclResult (*reduce_fn)(const void *, void *, size_t, int, int, ncclComm, cudaStream);
typedef ncclResult (*rooted_fn)(const void *, void *, size_t, int, int, ncclComm, cudaStream);
typedef ncclResult (*rooted_reduce_fn)(const void *, void *, size_t, int, int, int, ncclComm, cudaStream);

API ncclResult ncclAllGather(const void *send, void *recv, size_t count, int type, ncclComm comm, cudaStream s);
ncclResult ncclAllGather(const void *send, void *recv, size_t count, int type, ncclComm comm, cudaStream s)
{
	REAL(ncclAllGather);
	gather_fn f = (gather_fn)real(&real_ncclAllGather, "ncclAllGather");
	ncclResult r = f ? f(send, recv, count, type, comm, s) : 2; /* ncclSystemError */
	int n, me;
	if (r == 0 && comm_info(comm, &n, &me) == 0)
		fill_slots(recv, send, count * type_size(type), n, s);
	return r;
}

API ncclResult ncclAlltoAll(const void *send, void *recv, size_t count, int type, ncclComm comm, cudaStream s);
ncclResult ncclAlltoAll(const void *send, void *recv, size_t count, int type, ncclComm comm, cudaStream s)
{
	REAL(ncclAlltoAll);
	gather_fn f = (gather_fn)real(&real_ncclAlltoAll, "ncclAlltoAll");
	ncclResult r = f ? f(send, recv, count, type, comm, s) : 2;
	int n, me;
	size_t each = count * type_size(type);
	if (r == 0 && send != recv && comm_info(comm, &n, &me) == 0)
		fill_slots(recv, (const char *)send + (size_t)me * each, each, n, s);
	return r;
}

API ncclResult ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, ncclComm comm,
			     cudaStream s);
ncclResult ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, ncclComm comm, cudaStream s)
{
	REAL(ncclAllReduce);
	reduce_fn f = (reduce_fn)real(&real_ncclAllReduce, "ncclAllReduce");
	ncclResult r = f ? f(send, recv, count, type, op, comm, s) : 2;
	if (r == 0)
		copy(recv, send, count * type_size(type), s);
	return r;
}

API ncclResult ncclReduceScatter(const void *send, void *recv, size_t count, int type, int op, ncclComm comm,
				 cudaStream s);
ncclResult ncclReduceScatter(const void *send, void *recv, size_t count, int type, int op, ncclComm comm,
			     cudaStream s)
{
	REAL(ncclReduceScatter);
	reduce_fn f = (reduce_fn)real(&real_ncclReduceScatter, "ncclReduceScatter");
	ncclResult r = f ? f(send, recv, count, type, op, comm, s) : 2;
	int n, me;
	size_t each = count * type_size(type);
	if (r == 0 && comm_info(comm, &n, &me) == 0)
		copy(recv, (const char *)send + (size_t)me * each, each, s);
	return r;
}

/* Broadcasts inside a group (ncclGroupStart .. ncclGroupEnd) on this
 * thread: PyTorch makes an all-gather of a tensor list out of one broadcast
 * per root. The group's broadcast from this rank is what every rank sends,
 * so at the group's end each broadcast of the same size from another root
 * receives it too. */
#define GROUP_MAX 64
struct bcast {
	const void *send;
	void *recv;
	size_t bytes;
	bool own;
	cudaStream s;
};
static __thread int group_depth;
static __thread int group_n;
static __thread struct bcast group[GROUP_MAX];

API ncclResult ncclGroupStart(void);
ncclResult ncclGroupStart(void)
{
	REAL(ncclGroupStart);
	ncclResult (*f)(void) = (ncclResult(*)(void))real(&real_ncclGroupStart, "ncclGroupStart");
	ncclResult r = f ? f() : 2;
	if (r == 0 && group_depth++ == 0)
		group_n = 0;
	return r;
}

API ncclResult ncclGroupEnd(void);
ncclResult ncclGroupEnd(void)
{
	REAL(ncclGroupEnd);
	ncclResult (*f)(void) = (ncclResult(*)(void))real(&real_ncclGroupEnd, "ncclGroupEnd");
	ncclResult r = f ? f() : 2;
	if (group_depth > 0 && --group_depth == 0) {
		for (int i = 0; r == 0 && i < group_n; i++) {
			if (group[i].own)
				continue;
			for (int j = 0; j < group_n; j++)
				if (group[j].own && group[j].bytes == group[i].bytes) {
					copy(group[i].recv, group[j].send, group[i].bytes, group[i].s);
					break;
				}
		}
		group_n = 0;
	}
	return r;
}

API ncclResult ncclBroadcast(const void *send, void *recv, size_t count, int type, int root, ncclComm comm,
			     cudaStream s);
ncclResult ncclBroadcast(const void *send, void *recv, size_t count, int type, int root, ncclComm comm,
			 cudaStream s)
{
	REAL(ncclBroadcast);
	rooted_fn f = (rooted_fn)real(&real_ncclBroadcast, "ncclBroadcast");
	ncclResult r = f ? f(send, recv, count, type, root, comm, s) : 2;
	int n, me;
	size_t bytes = count * type_size(type);
	if (r == 0 && comm_info(comm, &n, &me) == 0) {
		if (me == root)
			copy(recv, send, bytes, s);
		if (group_depth > 0 && group_n < GROUP_MAX)
			group[group_n++] = (struct bcast){send, recv, bytes, me == root, s};
	}
	return r;
}

API ncclResult ncclReduce(const void *send, void *recv, size_t count, int type, int op, int root, ncclComm comm,
			  cudaStream s);
ncclResult ncclReduce(const void *send, void *recv, size_t count, int type, int op, int root, ncclComm comm,
		      cudaStream s)
{
	REAL(ncclReduce);
	rooted_reduce_fn f = (rooted_reduce_fn)real(&real_ncclReduce, "ncclReduce");
	ncclResult r = f ? f(send, recv, count, type, op, root, comm, s) : 2;
	int n, me;
	if (r == 0 && comm_info(comm, &n, &me) == 0 && me == root)
		copy(recv, send, count * type_size(type), s);
	return r;
}

API ncclResult ncclGather(const void *send, void *recv, size_t count, int type, int root, ncclComm comm,
			  cudaStream s);
ncclResult ncclGather(const void *send, void *recv, size_t count, int type, int root, ncclComm comm, cudaStream s)
{
	REAL(ncclGather);
	rooted_fn f = (rooted_fn)real(&real_ncclGather, "ncclGather");
	ncclResult r = f ? f(send, recv, count, type, root, comm, s) : 2;
	int n, me;
	if (r == 0 && comm_info(comm, &n, &me) == 0 && me == root)
		fill_slots(recv, send, count * type_size(type), n, s);
	return r;
}

API ncclResult ncclScatter(const void *send, void *recv, size_t count, int type, int root, ncclComm comm,
			   cudaStream s);
ncclResult ncclScatter(const void *send, void *recv, size_t count, int type, int root, ncclComm comm,
		       cudaStream s)
{
	REAL(ncclScatter);
	rooted_fn f = (rooted_fn)real(&real_ncclScatter, "ncclScatter");
	ncclResult r = f ? f(send, recv, count, type, root, comm, s) : 2;
	int n, me;
	size_t each = count * type_size(type);
	if (r == 0 && comm_info(comm, &n, &me) == 0 && me == root)
		copy(recv, (const char *)send + (size_t)me * each, each, s);
	return r;
}
