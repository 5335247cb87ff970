# SPDX-License-Identifier: MIT
# tests/whatif/real/frag.py OUT.json - a fragmenting PyTorch workload for
# tlm whatif's real-allocator check, run on the simulated device under the
# PYTORCH_CUDA_ALLOC_CONF of the caller. A 40 MiB tensor is freed (its
# segment stays cached), a 12 MiB one splits that segment, and 30 MiB no
# longer fits a 64 MiB device with the defaults; then a training-like tail.
# Writes torch.cuda.memory_stats() as JSON: the real allocator's figures
# that tlm whatif's predictions from another run must match.
import json
import sys

import torch

MiB = 1 << 20
dev = torch.device("cuda", 0)


def empty(n):
    return torch.empty(n, dtype=torch.uint8, device=dev)


def main():
    small = [empty(100 * 1024) for _ in range(20)]
    a = empty(40 * MiB)
    del a
    b = empty(12 * MiB)
    ooms = 0
    try:
        c = empty(30 * MiB)
        del c
    except torch.OutOfMemoryError:
        ooms += 1
    del small[::2]
    del b
    for _ in range(3):
        act = [empty((4 if i % 2 else 2) * MiB) for i in range(6)]
        while act:
            act.pop()
    del small
    s = torch.cuda.memory_stats(dev)
    out = {k: s.get(k, 0) for k in ("reserved_bytes.all.peak", "allocated_bytes.all.peak", "num_device_alloc",
                                   "num_device_free", "num_ooms", "num_alloc_retries")}
    out["caught_ooms"] = ooms
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)


main()
