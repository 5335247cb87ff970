# SPDX-License-Identifier: MIT
# tests/common/torch_settle.py's promise, checked without luck: once
# settle_autograd() has returned, the last backward's graph task has been
# released, and the settling allocated nothing.
#
# The graph task's thread-local state holds the contextvars.Context that
# torch's _engine_run_backward stashes (what the autograd thread needs the
# GIL for, at the end). A ContextVar set around the last backward puts a
# payload into that Context, and nothing else holds the payload once the
# variable is reset: its finalizer runs exactly when the task is released.
# Without the settling that may be before the backward returns or after
# (the race); after it, it must have run. Prints "settle: ok" or what failed.
import contextvars
import os
import sys
import weakref

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import torch_settle  # noqa: E402

fails = []
var = contextvars.ContextVar("payload")


class Payload:
    pass


released = []
m = torch.nn.Linear(64, 64).cuda()
for step in range(3):
    p = Payload()
    weakref.finalize(p, released.append, step)
    token = var.set(p)
    m(torch.randn(8, 64, device="cuda")).sum().backward()
    var.reset(token)
    del p
    if step < 2:
        m.zero_grad()  # the next backward is the settling for this one
before = torch.cuda.memory_stats()
torch_settle.settle_autograd()
after = torch.cuda.memory_stats()
if sorted(released) != [0, 1, 2]:
    fails.append("payloads released after settle_autograd(): %s, want [0, 1, 2]" % sorted(released))
changed = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}
if changed:
    fails.append("settle_autograd() changed torch's memory figures: %s" % changed)
if torch.cuda.device_count() > 1 and torch._C._cuda_hasPrimaryContext(1):
    fails.append("settle_autograd() made a context on device 1, which the program never used")
for f in fails:
    print("settle: FAIL " + f)
print("settle: ok" if not fails else "settle: %d failed" % len(fails))
sys.exit(1 if fails else 0)
