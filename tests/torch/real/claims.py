# SPDX-License-Identifier: MIT
"""What `tlm run --simulate`'s banner and docs/simulate.md claim, run with the
real PyTorch wheel (claims.sh checks the outcome): cuDNN's convolutions,
BatchNorm (forward and backward, autocast too) and fused attention run, its
RNNs do not, PyTorch's own attention kernels run, and no kernel runs (a copy
reads back, a kernel's output is not computed).

claims.py OUT  writes OUT (JSON): each step's outcome and PyTorch's peaks.
"""
import json
import os
import sys

import torch

# PyTorch's exit abort closed at exit, not left to luck (tests/common/torch_settle.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import torch_settle  # noqa: E402,F401
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

out = {}


def step(name, fn):
    try:
        fn()
        torch.cuda.synchronize()
        out[name] = "ran"
    except Exception as e:  # the message, to compare
        out[name] = "failed: " + str(e).splitlines()[0]


def conv_bn():
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                              torch.nn.Conv2d(16, 32, 3, stride=2), torch.nn.BatchNorm2d(32)).cuda()
    x = torch.randn(8, 3, 64, 64, device="cuda")
    net(x).sum().backward()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        net(x).float().sum().backward()


def rnn(cls):
    def run():
        cls(32, 64, batch_first=True).cuda()(torch.randn(4, 16, 32, device="cuda"))[0].sum().backward()
    return run


q = torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)


def attention(backend):
    def run():
        with sdpa_kernel(backend) if backend is not None else torch.enable_grad():
            F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    return run


assert torch.backends.cudnn.is_available() and torch.backends.cudnn.enabled
step("conv_bn", conv_bn)
step("lstm", rnn(torch.nn.LSTM))
step("gru", rnn(torch.nn.GRU))
step("sdpa_cudnn", attention(SDPBackend.CUDNN_ATTENTION))
step("sdpa_default", attention(None))
step("sdpa_flash", attention(SDPBackend.FLASH_ATTENTION))
x = torch.tensor([1.0, 2.0, 3.0]).cuda()  # a copy: its bytes are there
out["copied_back"] = x.cpu().tolist()
out["computed_back"] = (x * 2).cpu().tolist()  # a kernel's output: not computed
out["sdpa_deprioritized"] = os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED")
out["cudnn_version"] = torch.backends.cudnn.version()
out["max_memory_allocated"] = torch.cuda.max_memory_allocated()
out["max_memory_reserved"] = torch.cuda.max_memory_reserved()
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
