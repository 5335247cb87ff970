# SPDX-License-Identifier: MIT
"""One rank of tests/nccl: a short DDP or FSDP (fully_shard) training loop
over NCCL on the simulated device, under torchrun.

train.py MODE OUT
  MODE  ddp | fsdp
  OUT   directory: rank-R.json gets this rank's pid, device and PyTorch's own
        figures (max_memory_allocated/reserved, memory_allocated/reserved at
        the end) and what an all-reduce (sum) of rank + 1 read back, written after the loop and before destroy_process_group
"""
import json
import os
import sys

import torch

# PyTorch's exit abort closed at exit, not left to luck (tests/common/torch_settle.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import torch_settle  # noqa: E402,F401
import torch.distributed as dist

mode, out = sys.argv[1], sys.argv[2]
rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl", device_id=torch.device("cuda", local))

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024),
                            torch.nn.GELU(), torch.nn.Linear(1024, 512)).cuda()
if mode == "ddp":
    from torch.nn.parallel import DistributedDataParallel
    model = DistributedDataParallel(model, device_ids=[local], bucket_cap_mb=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
else:
    from torch.distributed.fsdp import fully_shard
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(128, 512, device="cuda")
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
# NCCL moves no data on the simulated device: an all-reduce leaves this rank's own input
t = torch.full((4,), float(rank + 1)).cuda()
dist.all_reduce(t)
torch.cuda.synchronize()
figures = {"all_reduce": t.cpu().tolist(), "rank": rank, "pid": os.getpid(), "device": torch.cuda.current_device(),
           "world": dist.get_world_size(),
           "max_memory_allocated": torch.cuda.max_memory_allocated(),
           "max_memory_reserved": torch.cuda.max_memory_reserved(),
           "memory_allocated": torch.cuda.memory_allocated(),
           "memory_reserved": torch.cuda.memory_reserved()}
with open(os.path.join(out, "rank-%d.json" % rank), "w") as f:
    json.dump(figures, f)
dist.destroy_process_group()
