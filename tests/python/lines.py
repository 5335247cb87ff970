# SPDX-License-Identifier: MIT
# One function allocating on three lines in turn, again and again, with no
# other event between (tests/python/test_python.sh): the hook's Python walk
# compares each frame with the last walk's (pystack.c, struct hop), so
# when a frame comes back to a line it left two events before, that line
# must be told from the one the last walk read. check_lines.py wants each
# line's own allocations there.
import ctypes
import os

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
KiB = 1 << 10


def three(i):
    a, b, c = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(a), 1 * KiB + i) == 0  # LINE_A
    assert rt.cudaMalloc(ctypes.byref(b), 2 * KiB + i) == 0  # LINE_B
    assert rt.cudaMalloc(ctypes.byref(c), 4 * KiB + i) == 0  # LINE_C


for i in range(10):
    three(i)  # LINE_MAIN
