# SPDX-License-Identifier: MIT
# tests/whatif/real/churn.py N - N tensor requests of mixed sizes with
# pseudo-random lifetimes (the LCG of tests/whatif/pt_workload.c), an
# empty_cache() two thirds in, OOMs caught: the real allocator's decisions
# that tlm whatif's replay under the recorded settings must reproduce.
import sys

import torch

KiB, MiB = 1 << 10, 1 << 20
SIZES = [512, 4 * KiB, 100 * KiB, 700 * KiB, MiB, 1536 * KiB, 3 * MiB, 6 * MiB + 4 * KiB, 12 * MiB, 24 * MiB + 512]
dev = torch.device("cuda", 0)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    live = [None] * 48
    x = 12345
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        slot = (x >> 8) % len(live)
        if live[slot] is not None:
            live[slot] = None
        else:
            size = SIZES[(x >> 16) % len(SIZES)] + (x >> 4) % 3 * 512
            try:
                live[slot] = torch.empty(size, dtype=torch.uint8, device=dev)
            except torch.OutOfMemoryError:
                pass
        if i == 2 * n // 3:
            torch.cuda.empty_cache()
    live.clear()


main()
