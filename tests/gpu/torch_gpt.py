# SPDX-License-Identifier: MIT
# torch_gpt.py OUT.json - the tiny GPT of tests/torch/real/gpt.py (copied
# next to this file by prepare.sh), 20 training steps on cuda:0, then
# torch's own figures. run.sh runs it on the GPU and on the simulated device
# of the same size (tlm run --simulate) and compares the two peaks.
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402

torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))])
dev = torch.device("cuda", 0)
model, opt = gpt.make(dev)
idx, targets = gpt.batch(dev)
for _ in range(20):
    gpt.step(model, opt, idx, targets)
torch.cuda.synchronize()
json.dump({"allocated_peak": torch.cuda.max_memory_allocated(), "reserved_peak": torch.cuda.max_memory_reserved(),
           "total": torch.cuda.get_device_properties(0).total_memory,
           "sdpa_cudnn": os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED", "")},
          open(sys.argv[1], "w"))
