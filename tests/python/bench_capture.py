# SPDX-License-Identifier: MIT
# Cost of a Python stack capture in the hook (a benchmark, not a test):
#   TLM_TEST_CUDART=build/src/sim/runtime/libcudart.so.13 LD_LIBRARY_PATH=build/src/sim \
#   LD_PRELOAD=build/src/recording/libtlm.so TLM_SUMMARY=0 TLM_OUTPUT=/tmp/b.trace \
#   TLM_PYTHON=auto|off python3 tests/python/bench_capture.py [depth] [iterations]
# Prints ns per cudaMalloc+cudaFree pair at the given Python depth (default 30);
# the difference between TLM_PYTHON=auto and off is the cost of two captures.
import ctypes
import os
import sys
import time

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
depth = int(sys.argv[1]) if len(sys.argv) > 1 else 30
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 200000


def loop(n):
    p = ctypes.c_void_p()
    ref = ctypes.byref(p)
    malloc, free = rt.cudaMalloc, rt.cudaFree
    t = time.perf_counter_ns()
    for _ in range(n):
        malloc(ref, 4096)
        free(p)
    return (time.perf_counter_ns() - t) / n


def nest(k, n):
    return nest(k - 1, n) if k > 1 else loop(n)


nest(depth - 1, 1000)  # warm: caches filled
best = min(nest(depth - 1, iters) for _ in range(3))
print("python depth %d: %.0f ns per cudaMalloc+cudaFree pair (TLM_PYTHON=%s)" %
      (depth, best, os.environ.get("TLM_PYTHON", "auto")))
