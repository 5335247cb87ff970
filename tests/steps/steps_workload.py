# SPDX-License-Identifier: MIT
# A training loop in Python for tests/steps/test_steps_py.sh: tensors are
# simulated-device allocations made through ctypes (TLM_TEST_CUDART) under
# LD_PRELOAD=libtlm.so. steps_workload.py MODE STEPS LEAK TRUTH, MODE one of
# train, eval (then an evaluation phase longer than the loop), warmup
# (optimizer state made after step 1). Each step: 6 Block.forward calls
# (hidden H, output O), a loss, LEAK bytes kept in a history list (the
# leak), then the backward pass (a gradient of O per block, last first).
import ctypes
import os
import sys
import time

rt = ctypes.CDLL(os.environ["TLM_TEST_CUDART"])
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
rt.cudaMemGetInfo.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]

H, O, LOSS, LAYERS = 256 << 10, 64 << 10, 4 << 10, 6


def malloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n) == 0
    return p.value


def free(p):
    assert rt.cudaFree(p) == 0


class Block:
    def forward(self):
        h = malloc(H)
        o = malloc(O)
        return h, o


class Model:
    def __init__(self):
        self.blocks = [Block() for _ in range(LAYERS)]

    def forward(self):
        acts = []
        for b in self.blocks:
            acts.append(b.forward())
        return acts


def backward(acts):
    for h, o in reversed(acts):
        g = malloc(O)
        free(g)
        free(o)
        free(h)


history = []


def train_step(model, leak):
    acts = model.forward()
    loss = malloc(LOSS)
    if leak:
        history.append(malloc(leak))
    backward(acts)
    free(loss)
    time.sleep(0.003)


def evaluate(model):
    for _ in range(40):
        acts = model.forward()
        for h, o in acts:
            free(o)
            free(h)
        time.sleep(0.004)


def main():
    mode, steps, leak, truth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    weights = [malloc(1 << 20)]
    fr, tot = ctypes.c_size_t(), ctypes.c_size_t()
    assert rt.cudaMemGetInfo(ctypes.byref(fr), ctypes.byref(tot)) == 0
    weights += [malloc(1 << 20) for _ in range(3)]
    model = Model()
    opt = []
    for i in range(steps):
        train_step(model, leak)
        if mode == "warmup" and i == 0:
            opt = [malloc(512 << 10) for _ in range(4)]
    if mode == "eval":
        evaluate(model)
    with open(truth, "w") as f:
        f.write("%d %d\n" % (fr.value, 1 << 20))
    return weights, opt


if __name__ == "__main__":
    kept = main()
