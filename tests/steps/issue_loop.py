# SPDX-License-Identifier: MIT
# The case (tests/steps/test_steps_py.sh): issue_loop.py STEPS LEAK EVAL:
# a loop of STEPS steps, each with two temporaries and LEAK bytes kept in a
# list, then EVAL evaluation steps. With EVAL long enough, the time rule
# alone calls no leak; the step rule does, and the diff gate fails on it.
import ctypes, os, sys, time
rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n) == 0
    return p.value


def free(p):
    rt.cudaFree(p)
cache = []


def train_step(i, leak):
    a = malloc(1 << 20)
    b = malloc(2 << 20)
    free(a)
    free(b)
    cache.append(malloc(leak))
    time.sleep(0.005)


def evaluate(n):
    for _ in range(n):
        t = malloc(1 << 20)
        free(t)
        time.sleep(0.005)


w = malloc(8 << 20)
steps, leak, ev = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(steps):
    train_step(i, leak)
evaluate(ev)
