# SPDX-License-Identifier: MIT
# Allocation through nested Python calls from PATHS distinct call paths (a
# benchmark, not a test):
#   TLM_TEST_CUDART=build/src/sim/runtime/libcudart.so.13 LD_LIBRARY_PATH=build/src/sim \
#   [LD_PRELOAD=build/src/recording/libtlm.so TLM_SUMMARY=0 TLM_OUTPUT=/tmp/b.trace] \
#   python3 tests/python/bench_paths.py [paths] [depth] [iterations]
# Each iteration enters one of PATHS distinct functions (their own code
# objects and lines), which goes DEPTH calls deeper (default 10) and makes one
# cudaMalloc+cudaFree pair: every pair comes through a fresh Python call chain,
# as in real programs. Prints ns per pair (best of 3), wall and CPU; the added
# cost per event is (under tlm - plain) / 2.
import ctypes
import os
import sys
import time

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
npaths = int(sys.argv[1]) if len(sys.argv) > 1 else 16
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 10
iters = int(sys.argv[3]) if len(sys.argv) > 3 else 50000

p = ctypes.c_void_p()
ref = ctypes.byref(p)
malloc, free = rt.cudaMalloc, rt.cudaFree


def pair():
    malloc(ref, 4096)
    free(p)


def nest(k):
    if k > 0:
        nest(k - 1)
    else:
        pair()


src = "".join("def path_%d(d):\n    nest(d)\n" % i for i in range(npaths))
ns = {"nest": nest}
exec(compile(src, "paths.py", "exec"), ns)
paths = [ns["path_%d" % i] for i in range(npaths)]


def run(n):
    t, c = time.perf_counter_ns(), time.process_time_ns()
    for i in range(n):
        paths[i % npaths](depth)
    return (time.perf_counter_ns() - t) / n, (time.process_time_ns() - c) / n


run(1000)  # warm: caches filled
best = min(run(iters) for _ in range(3))
# wall ns per pair, and the process's CPU ns per pair (all its threads: under
# tlm the writer's too) in the same run: on a loaded machine the second is
# the steadier figure
print("%.0f %.0f" % best)
