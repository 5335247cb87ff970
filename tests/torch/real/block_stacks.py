# SPDX-License-Identifier: MIT
"""The stacks of PyTorch allocator blocks (block_stacks.sh): a 4 MiB tensor
made on the main thread at a marked line (in a cached segment: no cudaMalloc
there), and a backward whose blocks the
autograd thread makes (a thread with no Python frames). Writes the marked
line's number to OUT.
    block_stacks.py OUT
"""
import sys

import torch
import torch_settle  # noqa: F401  (PyTorch's exit abort closed at exit)


def make():
    return torch.empty(1 << 20, device="cuda")  # MARK: the 4 MiB block


# The segment the block will take is cudaMalloc'ed here, by another line:
# the report names a site by its Python frames and shows the native frames
# of the first stack with those frames, which must be the block's own.
y = torch.empty(1 << 20, device="cuda")
del y
x = make()
w = torch.randn(384, 384, device="cuda", requires_grad=True)
(w @ w).sum().backward()  # w.grad and the temporaries: the autograd thread's blocks
torch.cuda.synchronize()
line = [i for i, s in enumerate(open(__file__), 1) if s.rstrip().endswith("# MARK: the 4 MiB block")][0]
open(sys.argv[1], "w").write("%d\n" % line)
