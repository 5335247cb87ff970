// SPDX-License-Identifier: MIT
/*
 * Stream capture and graphs, as far as they have an effect here: a capture
 * records the copies, sets and host functions issued on the capturing stream
 * (kernels run nothing anyway), and each launch of an instantiated graph
 * replays them in order. Stream-ordered allocation or free on a capturing
 * stream (graph memory nodes) is not modelled: it fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as does capturing the NULL, legacy
 * or per-thread stream. Graph and exec handles are checked against the live
 * set, so a stale or foreign one is CUDA_ERROR_INVALID_VALUE, never a crash.
 * Nothing here has a memory effect on the accounting.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

struct op {
	int kind; /* OP_COPY, OP_SET, OP_HOST */
	uint64_t dst, src, dpitch, spitch, width, rows;
	unsigned value, elem;
	void (*fn)(void *);
	void *user;
};
enum { OP_COPY, OP_SET, OP_HOST };
enum { OBJ_GRAPH = 1, OBJ_EXEC = 2 };

struct sim_graph {
	struct op *ops;
	size_t n, cap;
};

static struct sim_tree objects;   /* key = graph or exec address, val = OBJ_* */
static struct sim_tree capturing; /* key = stream, val = struct sim_graph * */
static __thread struct sim_graph *recording; /* set around one async call */

static bool special(CUstream s)
{
	return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

static struct sim_graph *graph_new(int kind)
{
	struct sim_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	if (!sim_tree_insert(&objects, (uint64_t)(uintptr_t)g, 0, (uintptr_t)kind)) {
		free(g);
		return NULL;
	}
	return g;
}

static void graph_free(struct sim_graph *g)
{
	sim_tree_remove(&objects, (uint64_t)(uintptr_t)g, NULL, NULL);
	free(g->ops);
	free(g);
}

static struct sim_graph *lookup(const void *p, int kind)
{
	struct sim_node *n = p ? sim_tree_find(&objects, (uint64_t)(uintptr_t)p) : NULL;
	return n && n->val == (uintptr_t)kind ? (struct sim_graph *)(uintptr_t)p : NULL;
}

/* ---- recording, called from sim_copy.c and sim_query.c ---- */

struct sim_graph *sim_capture_begin_call(CUstream s)
{
	struct sim_graph *g = NULL;
	if (!special(s)) {
		pthread_mutex_lock(&sim_lock);
		struct sim_node *n = sim_tree_find(&capturing, (uint64_t)(uintptr_t)s);
		g = n ? (struct sim_graph *)n->val : NULL;
		pthread_mutex_unlock(&sim_lock);
	}
	recording = g;
	return g;
}

void sim_capture_end_call(void)
{
	recording = NULL;
}

void *sim_stream_capturing(CUstream s)
{
	if (special(s))
		return NULL;
	pthread_mutex_lock(&sim_lock);
	struct sim_node *n = sim_tree_find(&capturing, (uint64_t)(uintptr_t)s);
	void *g = n ? (void *)n->val : NULL;
	pthread_mutex_unlock(&sim_lock);
	return g;
}

static CUresult append(const struct op *o)
{
	struct sim_graph *g = recording;
	pthread_mutex_lock(&sim_lock);
	CUresult r = CUDA_SUCCESS;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct op *ops = realloc(g->ops, cap * sizeof(*ops));
		if (!ops)
			r = CUDA_ERROR_OUT_OF_MEMORY;
		else
			g->ops = ops, g->cap = cap;
	}
	if (!r)
		g->ops[g->n++] = *o;
	pthread_mutex_unlock(&sim_lock);
	return r;
}

bool sim_capture_copy(uint64_t dst, uint64_t dpitch, uint64_t src, uint64_t spitch, uint64_t width,
		      uint64_t rows, CUresult *r)
{
	if (!recording)
		return false;
	struct op o = {.kind = OP_COPY, .dst = dst, .src = src, .dpitch = dpitch, .spitch = spitch,
		       .width = width, .rows = rows};
	*r = append(&o);
	return true;
}

