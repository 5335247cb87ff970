# SPDX-License-Identifier: MIT
# Times the tiny GPT's training step (gpt.py) on the current CUDA device:
#   bench.py [--steps N] [--history]
# prints "step_ms WALL_MEDIAN WALL_MIN N CPU_MEDIAN": milliseconds per step of
# wall time, and of the process's CPU time (all threads: tlm's writer thread
# counts), which other load on the machine disturbs far less.
# --history: with torch.cuda.memory._record_memory_history(stacks="python"),
# PyTorch's own recorder. Used for docs/simulate.md's figures (tlm's added
# host time per step beside the recorder's) and by tests/gpu.
import argparse
import os
import statistics
import sys
import time

import torch

# PyTorch's exit abort closed at exit, not left to luck (tests/common/torch_settle.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import torch_settle  # noqa: E402,F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--history", action="store_true")
a = ap.parse_args()
dev = torch.device("cuda", 0)
model, opt = gpt.make(dev)
idx, targets = gpt.batch(dev)
if a.history:
    torch.cuda.memory._record_memory_history(stacks="python")
for _ in range(3):  # warm-up: cuBLAS handles, kernels' modules, optimizer state
    gpt.step(model, opt, idx, targets)
times, cpu = [], []
for _ in range(a.steps):
    torch.cuda.synchronize()
    t, c = time.perf_counter(), time.process_time()
    gpt.step(model, opt, idx, targets)
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t) * 1e3)
    cpu.append((time.process_time() - c) * 1e3)
print("step_ms %.3f %.3f %d %.3f" % (statistics.median(times), min(times), len(times), statistics.median(cpu)))
if a.history:
    torch.cuda.memory._record_memory_history(enabled=None)
