# SPDX-License-Identifier: MIT
# nccl_check.py - an NCCL communicator's set-up and one all-reduce on one GPU
# (a single-rank process group): NCCL reaches the driver through its own
# static runtime and cuGetProcAddress / cudaGetDriverEntryPoint, and maps its
# buffers with cuMemCreate/cuMemMap. run.sh records it with both sources.
import os
import sys

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
torch.cuda.set_device(0)
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
ok = bool((x == 1).all())
dist.destroy_process_group()
print("nccl: all_reduce on one rank", "ok" if ok else "WRONG")
sys.exit(0 if ok else 1)
