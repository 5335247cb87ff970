# SPDX-License-Identifier: MIT
# tests/whatif/real/workloads.py OUTDIR JOBS - fragmenting PyTorch workloads
# for tlm whatif's check against the real allocator, run on the simulated
# device (`tlm run --simulate 1G`). JOBS is a file of lines "ID<TAB>WORKLOAD<TAB>CONF":
# torch is imported once, then each job runs in a forked child that sets
# PYTORCH_CUDA_ALLOC_CONF to CONF before CUDA starts (the allocator reads it
# then), runs the workload and writes OUTDIR/ID.json: torch's own
# figures (max_memory_reserved, the OutOfMemoryErrors it raised,
# memory_stats()) and the child's pid, which names its trace.
#
# Every request either lives until the workload drops it or, for the
# temporaries (a workspace), is freed at once. A request that raises
# OutOfMemoryError leaves its slot empty and the workload goes on with the
# same requests: the run under another setting makes the requests the
# recorded run made, except the ones that failed. A persistent request that
# fails in the run under the defaults would have lived on under a setting that
# satisfies it, which the trace cannot show: such runs are flagged
# (persistent_ooms) and the check refuses them.
import json
import os
import sys

import torch

# each job's child ends with os._exit (no finalization, so no exit abort);
# the rule is one for every program of the suite (tests/torch/real/settle.sh)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import torch_settle  # noqa: E402,F401

KiB, MiB = 1 << 10, 1 << 20
dev = torch.device("cuda", 0)


class Run:
    def __init__(self):
        self.ooms = 0
        self.persistent_ooms = 0

    def alloc(self, n, persistent=True):
        try:
            return torch.empty(n, dtype=torch.uint8, device=dev)
        except torch.OutOfMemoryError:
            self.ooms += 1
            self.persistent_ooms += persistent
            return None

    def temp(self, n):
        t = self.alloc(n, False)
        del t


def lcg(x):
    return (x * 1103515245 + 12345) & 0xFFFFFFFF


