/* SPDX-License-Identifier: MIT */
/*
 * sim_exports.h - every driver entry point the simulator defines, by ABI name.
 *
 * Contract: sim_exports[] (generated at build time by gen_exports.py from the
 * SIM_EXPORT and SIM_API lines of the driver sources) is sorted by name (strcmp) and
 * holds the hidden implementation of each, so a lookup never reaches a
 * preloaded library's definition of the same name.
 */
#ifndef TLM_SIM_EXPORTS_H
#define TLM_SIM_EXPORTS_H

struct sim_export {
	const char *name;
	void (*fn)(void);
};

#pragma GCC visibility push(hidden)
extern const struct sim_export sim_exports[];
extern const unsigned sim_nexports;
#pragma GCC visibility pop

#endif
