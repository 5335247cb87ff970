# SPDX-License-Identifier: MIT
# Allocations and frees one after another at call depths that change by one
# or more between them, under the same outer frames, and a path of ten new
# frames (tests/python/test_python.sh): the hook's Python walk reuses what it
# read of the last walk's frames (pystack.c, struct hop), so a frame it meets
# again must still get its own line. Each allocation must be its own line
# with all of its calls, at its depth; the check (check_depths.py) reads the
# lines by marker. Last, a thread whose outermost frame is a recursive
# function allocates at each level as the recursion returns: each stack is
# the last one less its outermost frame, the rest the same hop for hop (the
# walk's interning may reuse only what lies past the changed hops of a walk
# as long as the last).
import _thread
import ctypes
import os

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
KiB = 1 << 10
kept = []


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n) == 0  # LINE_MALLOC
    return p.value


def free(p):
    assert rt.cudaFree(ctypes.c_void_p(p)) == 0


def down(k, size):
    if k > 0:
        return down(k - 1, size)  # LINE_DOWN
    kept.append(malloc(size))  # LINE_FIRST
    kept.append(malloc(size + KiB))  # LINE_SECOND
    free(malloc(size + 3))  # LINE_TEMP


def far(k, size):
    if k > 0:
        return far(k - 1, size)  # LINE_FAR
    kept.append(malloc(size))  # LINE_FARALLOC


def step(i):
    # depths 0-6 in an order where each differs from the last by 1 to 5
    for d in (3, 4, 2, 5, 0, 6, 1, 3, 2):
        down(d, (d * 2 + i % 2 + 1) * KiB)  # LINE_STEP
        if d == 6:  # then ten new frames in a row
            far(9, 64 * KiB)  # LINE_STEPFAR
        free(kept.pop(0)) if len(kept) > 40 else None  # LINE_POP


for i in range(12):
    step(i)  # LINE_MAIN

rec_kept = []


def rec(k, top, done):
    if k > 0:
        rec(k - 1, top, done)  # LINE_REC
    rec_kept.append(malloc((k + 1) * 3 * KiB))  # LINE_RECALLOC
    if k == top:  # the thread's outermost frame: its work is done
        done.release()


done = _thread.allocate_lock()
done.acquire()
_thread.start_new_thread(rec, (6, 6, done))  # rec is the thread's first frame
done.acquire()