def mixed(r):
    """Mixed sizes with pseudo-random lifetimes and a large workspace now and
    then. The large sizes lie more than 1 MiB apart: a block handed out whole
    tells its request (docs/whatif.md, Limits)."""
    sizes = [512, 4 * KiB, 100 * KiB, 700 * KiB, MiB, 3 * MiB, 6 * MiB + 4 * KiB, 12 * MiB, 24 * MiB + 512,
             40 * MiB, 70 * MiB]
    work = [200 * MiB, 330 * MiB, 260 * MiB, 420 * MiB]
    live, held = [None] * 56, [False] * 56
    x = 4242
    for i in range(2400):
        x = lcg(x)
        slot = (x >> 8) % len(live)
        # whether the slot is held does not depend on an OOM: the same requests
        if held[slot]:
            live[slot] = None
        else:
            live[slot] = r.alloc(sizes[(x >> 16) % len(sizes)])
        held[slot] = not held[slot]
        if i % 200 == 199:
            r.temp(work[(i // 200) % len(work)])


def odd(r):
    """mixed with sizes 512 B and 1 KiB apart and 1 MiB next to 1.5 MiB: blocks
    handed out whole whose requests the trace cannot tell apart (for
    docs/whatif.md's table; not in the test)."""
    sizes = [512, 4 * KiB, 100 * KiB, 700 * KiB, MiB, 1536 * KiB, 3 * MiB, 6 * MiB + 4 * KiB, 12 * MiB,
             24 * MiB + 512, 40 * MiB, 70 * MiB]
    work = [200 * MiB, 330 * MiB, 260 * MiB, 420 * MiB]
    live, held = [None] * 56, [False] * 56
    x = 4242
    for i in range(2400):
        x = lcg(x)
        slot = (x >> 8) % len(live)
        if held[slot]:
            live[slot] = None
        else:
            live[slot] = r.alloc(sizes[(x >> 16) % len(sizes)] + (x >> 4) % 3 * 512)
        held[slot] = not held[slot]
        if i % 200 == 199:
            r.temp(work[(i // 200) % len(work)])


def growing(r):
    """A transformer-like step whose sequence length grows each iteration:
    activations kept from forward to backward, cached blocks of the shorter
    steps too small for the longer ones."""
    h, b, heads = 1024, 4, 2
    params = [r.alloc(h * h * 2) for _ in range(16)]
    for seq in range(256, 2048 + 1, 128):
        acts = []
        for _ in range(4):
            acts.append(r.alloc(b * seq * h * 2))
            acts.append(r.alloc(b * heads * seq * seq * 2))
            acts.append(r.alloc(b * seq * 4 * h * 2))
            r.temp(b * seq * 4 * h * 2)
        while acts:
            g = r.alloc(b * seq * h * 2, False)
            acts.pop()
            del g
    del params


def interleave(r):
    """Large tensors freed a step later between small long-lived ones that pin
    their 20 MiB segments, and a large workspace every few steps."""
    big = [30 * MiB, 52 * MiB, 90 * MiB, 44 * MiB, 66 * MiB]
    keep, prev = [], None
    for i in range(60):
        cur = r.alloc(big[i % len(big)] + i * 256 * KiB)
        s = r.alloc(2 * MiB + (i % 7) * 640 * KiB)
        if i % 2 == 0:
            keep.append(s)
        del s
        prev = cur  # the previous step's large tensor goes now
        del cur
        if i % 6 == 5:
            r.temp(280 * MiB + i * MiB)
    del prev, keep


def splits(r):
    """A large cached segment split by many medium requests, every other one
    freed: holes no later large request fits in."""
    a = r.alloc(600 * MiB)
    del a
    x = 99
    pieces = []
    for i in range(40):
        x = lcg(x)
        pieces.append(r.alloc(5 * MiB + (x >> 8) % (25 * MiB) // 512 * 512))
    for i in range(0, len(pieces), 2):
        pieces[i] = None
    for n in (250, 180, 320, 120):
        r.temp(n * MiB)
    for i in range(0, len(pieces), 2):
        x = lcg(x)
        pieces[i] = r.alloc(3 * MiB + (x >> 8) % (12 * MiB) // 512 * 512)
    r.temp(400 * MiB)
    del pieces


def batches(r):
    """Batches of varying size (N*A and N*A*B tensors): with the defaults the
    larger batches leave slivers at the end of the smaller ones' segments;
    expandable segments tile them."""
    a, bmul = 3 * MiB, 3
    for n in (8, 9, 7, 10, 8, 11, 9, 12, 10, 13, 11, 9):
        acts = []
        for _ in range(4):
            acts.append(r.alloc(n * a))
            acts.append(r.alloc(n * a * bmul))
        r.temp(n * a * 2)
        acts.clear()


def cache(r):
    """A cache of 44.5 MiB entries (46 MiB segments) filling the device
    without a failed cudaMalloc under the defaults: a setting that rounds them
    up runs out of memory by a few MiB, which only the device's free memory
    (not its size) tells."""
    pages = [r.alloc(44 * MiB + 512 * KiB) for _ in range(21)]
    extra = r.alloc(10 * MiB)
    del pages, extra


def resnet(r):
    """A ResNet-18 (torchvision's layout, cuDNN off: the simulated device has
    none) trained for three steps of batch 8 at 224 x 224: PyTorch's own
    requests, many of them within 1 MiB of each other (for docs/whatif.md's
    table; not in the test)."""
    import torch.nn as nn
    torch.backends.cudnn.enabled = False

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
            self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
            self.sc = None if stride == 1 and cin == cout else \
                nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
            return torch.relu(y + (x if self.sc is None else self.sc(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)]:
        layers.append(Block(cin, cout, stride))
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    m = nn.Sequential(*layers).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        x = torch.empty(8, 3, 224, 224, device=dev)
        y = torch.zeros(8, dtype=torch.long, device=dev)
        nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y


WORKLOADS = {"mixed": mixed, "growing": growing, "interleave": interleave, "splits": splits, "batches": batches,
             "cache": cache, "odd": odd, "resnet": resnet}


def child(outdir, name, conf, path):
    if conf:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
    else:
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    r = Run()
    WORKLOADS[name](r)
    s = torch.cuda.memory_stats(dev)
    out = {"workload": name, "conf": conf, "pid": os.getpid(), "ooms": r.ooms, "persistent_ooms": r.persistent_ooms,
           "max_memory_reserved": torch.cuda.max_memory_reserved(dev),
           "max_memory_allocated": torch.cuda.max_memory_allocated(dev)}
    for k in ("num_ooms", "num_alloc_retries", "num_device_alloc", "num_device_free"):
        out[k] = s.get(k, 0)
    with open(path + ".tmp", "w") as f:
        json.dump(out, f)
    os.rename(path + ".tmp", path)


def main():
    outdir, jobs = sys.argv[1], sys.argv[2]
    with open(jobs) as f:
        lines = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    status = 0
    for ident, name, conf in lines:
        path = os.path.join(outdir, ident + ".json")
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                child(outdir, name, conf, path)
                code = 0
            finally:
                os._exit(code)
        _, st = os.waitpid(pid, 0)
        if st:
            print("workloads.py: %s under '%s' exited with status %d" % (name, conf, st), file=sys.stderr)
            status = 1
    sys.exit(status)


main()
