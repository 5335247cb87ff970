# SPDX-License-Identifier: MIT
# Classes constructed again and again (tests/python/test_python.sh): from the
# second call on, CPython 3.13 runs __init__ under a shim frame of its own
# (CALL_ALLOC_AND_ENTER_INIT); every allocation below must stay one site, at
# its own line, with all of its calls; a stack deeper than 64 frames is
# flagged as cut. The check reads the lines by marker.
import ctypes
import os

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n) == 0
    return p.value


class Layer:
    def __init__(self, n):
        self.ptr = malloc(n << 20)  # LINE_LAYER


class Base:
    def __init__(self):
        self.ptr = malloc(2 << 20)  # LINE_BASE


class Derived(Base):
    def __init__(self):
        super().__init__()  # LINE_SUPER
        self.extra = malloc(1 << 20)  # LINE_DERIVED


class Block:
    def __init__(self):
        self.layers = [Layer(1) for _ in range(2)]  # LINE_BLOCK


def deep(n):
    if n:
        return deep(n - 1)  # LINE_RECURSE
    return malloc(1 << 20)  # LINE_DEEP


def build():
    kept = []
    for _ in range(5):
        kept.append(Layer(1))  # LINE_BUILD
    for _ in range(4):
        kept.append(Derived())  # LINE_DERIVED_CALL
    for _ in range(3):
        kept.append(Block())  # LINE_BLOCK_CALL
    kept.append(deep(80))  # LINE_DEEP_CALL: 84 Python frames, cut at 64
    return kept


kept = build()
