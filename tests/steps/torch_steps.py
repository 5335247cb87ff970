# SPDX-License-Identifier: MIT
# A real-PyTorch training loop for tests/steps/test_steps_torch.sh, on the
# simulated device (tlm run --simulate):
#   torch_steps.py STEPS CKPT LEAK D LAYERS BATCH TRUTH
# LAYERS residual MLP blocks (Linear D->4D, ReLU, Linear 4D->D) and a head,
# SGD with momentum; CKPT > 0 wraps each run of CKPT consecutive blocks in
# torch.utils.checkpoint; LEAK bytes are kept every step (a history list).
# TRUTH gets the memory the process could hold (free + reserved, right
# after the model is on the device: what the shim measures at the first
# allocation) and torch's own peak.
import json
import os
import sys

import torch

# PyTorch's exit abort closed at exit, not left to luck (tests/common/torch_settle.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import torch_settle  # noqa: E402,F401
import torch.nn as nn
import torch.utils.checkpoint as cp

dev = "cuda"


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


def run(seg, x):
    for b in seg:
        x = b(x)
    return x


class Net(nn.Module):
    def __init__(self, d, L):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(L))
        self.head = nn.Linear(d, 10)

    def forward(self, x, ckpt):
        if not ckpt:
            for b in self.blocks:
                x = b(x)
        else:
            for i in range(0, len(self.blocks), ckpt):
                seg = self.blocks[i:i + ckpt]
                x = cp.checkpoint(lambda y, seg=seg: run(seg, y), x, use_reentrant=False)
        return self.head(x)


steps, ckpt, leak, truth = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[7]
d, L, B = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
model = Net(d, L).to(dev)
free, total = torch.cuda.mem_get_info()
capacity = free + torch.cuda.memory_reserved()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
hist = []
for step in range(steps):
    if step == 2:  # torch's own steady peak: the steps after the first two
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)
    loss = nn.functional.cross_entropy(model(x, ckpt), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if leak:
        hist.append(torch.empty(leak, dtype=torch.uint8, device=dev))
torch.cuda.synchronize()
with open(truth, "w") as f:
    json.dump({"capacity": capacity, "steady_peak": torch.cuda.max_memory_allocated()}, f)
