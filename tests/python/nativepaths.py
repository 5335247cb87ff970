# SPDX-License-Identifier: MIT
# One Python line allocates through two native paths in turn (twopaths.c:
# tlm_test_via_a calls cudaMalloc itself, tlm_test_via_b through one more
# function): the same Python frames, two native stacks, so two sites
# (check_nativepaths.py). The hook's Python walk keeps the merged id of a
# frame's last stack (pystack.c, pymemo.h): the native stack is part of it.
import ctypes
import os

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
paths = ctypes.CDLL(os.environ["TLM_TEST_TWOPATHS"])
malloc = ctypes.cast(rt.cudaMalloc, ctypes.c_void_p)
for fn in (paths.tlm_test_via_a, paths.tlm_test_via_b):
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
KiB = 1 << 10
kept = []


def alloc(i):
    p = ctypes.c_void_p()
    # path a for even i, b for odd; sizes tell the check which call made each
    via = paths.tlm_test_via_a if i % 2 == 0 else paths.tlm_test_via_b
    assert via(malloc, ctypes.byref(p), (i + 1) * KiB) == 0  # LINE_CALL
    kept.append(p.value)


for i in range(40):
    alloc(i)  # LINE_LOOP