bool sim_capture_set(uint64_t dst, uint64_t pitch, uint64_t width, uint64_t height, unsigned value,
		     unsigned elem, CUresult *r)
{
	if (!recording)
		return false;
	struct op o = {.kind = OP_SET, .dst = dst, .dpitch = pitch, .width = width, .rows = height,
		       .value = value, .elem = elem};
	*r = append(&o);
	return true;
}

bool sim_capture_host(void (*fn)(void *), void *user, CUresult *r)
{
	if (!recording)
		return false;
	struct op o = {.kind = OP_HOST, .fn = fn, .user = user};
	*r = append(&o);
	return true;
}

void sim_capture_stream_gone(CUstream s)
{
	uintptr_t g;
	pthread_mutex_lock(&sim_lock);
	if (sim_tree_remove(&capturing, (uint64_t)(uintptr_t)s, NULL, &g))
		graph_free((struct sim_graph *)g);
	pthread_mutex_unlock(&sim_lock);
}

/* ---- entry points ---- */

CUresult sim_cuStreamBeginCapture_v2(CUstream s, int mode)
{
	int dev;
	CUresult r = sim_stream_device(s, &dev);
	if (r)
		return r;
	if (mode < 0 || mode > 2)
		return CUDA_ERROR_INVALID_VALUE;
	if (special(s))
		return SIM_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	pthread_mutex_lock(&sim_lock);
	if (sim_tree_find(&capturing, (uint64_t)(uintptr_t)s)) {
		r = SIM_ERROR_ILLEGAL_STATE;
	} else {
		struct sim_graph *g = graph_new(OBJ_GRAPH);
		if (!g)
			r = CUDA_ERROR_OUT_OF_MEMORY;
		else if (!sim_tree_insert(&capturing, (uint64_t)(uintptr_t)s, 0, (uintptr_t)g)) {
			graph_free(g);
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuStreamBeginCapture_v2);

CUresult sim_cuStreamBeginCapture(CUstream s)
{
	return sim_cuStreamBeginCapture_v2(s, 0); /* CU_STREAM_CAPTURE_MODE_GLOBAL */
}
SIM_EXPORT(cuStreamBeginCapture);

CUresult sim_cuStreamBeginCapture_ptsz(CUstream s)
{
	return sim_cuStreamBeginCapture_v2(s ? s : CU_STREAM_PER_THREAD, 0);
}
SIM_EXPORT(cuStreamBeginCapture_ptsz);

CUresult sim_cuStreamBeginCapture_v2_ptsz(CUstream s, int mode)
{
	return sim_cuStreamBeginCapture_v2(s ? s : CU_STREAM_PER_THREAD, mode);
}
SIM_EXPORT(cuStreamBeginCapture_v2_ptsz);

CUresult sim_cuStreamEndCapture(CUstream s, void **graph)
{
	int dev;
	uintptr_t g;
	CUresult r = sim_stream_device(s, &dev);
	if (r)
		return r;
	if (!graph)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	if (special(s) || !sim_tree_remove(&capturing, (uint64_t)(uintptr_t)s, NULL, &g))
		r = SIM_ERROR_ILLEGAL_STATE;
	else
		*graph = (void *)g;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuStreamEndCapture);

CUresult sim_cuStreamEndCapture_ptsz(CUstream s, void **graph)
{
	return sim_cuStreamEndCapture(s ? s : CU_STREAM_PER_THREAD, graph);
}
SIM_EXPORT(cuStreamEndCapture_ptsz);

CUresult sim_cuGraphCreate(void **graph, unsigned flags)
{
	CUresult r = sim_enter(!graph || flags);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct sim_graph *g = graph_new(OBJ_GRAPH);
	pthread_mutex_unlock(&sim_lock);
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*graph = g;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuGraphCreate);

static CUresult destroy(void *p, int kind)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct sim_graph *g = lookup(p, kind);
	if (g)
		graph_free(g);
	pthread_mutex_unlock(&sim_lock);
	return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult sim_cuGraphDestroy(void *graph)
{
	return destroy(graph, OBJ_GRAPH);
}
SIM_EXPORT(cuGraphDestroy);

CUresult sim_cuGraphExecDestroy(void *exec)
{
	return destroy(exec, OBJ_EXEC);
}
SIM_EXPORT(cuGraphExecDestroy);

/* An exec is a snapshot of the graph's operations. */
static CUresult instantiate(void **exec, void *graph)
{
	CUresult r = sim_enter(!exec);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct sim_graph *g = lookup(graph, OBJ_GRAPH), *e = NULL;
	if (!g)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(e = graph_new(OBJ_EXEC)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if (g->n && !(e->ops = malloc(g->n * sizeof(*e->ops)))) {
		graph_free(e);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		if (g->n)
			memcpy(e->ops, g->ops, g->n * sizeof(*e->ops));
		e->n = e->cap = g->n;
		*exec = e;
	}
	pthread_mutex_unlock(&sim_lock);
	return r;
}

CUresult sim_cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags)
{
	(void)flags;
	return instantiate(exec, graph);
}
SIM_EXPORT(cuGraphInstantiateWithFlags);

CUresult sim_cuGraphInstantiate_v2(void **exec, void *graph, void **err_node, char *log, size_t n)
{
	if (err_node)
		*err_node = NULL;
	if (log && n)
		log[0] = '\0';
	return instantiate(exec, graph);
}
SIM_EXPORT(cuGraphInstantiate_v2);

CUresult sim_cuGraphInstantiate(void **exec, void *graph, void **err_node, char *log, size_t n)
{
	return sim_cuGraphInstantiate_v2(exec, graph, err_node, log, n);
}
SIM_EXPORT(cuGraphInstantiate);

struct inst_params { /* CUDA_GRAPH_INSTANTIATE_PARAMS */
	unsigned long long flags;
	CUstream upload;
	void *err_node;
	int result;
};

CUresult sim_cuGraphInstantiateWithParams(void **exec, void *graph, struct inst_params *p)
{
	CUresult r = instantiate(exec, graph);
	if (p) {
		p->err_node = NULL;
		p->result = r ? 1 : 0; /* CUDA_GRAPH_INSTANTIATE_ERROR / SUCCESS */
	}
	return r;
}
SIM_EXPORT(cuGraphInstantiateWithParams);

CUresult sim_cuGraphInstantiateWithParams_ptsz(void **exec, void *graph, struct inst_params *p)
{
	return sim_cuGraphInstantiateWithParams(exec, graph, p);
}
SIM_EXPORT(cuGraphInstantiateWithParams_ptsz);

CUresult sim_cuGraphUpload(void *exec, CUstream s)
{
	int dev;
	CUresult r = sim_stream_device(s, &dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	bool ok = lookup(exec, OBJ_EXEC) != NULL;
	pthread_mutex_unlock(&sim_lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuGraphUpload);

CUresult sim_cuGraphUpload_ptsz(void *exec, CUstream s)
{
	return sim_cuGraphUpload(exec, s ? s : CU_STREAM_PER_THREAD);
}
SIM_EXPORT(cuGraphUpload_ptsz);

/* Replays the exec's operations now (streams are always idle). The
 * operations are copied out first: a host function may launch or destroy. */
CUresult sim_cuGraphLaunch(void *exec, CUstream s)
{
	int dev;
	CUresult r = sim_stream_device(s, &dev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	struct sim_graph *e = lookup(exec, OBJ_EXEC);
	struct op *ops = NULL;
	size_t n = e ? e->n : 0;
	if (!e)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (n && !(ops = malloc(n * sizeof(*ops))))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if (n)
		memcpy(ops, e->ops, n * sizeof(*ops));
	pthread_mutex_unlock(&sim_lock);
	for (size_t i = 0; i < n && !r; i++) {
		const struct op *o = &ops[i];
		if (o->kind == OP_COPY)
			r = sim_copy_rows(o->dst, o->dpitch, o->src, o->spitch, o->width, o->rows);
		else if (o->kind == OP_SET)
			r = sim_set_rows(o->dst, o->dpitch, o->width, o->rows, o->value, o->elem);
		else
			o->fn(o->user);
	}
	free(ops);
	return r;
}
SIM_EXPORT(cuGraphLaunch);

CUresult sim_cuGraphLaunch_ptsz(void *exec, CUstream s)
{
	return sim_cuGraphLaunch(exec, s ? s : CU_STREAM_PER_THREAD);
}
SIM_EXPORT(cuGraphLaunch_ptsz);
