// SPDX-License-Identifier: MIT
/*
 * Peer access, as between the GPUs of one NVLink-connected H100 machine:
 * every pair of distinct devices can access each other (atomics included,
 * CUDA arrays not: arrays are not modelled), and a context enables access to
 * a peer's memory once. Nothing changes what a copy may do (any device may
 * copy from any other here); only the answers and the enabled pairs are
 * modelled, with the real driver's error codes.
 */
#include "sim_internal.h"

#define SIM_ERROR_PEER_ACCESS_ALREADY_ENABLED ((CUresult)704)
#define SIM_ERROR_PEER_ACCESS_NOT_ENABLED ((CUresult)705)

/* enabled[d] bit p: device d's contexts may access device p's memory. */
static uint32_t enabled[SIM_MAX_DEVICES];

/* The entry prologue with a second device. */
static CUresult pair_check(bool bad, CUdevice dev, CUdevice peer)
{
	CUresult r = sim_enter_device(bad, dev);
	return r ? r : sim_enter_device(false, peer);
}

CUresult sim_cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
	CUresult r = pair_check(!can, dev, peer);
	if (r)
		return r;
	*can = dev != peer;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceCanAccessPeer);

CUresult sim_cuDeviceGetP2PAttribute(int *value, int attrib, CUdevice src, CUdevice dst)
{
	CUresult r = pair_check(!value || attrib < 1 || attrib > 5, src, dst);
	if (r)
		return r;
	if (src == dst)
		return CUDA_ERROR_INVALID_DEVICE; /* as the real driver */
	/* 1 performance rank, 2 access, 3 native atomics, 4 CUDA arrays,
	 * 5 only partial atomics */
	*value = attrib == 2 || attrib == 3;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetP2PAttribute);

/* The current context's device and the peer context's, checked. */
static CUresult devices_of(CUcontext peer, int *dev, int *pdev)
{
	CUresult r = sim_current_device(dev);
	if (r)
		return r;
	if (!sim_ctx_valid(peer, pdev))
		return CUDA_ERROR_INVALID_CONTEXT;
	return *pdev == *dev ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult sim_cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
	int dev, pdev;
	CUresult r = devices_of(peer, &dev, &pdev);
	if (r)
		return r;
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	if (enabled[dev] & (1u << pdev))
		r = SIM_ERROR_PEER_ACCESS_ALREADY_ENABLED;
	else
		enabled[dev] |= 1u << pdev;
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuCtxEnablePeerAccess);

CUresult sim_cuCtxDisablePeerAccess(CUcontext peer)
{
	int dev, pdev;
	CUresult r = devices_of(peer, &dev, &pdev);
	if (r)
		return r;
	pthread_mutex_lock(&sim_lock);
	if (!(enabled[dev] & (1u << pdev)))
		r = SIM_ERROR_PEER_ACCESS_NOT_ENABLED;
	else
		enabled[dev] &= ~(1u << pdev);
	pthread_mutex_unlock(&sim_lock);
	return r;
}
SIM_EXPORT(cuCtxDisablePeerAccess);
