// SPDX-License-Identifier: MIT
// c10_double.cpp - libc10.so double: the real profiler hooks, which only
// count the calls that reach them (libtlm.so must forward every one).
#include <atomic>

#include "c10_double.h"

static std::atomic<long> mem_calls, oom_calls;

namespace c10 {
void reportMemoryUsageToProfiler(void *, int64_t, size_t, size_t, Device)
{
	mem_calls++;
}
void reportOutOfMemoryToProfiler(int64_t, size_t, size_t, Device)
{
	oom_calls++;
}
} // namespace c10

extern "C" C10_API long c10dbl_mem_calls(void)
{
	return mem_calls.load();
}
extern "C" C10_API long c10dbl_oom_calls(void)
{
	return oom_calls.load();
}
