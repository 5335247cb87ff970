/* SPDX-License-Identifier: MIT */
/*
 * sim_nvml.h - what the two files of the simulated libnvidia-ml.so.1 share.
 *
 * Contract: sim_nvml.c answers devices, memory and processes from the
 * simulated driver's machine and owns the device handles; sim_nvml_topo.c
 * answers the hardware and topology queries (PCI, P2P, compute capability,
 * NVLink, confidential computing) that NCCL and PyTorch make. Return values
 * and structure layouts are NVIDIA's nvml.h ones, declared anew here.
 */
#ifndef TLM_SIM_NVML_H
#define TLM_SIM_NVML_H

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

#define MAX_DEVICES 16

typedef void *nvml_device; /* nvmlDevice_t: a pointer into sim_nvml.c's handles[] */

#define API __attribute__((visibility("default")))

/* The ordinal behind a handle, or -1. */
int simnvml_dev(nvml_device d);
/* Device dev's PCI bus (domain 0, device 0, function 0), or -1. */
int simnvml_bus(int dev);

#endif
