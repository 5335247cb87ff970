// SPDX-License-Identifier: MIT
// c10_cuda_double.cpp - libc10_cuda.so double: a small caching allocator
// shaped like PyTorch's. It takes segments from the CUDA runtime with
// cudaMalloc (small requests share 2 MiB segments, larger ones get their size
// rounded up to 2 MiB), places blocks (rounded to 512 B) first fit inside
// them, reports every block allocation and free through
// c10::reportMemoryUsageToProfiler (an imported symbol: a PLT call into
// libc10.so, as in torch) while holding its mutex, and on a failed cudaMalloc
// releases its empty segments and retries once before reporting the OOM
// through c10::reportOutOfMemoryToProfiler. It keeps its own exact
// accounting (struct dbl_truth), the truth tlm's report is checked against.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "c10_double.h"
#include "torch_double.h"

extern "C" {
int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);
int cudaSetDevice(int device);
int cudaMemGetInfo(size_t *free, size_t *total);
int cudaGetLastError(void);
}

#define DBL_API extern "C" __attribute__((visibility("default")))

namespace {

struct Segment {
	uint64_t base, size;
	std::map<uint64_t, uint64_t> blocks; // address -> size
};

std::recursive_mutex mu;
std::vector<Segment> segs; // by base
int dev;
dbl_truth truth;

c10::Device device()
{
	c10::Device d(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(dev));
#if C10_INDEX_BITS == 16
	// the padding byte is whatever the caller's register held
	reinterpret_cast<unsigned char *>(&d)[1] = 0x55;
#endif
	return d;
}

uint64_t round_block(size_t n)
{
	return n ? (n + 511) / 512 * 512 : 512;
}

uint64_t segment_size(uint64_t n)
{
	const uint64_t two = 2u << 20;
	return n <= (1u << 20) ? two : (n + two - 1) / two * two;
}

// First fit: the lowest free gap of at least n bytes.
bool find_gap(uint64_t n, uint64_t *at, size_t *seg)
{
	for (size_t i = 0; i < segs.size(); i++) {
		uint64_t p = segs[i].base;
		for (const auto &b : segs[i].blocks) {
			if (b.first - p >= n) {
				*at = p;
				*seg = i;
				return true;
			}
			p = b.first + b.second;
		}
		if (segs[i].base + segs[i].size - p >= n) {
			*at = p;
			*seg = i;
			return true;
		}
	}
	return false;
}

uint64_t largest_gap()
{
	uint64_t best = 0;
	for (const auto &s : segs) {
		uint64_t p = s.base;
		for (const auto &b : s.blocks) {
			best = std::max(best, b.first - p);
			p = b.first + b.second;
		}
		best = std::max(best, s.base + s.size - p);
	}
	return best;
}

void release_empty()
{
	for (size_t i = 0; i < segs.size();) {
		if (segs[i].blocks.empty()) {
			cudaFree(reinterpret_cast<void *>(segs[i].base));
			truth.reserved -= segs[i].size;
			segs.erase(segs.begin() + static_cast<long>(i));
		} else {
			i++;
		}
	}
}

void add_segment(void *p, uint64_t size)
{
	Segment s;
	s.base = reinterpret_cast<uint64_t>(p);
	s.size = size;
	segs.push_back(s);
	std::sort(segs.begin(), segs.end(), [](const Segment &a, const Segment &b) { return a.base < b.base; });
	truth.reserved += size;
}

void out_of_memory(uint64_t size, unsigned failures)
{
	size_t fr = 0, total = 0;
	cudaMemGetInfo(&fr, &total);
	if (truth.nooms < DBL_MAX_OOMS) {
		dbl_oom &o = truth.oom[truth.nooms++];
		o.requested = size;
		o.allocated = truth.allocated;
		o.reserved = truth.reserved;
		o.reserved_free = truth.reserved - truth.allocated;
		o.largest_free = largest_gap();
		o.device_free = fr;
		o.driver_failures = failures;
		o.fragmentation = o.reserved_free + o.device_free >= size;
	}
	truth.oom_calls++;
	c10::reportOutOfMemoryToProfiler(static_cast<int64_t>(size), truth.allocated, truth.reserved, device());
}

} // namespace

DBL_API int dbl_init(int device_index)
{
	dev = device_index;
	return cudaSetDevice(device_index);
}

DBL_API void *dbl_malloc(size_t n)
{
	std::lock_guard<std::recursive_mutex> lk(mu);
	uint64_t size = round_block(n), at = 0;
	size_t si = 0;
	if (!find_gap(size, &at, &si)) {
		uint64_t ss = segment_size(size);
		void *p = nullptr;
		unsigned failures = 0;
		if (cudaMalloc(&p, ss) != 0) {
			cudaGetLastError();
			failures++;
			release_empty(); // free the cached segments, then retry
			if (cudaMalloc(&p, ss) != 0) {
				cudaGetLastError();
				failures++;
				out_of_memory(size, failures);
				return nullptr;
			}
		}
		add_segment(p, ss);
		if (!find_gap(size, &at, &si))
			return nullptr; // cannot happen: the new segment fits
	}
	segs[si].blocks[at] = size;
	truth.allocated += size;
	truth.live_blocks++;
	if (truth.allocated > truth.peak_allocated) {
		truth.peak_allocated = truth.allocated;
		truth.reserved_at_peak_allocated = truth.reserved;
		truth.frag_at_peak_allocated =
			1.0 - static_cast<double>(truth.allocated) / static_cast<double>(truth.reserved);
	}
	if (truth.reserved > truth.peak_reserved) {
		truth.peak_reserved = truth.reserved;
		truth.allocated_at_peak = truth.allocated;
		truth.largest_gap_at_peak = largest_gap();
		uint64_t free_inside = truth.reserved - truth.allocated;
		truth.frag_at_peak = 1.0 - static_cast<double>(truth.allocated) / static_cast<double>(truth.reserved);
		truth.ext_frag_at_peak =
			free_inside ? 1.0 - static_cast<double>(truth.largest_gap_at_peak) / static_cast<double>(free_inside)
				    : 0.0;
	}
	truth.hook_calls++;
	c10::reportMemoryUsageToProfiler(reinterpret_cast<void *>(at), static_cast<int64_t>(size), truth.allocated,
					 truth.reserved, device());
	return reinterpret_cast<void *>(at);
}

DBL_API void dbl_free(void *ptr)
{
	std::lock_guard<std::recursive_mutex> lk(mu);
	uint64_t p = reinterpret_cast<uint64_t>(ptr);
	for (auto &s : segs) {
		auto it = s.blocks.find(p);
		if (it == s.blocks.end())
			continue;
		uint64_t size = it->second;
		s.blocks.erase(it);
		truth.allocated -= size;
		truth.live_blocks--;
		truth.hook_calls++;
		c10::reportMemoryUsageToProfiler(ptr, -static_cast<int64_t>(size), truth.allocated, truth.reserved,
						 device());
		return;
	}
}

DBL_API void dbl_cpu_report(void)
{
	static char host[4096];
	truth.hook_calls++;
	c10::reportMemoryUsageToProfiler(host, sizeof host, 0, 0, c10::Device(c10::DeviceType::CPU, -1));
}

DBL_API void dbl_truth(dbl_truth *t)
{
	std::lock_guard<std::recursive_mutex> lk(mu);
	*t = truth;
}
