# SPDX-License-Identifier: MIT
# A small zoo of real PyTorch training loops, timed per step on the current
# CUDA device (a benchmark, not a test; tests/bench/torch_zoo.sh runs it on
# the simulated device, plain, under tlm and under PyTorch's own recorder):
#   torch_zoo.py MODEL [--steps N] [--history]
# MODEL: gpt     the tiny GPT of tests/torch/real (autocast bf16, checkpointing, AdamW)
#        resnet  torchvision ResNet-18 through cuDNN, batch 16x3x64x64, SGD with momentum
#        gpt2    transformers GPT-2 from a config (4 layers, d 128), random weights, AdamW
#        many    many small tensors: 48 small Linear layers, AdamW with foreach kernels
# --history: with torch.cuda.memory._record_memory_history(stacks="python").
# --ab K: the recorder's cost paired in one process: K steps without it, K
# with it, in turn, STEPS of each; prints "ab_cpu_ms OFF ON" (means), which
# load on a shared machine disturbs far less than separate runs.
# --tlm-ab K: the same for tlm, run under tlm with TLM_DEBUG_PAUSE=1: K steps
# paused (libtlm.so's hooks pass the calls through), K recorded, in turn;
# each recorded K ends with the writer's work for them drained (timed with
# them); prints "tlm_ab_cpu_ms OFF ON".
# Prints "step_cpu_ms MEAN MEDIAN N BLOCKS": the process's CPU time (all
# threads, so tlm's writer counts) per step: the mean (all CPU of the N timed
# steps over N, so work the writer thread batches counts) and the median, and
# the allocator's block allocations per step (for the cost per event).
import argparse
import os
import statistics
import sys
import time

import torch

# PyTorch's exit abort closed at exit, not left to luck (tests/common/torch_settle.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import torch_settle  # noqa: E402,F401
import torch.nn as nn

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "torch", "real"))


def gpt_loop(dev):
    import gpt
    model, opt = gpt.make(dev)
    idx, targets = gpt.batch(dev)
    return lambda: gpt.step(model, opt, idx, targets)


def resnet_loop(dev):
    import torchvision
    model = torchvision.models.resnet18(num_classes=10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(16, 3, 64, 64, device=dev)
    y = torch.randint(0, 10, (16,), device=dev)

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def gpt2_loop(dev):
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=4, n_embd=128, n_head=4, vocab_size=1000, n_positions=128)
    model = GPT2LMHeadModel(cfg).to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 1000, (8, 64), device=dev)

    def step():
        loss = model(ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def many_loop(dev):
    layers = nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.Tanh()) for _ in range(48)]).to(dev)
    opt = torch.optim.AdamW(layers.parameters(), lr=1e-3, foreach=True)
    x = torch.randn(8, 32, device=dev)

    def step():
        loss = layers(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


LOOPS = {"gpt": gpt_loop, "resnet": resnet_loop, "gpt2": gpt2_loop, "many": many_loop}

ap = argparse.ArgumentParser()
ap.add_argument("model", choices=sorted(LOOPS))
ap.add_argument("--steps", type=int, default=50)
ap.add_argument("--history", action="store_true")
ap.add_argument("--ab", type=int, default=0)
ap.add_argument("--tlm-ab", type=int, default=0)
a = ap.parse_args()
if a.tlm_ab:
    import ctypes
    libtlm = ctypes.CDLL(None)  # preloaded: its symbols are in the global scope
    if not hasattr(libtlm, "tlm_debug_pause") or libtlm.tlm_debug_pause(0) != 0:
        sys.exit("torch_zoo.py: --tlm-ab needs libtlm.so preloaded with TLM_DEBUG_PAUSE=1")
dev = torch.device("cuda", 0)
# the first optimizer imports torch's compiler stack: before any timing
torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))])
if a.history:
    torch.cuda.memory._record_memory_history(stacks="python")
step = LOOPS[a.model](dev)
for _ in range(3):  # warm-up: handles, modules, optimizer state
    step()
torch.cuda.synchronize()
n0 = torch.cuda.memory_stats(dev).get("allocation.all.allocated", 0)
cpu = []
c0 = time.process_time()
for _ in range(a.steps):
    c = time.process_time()
    step()
    torch.cuda.synchronize()
    cpu.append((time.process_time() - c) * 1e3)
total = (time.process_time() - c0) * 1e3
n1 = torch.cuda.memory_stats(dev).get("allocation.all.allocated", 0)

def paired(k, turn, drain=None):
    """K steps without the recorder and K with it, in turn, STEPS of each;
    turn(on) switches it and an untimed step follows. drain (tlm's): run
    untimed after that step, and timed after each recorded K (the writer's
    work for those steps). Returns the mean CPU ms per step off and on."""
    cost = {False: 0.0, True: 0.0}
    for i in range(2 * a.steps // k):
        on = i % 2 == 1
        turn(on)
        step()  # not timed: the switch
        torch.cuda.synchronize()
        if drain:
            drain()
        c = time.process_time()
        for _ in range(k):
            step()
        torch.cuda.synchronize()
        if drain and on:
            drain()
        cost[on] += time.process_time() - c
    n = a.steps // k * k
    return cost[False] * 1e3 / n, cost[True] * 1e3 / n


def recorder(on):
    if on:
        torch.cuda.memory._record_memory_history(stacks="python")
    else:
        torch.cuda.memory._record_memory_history(enabled=None)


if a.ab:
    print("ab_cpu_ms %.4f %.4f" % paired(a.ab, recorder))
    recorder(False)
if a.tlm_ab:
    print("tlm_ab_cpu_ms %.4f %.4f" % paired(a.tlm_ab, lambda on: libtlm.tlm_debug_pause(0 if on else 1),
                                            libtlm.tlm_debug_drain))
    libtlm.tlm_debug_pause(0)
print("step_cpu_ms %.4f %.4f %d %.1f" % (total / a.steps, statistics.median(cpu), len(cpu), (n1 - n0) / a.steps))
if a.history:
    torch.cuda.memory._record_memory_history(enabled=None)
