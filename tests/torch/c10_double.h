// SPDX-License-Identifier: MIT
// c10_double.h - the parts of c10 that the caching allocator's tap sees, with
// the c10::Device layout of the torch version being imitated:
// C10_INDEX_BITS 8 (DeviceIndex = int8_t, torch < 2.3) or 16 (int16_t).
#ifndef TLM_TEST_C10_DOUBLE_H
#define TLM_TEST_C10_DOUBLE_H

#include <cstddef>
#include <cstdint>

#define C10_API __attribute__((visibility("default")))

namespace c10 {
enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
#if C10_INDEX_BITS == 16
using DeviceIndex = int16_t;
#else
using DeviceIndex = int8_t;
#endif
struct Device {
	Device(DeviceType t, DeviceIndex i) : type_(t), index_(i) {}
	DeviceType type_;
	DeviceIndex index_;
};
static_assert(sizeof(Device) == (C10_INDEX_BITS == 16 ? 4 : 2), "layout");

C10_API void reportMemoryUsageToProfiler(void *ptr, int64_t alloc_size, size_t total_allocated,
					 size_t total_reserved, Device device);
C10_API void reportOutOfMemoryToProfiler(int64_t alloc_size, size_t total_allocated, size_t total_reserved,
					 Device device);
} // namespace c10

#endif
