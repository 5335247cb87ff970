# SPDX-License-Identifier: MIT
# Allocation through nested Python calls from PATHS distinct call paths (a
# benchmark, not a test):
#   TLM_TEST_CUDART=build/src/sim/runtime/libcudart.so.13 LD_LIBRARY_PATH=build/src/sim \
#   [LD_PRELOAD=build/src/recording/libtlm.so TLM_SUMMARY=0 TLM_OUTPUT=/tmp/b.trace] \
#   python3 tests/python/bench_paths.py [paths] [depth] [iterations] [spread]
# Each iteration enters one of PATHS distinct functions (their own code
# objects and lines), which goes DEPTH calls deeper (default 10) and makes one
# cudaMalloc+cudaFree pair: every pair comes through a fresh Python call chain,
# as in real programs. SPREAD > 1 (default 1): the depth changes from one
# pair to the next, DEPTH to DEPTH + SPREAD - 1 (pypaths.best_ns). Prints
# ns per pair (best of 3), wall and CPU; the added cost per event is (under
# tlm - plain) / 2.
import ctypes
import os
import sys

import pypaths

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
npaths = int(sys.argv[1]) if len(sys.argv) > 1 else 16
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 10
iters = int(sys.argv[3]) if len(sys.argv) > 3 else 50000
spread = int(sys.argv[4]) if len(sys.argv) > 4 else 1

p = ctypes.c_void_p()
ref = ctypes.byref(p)
malloc, free = rt.cudaMalloc, rt.cudaFree


def pair():
    malloc(ref, 4096)
    free(p)


best = pypaths.best_ns(pair, npaths, depth, iters, spread)
# wall ns per pair, and the process's CPU ns per pair (all its threads: under
# tlm the writer's too) in the same run: on a loaded machine the second is
# the steadier figure
print("%.0f %.0f" % best)
