# SPDX-License-Identifier: MIT
# The real-PyTorch workload of tests/torch/real: a few training steps of the
# tiny GPT on each device, with a leak, a reference cycle freed by
# gc.collect(), empty_cache() calls, a fragmentation OOM and a convolution
# (cuDNN's handle and workspace beside cuBLAS's), then torch's own
# figures written as JSON for check.py to compare with tlm's report.
#   workload.py OUT.json [--devices N] [--steps N] [--history SNAPSHOT.pickle]
# Lines that check.py looks for are marked "# tlm-test: NAME".
import argparse
import gc
import json
import os
import sys

import torch

# PyTorch's exit abort closed at exit, not left to luck (tests/common/torch_settle.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import torch_settle  # noqa: E402,F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402

MiB = 1 << 20


class Holder:
    """A reference cycle that keeps a CUDA tensor alive until gc.collect()."""

    def __init__(self, dev):
        self.buf = torch.empty(3 * MiB, dtype=torch.uint8, device=dev)  # tlm-test: cycle
        self.me = self


OBSERVED = []  # torch's OOM observer: (device, the allocation size it asked for, device free), in bytes


def oom_observer(device, alloc, device_alloc, device_free):
    OBSERVED.append((device, alloc, device_free))


def oom_figures(e, dev):
    """torch's own figures of the OutOfMemoryError just raised, in bytes (the
    message prints them with 2 decimals): its observer's allocation size and
    device free memory, and memory_stats() (unchanged since the message)."""
    s = torch.cuda.memory_stats(dev)
    o = OBSERVED[-1] if OBSERVED else (None, None, None)
    return {"message": str(e), "device": o[0], "alloc_bytes": o[1], "device_free_bytes": o[2],
            "allocated_bytes": s["allocated_bytes.all.current"],
            "reserved_free_bytes": s["reserved_bytes.all.current"] - s["allocated_bytes.all.current"]}


def fragment_and_oom(dev):
    """Fills the device with 2 MiB blocks in 20 MiB segments, frees every
    other one, then asks for a block larger than any free gap: torch raises
    OutOfMemoryError although enough memory is free in pieces."""
    keep, drop, msgs = [], [], []
    try:
        while True:
            t = torch.empty(2 * MiB + 4096, dtype=torch.uint8, device=dev)
            (keep if len(keep) <= len(drop) else drop).append(t)
    except torch.OutOfMemoryError as e:
        msgs.append(oom_figures(e, dev))
    del drop
    try:
        big = torch.empty(24 * MiB, dtype=torch.uint8, device=dev)  # tlm-test: oom
        del big
    except torch.OutOfMemoryError as e:
        msgs.append(oom_figures(e, dev))
    del keep
    return msgs


def conv_step(dev):
    """A convolution's forward and backward pass: cuDNN runs it (on the
    simulated device too), with its handle and workspace outside the
    caching allocator, as cuBLAS's handles are (docs/report.md, OWNERS)."""
    conv = torch.nn.Conv2d(3, 8, 3, padding=1).to(dev)
    conv(torch.randn(4, 3, 16, 16, device=dev, requires_grad=True)).sum().backward()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--history")
    ap.add_argument("--no-oom", action="store_true")
    a = ap.parse_args()
    # the first optimizer imports torch's compiler stack (about 3 s of CPU):
    # do it before the run's first CUDA allocation, so that the training loop
    # is most of the run, as in a real one (the leak rule is about the run's
    # duration, docs/report.md)
    torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))])
    if a.history:
        torch.cuda.memory._record_memory_history(stacks="python")
    gc.disable()  # the cycle is freed by the explicit gc.collect() below only
    losses = []
    ooms = []
    devs = [torch.device("cuda", d) for d in range(a.devices)]
    if not a.no_oom:  # first, so that the training loop (and its leak) ends the run
        torch._C._cuda_attach_out_of_memory_observer(oom_observer)
        for dev in devs:
            torch.cuda.set_device(dev)
            ooms += fragment_and_oom(dev)
        torch.cuda.empty_cache()
    runs = []
    for dev in devs:
        torch.cuda.set_device(dev)
        conv_step(dev)
        runs.append(gpt.make(dev) + gpt.batch(dev))
    for _ in range(a.steps):  # the devices take turns, so each one's leak grows all run long
        for dev, (model, opt, idx, targets) in zip(devs, runs):
            torch.cuda.set_device(dev)
            losses.append(gpt.step(model, opt, idx, targets))  # tlm-test: leak
    for dev in devs:
        torch.cuda.set_device(dev)
        Holder(dev)
    gc.collect()
    torch.cuda.empty_cache()
    out = {"devices": [], "ooms": ooms, "backend": torch.cuda.get_allocator_backend(), "steps": a.steps}
    for d in range(a.devices):
        s = torch.cuda.memory_stats(d)
        out["devices"].append({
            "device": d,
            "max_memory_allocated": torch.cuda.max_memory_allocated(d),
            "max_memory_reserved": torch.cuda.max_memory_reserved(d),
            "memory_allocated": torch.cuda.memory_allocated(d),
            "memory_reserved": torch.cuda.memory_reserved(d),
            "num_ooms": s.get("num_ooms", 0),
            "allocation_count": s.get("allocation.all.allocated", 0),
        })
    if a.history:
        torch.cuda.memory._dump_snapshot(a.history)
        torch.cuda.memory._record_memory_history(enabled=None)
    with open(a.out, "w") as f:
        json.dump(out, f)
    return locals()  # what is alive now stays alive to the end of the run


if __name__ == "__main__":
    KEEP = main()
