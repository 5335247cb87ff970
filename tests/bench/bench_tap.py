# SPDX-License-Identifier: MIT
# The torch tap's path with Python stacks (a benchmark and icount.sh's
# "tap_python" workload, not a test):
#   [LD_PRELOAD=build/src/recording/libtlm.so TLM_SUMMARY=0 TLM_OUTPUT=/tmp/b.trace] \
#   python3 tests/bench/bench_tap.py [PATHS] [DEPTH] [ITERATIONS] [BLOCKS] [EVICT_KB]
# As PyTorch's caching allocator drives c10::reportMemoryUsageToProfiler
# (tests/bench/bench_tap.c, here from Python): each iteration enters one of
# PATHS distinct functions (their own code objects), DEPTH calls deeper
# (default 10), where one line allocates BLOCKS blocks (default 2: an op's
# output and a temporary) and the next line frees them, each block an
# allocation and a free through the tap, so both carry Python frames (a
# free: its Python frames only). Under libtlm.so the symbol is tlm's (the
# preload wins, found with dlsym(RTLD_DEFAULT)); without it libc's abs, a
# call of the same shape that does nothing, stands in, so plain runs cost
# the same loop. Prints wall and CPU ns per iteration (best of 3).
# EVICT_KB > 0: the host's own work between events, as in a training step,
# where an op's dispatch and kernels leave tlm's lines (and the frames'
# outer ones) out of the near caches: before the iteration's allocations
# and again before its frees EVICT_KB KiB are copied, only the tap's calls
# are timed, and it prints
# the median and the mean of the middle 80 % of the ns per iteration (the
# call's own cost, about 1 us per call through ctypes, is in both the
# plain and the traced figure). The iteration's depth moves by 0-2 calls,
# as a model's blocks come from layers one call deeper or shallower.
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import pypaths  # noqa: E402

TAP = "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE"
npaths = int(sys.argv[1]) if len(sys.argv) > 1 else 16
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 10
iters = int(sys.argv[3]) if len(sys.argv) > 3 else 50000
nblocks = int(sys.argv[4]) if len(sys.argv) > 4 else 2
evict_kb = int(sys.argv[5]) if len(sys.argv) > 5 else 0

lib = ctypes.CDLL(None)
try:
    tap = getattr(lib, TAP)
except AttributeError:
    tap = lib.abs
tap.restype = None
tap.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_uint64]
DEV = 1  # c10::Device {CUDA, 0} in a register
base = 0x7f0000000000
blocks = [base + 512 * k for k in range(nblocks)]
state = [0]


def alloc_all():
    for b in blocks:
        state[0] += 512
        tap(b, 512, state[0], 1 << 30, DEV)


def free_all():
    for b in blocks:
        state[0] -= 512
        tap(b, -512, state[0], 1 << 30, DEV)


def op():
    alloc_all()
    free_all()


if not evict_kb:
    best = pypaths.best_ns(op, npaths, depth, iters)
    print("%.0f %.0f" % best)
    sys.exit(0)

src, dst = bytearray(evict_kb * 512), bytearray(evict_kb * 512)
clock = time.perf_counter_ns
took = []


def op_cold():
    ns = 0
    for calls in (alloc_all, free_all):
        dst[:] = src  # the host's work between events
        t = clock()
        calls()
        ns += clock() - t
    took.append(ns)


paths = pypaths.paths_to(op_cold, npaths)
for i in range(iters + 1000):
    if i == 1000:
        took.clear()  # the warm-up: every path's frames interned
    paths[i % npaths](depth + i % 3)
took.sort()
mid = took[len(took) // 10:len(took) - len(took) // 10]
print("caches evicted (%d KiB) before the allocations and the frees: median %d ns per iteration, mean of the middle 80%% %.0f" %
      (evict_kb, took[len(took) // 2], sum(mid) / len(mid)))
