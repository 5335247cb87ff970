# SPDX-License-Identifier: MIT
# torch_check.py - a small training loop on the GPU under tlm; writes
# torch's own accounting (max_memory_reserved: bytes of cudaMalloc'd segments)
# for run.sh to compare with tlm's peak reserved bytes.
import json
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.Adam(model.parameters())
losses = []
for step in range(50):
    x = torch.randn(256, 1024, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss)  # the classic leak: keeps each step's graph output alive
torch.cuda.synchronize()
json.dump({"reserved_peak": torch.cuda.max_memory_reserved(),
           "allocated_peak": torch.cuda.max_memory_allocated(),
           "segments": torch.cuda.memory_stats().get("segment.all.allocated", 0)},
          open(sys.argv[1], "w"))
print("torch: reserved peak", torch.cuda.max_memory_reserved())
