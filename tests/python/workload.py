# SPDX-License-Identifier: MIT
# Python workload for tests/python/test_python.sh: calls the simulated CUDA
# runtime through ctypes (path in TLM_TEST_CUDART) under LD_PRELOAD=libtlm.so.
import ctypes
import gc
import os
import sys
import threading
import time

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n) == 0
    return p.value


def startup():
    return [malloc(3 << 20) for _ in range(2)]  # LINE_STARTUP


class Holder:
    def __init__(self):
        self.ptr = malloc(5 << 20)  # LINE_CYCLE
        self.me = self

    def __del__(self):
        rt.cudaFree(self.ptr)


class Teardown:
    """Freed only when the interpreter tears the module down: live at the end."""

    def __init__(self):
        self.ptr = malloc(4 << 20)  # LINE_TEARDOWN

    def __del__(self):
        rt.cudaFree(self.ptr)


def make_cycle():
    Holder()


def train_step(cache, i):
    tmp = malloc(1 << 20)
    rt.cudaFree(tmp)
    cache.append(malloc(7 << 20))  # LINE_LEAK
    time.sleep(0.02)


def worker(out):
    out.append(malloc(2 << 20))  # LINE_THREAD


def main():
    keep = startup()
    t = threading.Thread(target=worker, args=(keep,))
    t.start()
    t.join()
    gc.disable()
    make_cycle()
    gc.collect()
    cache = []
    for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 8):
        train_step(cache, i)
    return keep, cache


if __name__ == "__main__":
    kept = main()
    teardown = Teardown()
