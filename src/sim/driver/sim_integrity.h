/* SPDX-License-Identifier: MIT */
/*
 * sim_integrity.h - the runtime's integrity check (export table d4082055-...,
 * slot 1), as described publicly by vosen/ZLUDA (dark_api integrity_check).
 *
 * Contract: the answer is HMAC-MD2 (RFC 1319 digest, 16-byte blocks, RFC 2104
 * construction) under a fixed 16-byte key over a 48-byte header (driver
 * version, requested version, pid, thread id, the CUDART_INTERFACE table, the
 * INTEGRITY_CHECK table, its slot 1, the seconds argument) followed by 28
 * bytes per device (UUID, PCI domain, bus, device). Versions ending in 0 or 1
 * take fixed answers. The MD2 state is kept in the 66-byte layout the public
 * description's test vectors use, so the unit test checks each step.
 */
#ifndef TLM_SIM_INTEGRITY_H
#define TLM_SIM_INTEGRITY_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* x[0..16) state, x[16..32) the current block, x[32..48) state ^ block;
 * checksum; bytes of the current block taken; last checksum byte. */
struct sim_md2 {
	uint8_t x[48];
	uint8_t sum[16];
	uint8_t n;
	uint8_t last;
};
_Static_assert(sizeof(struct sim_md2) == 66, "layout of the published test vectors");

void sim_md2_byte(struct sim_md2 *m, uint8_t b);
/* Each byte of buf, xor mask. */
void sim_md2_update(struct sim_md2 *m, const void *buf, size_t n, uint8_t mask);
/* Pads, appends the checksum; the digest is m->x[0..16), copied to out. */
void sim_md2_final(struct sim_md2 *m, uint8_t out[16]);

struct sim_integrity_header {
	uint32_t driver_version, version, pid, thread;
	const void *cudart_table, *integrity_table, *integrity_fn;
	uint64_t seconds;
};
_Static_assert(sizeof(struct sim_integrity_header) == 48, "hashed as 48 bytes");

struct sim_integrity_device {
	uint8_t uuid[16];
	int32_t pci_domain, pci_bus, pci_device;
};
_Static_assert(sizeof(struct sim_integrity_device) == 28, "hashed as 28 bytes");

/* The key HMAC uses (the fixed result of the check's first pass). */
extern const uint8_t sim_integrity_key[16];

void sim_integrity_compute(const struct sim_integrity_header *h, const struct sim_integrity_device *devs,
			   int ndev, uint64_t out[2]);

#pragma GCC visibility pop

#endif
