# SPDX-License-Identifier: MIT
# Real PyTorch programs of the shapes issue 22 names, for tests/verdicts, on
# the simulated device (tlm run --simulate):  prog.py SHAPE TRUTH [ARGS...]
# Each writes TRUTH (JSON) with what is known without tlm: the phases it ran
# (by construction), torch's own figures (memory_allocated deltas,
# max_memory_allocated, memory_stats' retries and OOMs) and real outcomes
# (the step an OOM killed it at, the exception it caught). TRUTH is written
# again after every step, so a run that dies leaves what it had done.
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
shape, truth_path = sys.argv[1], sys.argv[2]
args = [int(a) for a in sys.argv[3:]]
truth = {"shape": shape, "phases": {}, "oom": None}


def save():
    with open(truth_path, "w") as f:
        json.dump(truth, f)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return x + self.fc2(h)


class Net(nn.Module):
    def __init__(self, d=256, layers=6, every=0):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.head = nn.Linear(d, 10)
        self.every = every

    def forward(self, x):
        if not self.every:
            for b in self.blocks:
                x = b(x)
        else:
            for i in range(0, len(self.blocks), self.every):
                seg = self.blocks[i:i + self.every]
                x = cp.checkpoint(run_seg, seg, x, use_reentrant=False)
        return self.head(x)


def run_seg(seg, x):
    for b in seg:
        x = b(x)
    return x


kept = []


def train_step(model, opt, batch, d, leak):
    x = torch.randn(batch, d, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if leak:
        kept.append(torch.empty(leak, dtype=torch.uint8, device=dev))


@torch.no_grad()
def eval_batch(model, batch, d):
    x = torch.randn(batch, d, device=dev)
    out = model(x)
    return out.argmax(1)


def mlp(every=0, d=256, layers=6):
    model = Net(d, layers, every).to(dev)
    return model, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def leak_per_step(before, after, steps):
    return (after - before) // steps if steps else 0


def main():
    torch.manual_seed(0)
    if shape == "train_eval":  # T training steps, then V > T evaluation batches
        T, V, leak = args
        model, opt = mlp()
        a0 = None
        for i in range(T):
            if i == 1:
                a0 = torch.cuda.memory_allocated()
            train_step(model, opt, 256, 256, leak)
        truth["leak_per_step"] = leak_per_step(a0, torch.cuda.memory_allocated(), T - 1)
        for i in range(V):
            eval_batch(model, 512, 256)
        truth["phases"] = {"training": T, "evaluation": V}
    elif shape == "epochs":  # E epochs of T training steps and V evaluation batches
        E, T, V = args
        model, opt = mlp()
        for e in range(E):
            model.train()
            for i in range(T):
                train_step(model, opt, 256, 256, 0)
            model.eval()
            for i in range(V):
                eval_batch(model, 512, 256)
        truth["phases"] = {"training": E * T, "evaluation": E * V}
    elif shape == "accum":  # S optimizer steps of A micro-steps each
        S, A = args
        model = Net(256, 4).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for s in range(S):
            for m in range(A):
                x = torch.randn(128, 256, device=dev)
                y = torch.randint(0, 10, (128,), device=dev)
                loss = nn.functional.cross_entropy(model(x), y) / A
                loss.backward()
            opt.step()
            opt.zero_grad()
        truth["phases"] = {"training": S, "micro-steps": S * A}
    elif shape == "steps":  # N training steps alone (3, 4)
        N, = args
        model, opt = mlp()
        for i in range(N):
            train_step(model, opt, 256, 256, 0)
        truth["phases"] = {"training": N}
    elif shape == "transformer":  # a loop through 6 nn.TransformerEncoderLayer (checkpointed every EVERY)
        N, every = args + [0] * (2 - len(args))
        layers = nn.ModuleList(nn.TransformerEncoderLayer(128, 4, 256, batch_first=True) for _ in range(6)).to(dev)
        head = nn.Linear(128, 10).to(dev)
        opt = torch.optim.AdamW(list(layers.parameters()) + list(head.parameters()), lr=1e-3)
        for i in range(N):
            if i == 2:
                torch.cuda.reset_peak_memory_stats()
            x = torch.randn(16, 64, 128, device=dev)
            if every:
                for s in range(0, 6, every):
                    x = cp.checkpoint(run_seg, layers[s:s + every], x, use_reentrant=False)
            else:
                for layer in layers:
                    x = layer(x)
            loss = head(x).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        truth["steady_peak"] = torch.cuda.max_memory_allocated()
        truth["phases"] = {"training": N}
        truth["unit"] = "TransformerEncoderLayer.forward"
    elif shape == "resnet":  # torchvision ResNet-18 through cuDNN (its BasicBlocks checkpointed every EVERY)
        N, every = args + [0] * (2 - len(args))
        import torchvision
        model = torchvision.models.resnet18(num_classes=10).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        blocks = [b for layer in (model.layer1, model.layer2, model.layer3, model.layer4) for b in layer]

        def resnet_forward(x):
            m = model
            x = m.maxpool(m.relu(m.bn1(m.conv1(x))))
            for s in range(0, len(blocks), every):
                x = cp.checkpoint(run_seg, blocks[s:s + every], x, use_reentrant=False)
            return m.fc(torch.flatten(m.avgpool(x), 1))

        for i in range(N):
            if i == 1:
                torch.cuda.reset_peak_memory_stats()
            x = torch.randn(16, 3, 64, 64, device=dev)
            y = torch.randint(0, 10, (16,), device=dev)
            loss = nn.functional.cross_entropy(resnet_forward(x) if every else model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        truth["steady_peak"] = torch.cuda.max_memory_allocated()
        truth["phases"] = {"training": N}
        truth["unit"] = "BasicBlock.forward"
    elif shape == "gpt2":  # transformers GPT-2, random weights from a config (CKPT: every block checkpointed)
        N, ckpt = args + [0] * (2 - len(args))
        from transformers import GPT2Config, GPT2LMHeadModel
        cfg = GPT2Config(n_layer=4, n_embd=128, n_head=4, vocab_size=1000, n_positions=128)
        model = GPT2LMHeadModel(cfg).to(dev)
        if ckpt:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        for i in range(N):
            if i == 2:
                torch.cuda.reset_peak_memory_stats()
            ids = torch.randint(0, 1000, (8, 64), device=dev)
            loss = model(ids, labels=ids).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
        truth["steady_peak"] = torch.cuda.max_memory_allocated()
        truth["phases"] = {"training": N}
        truth["unit"] = "GPT2Block.forward"
    elif shape == "oom_recovered":  # the allocator frees its cache, the retry succeeds
        free, total = torch.cuda.mem_get_info()
        chunk = 64 << 20
        xs = [torch.empty(chunk, dtype=torch.uint8, device=dev) for _ in range(int(free * 0.8) // chunk)]
        del xs  # all cached: reserved, not allocated
        retries = torch.cuda.memory_stats()["num_alloc_retries"]
        big = torch.empty(int(free * 0.5) // (2 << 20) * (2 << 20), dtype=torch.uint8, device=dev)
        st = torch.cuda.memory_stats()
        truth["oom"] = {"outcome": "recovered", "retries": st["num_alloc_retries"] - retries,
                        "ooms": st["num_ooms"], "requested": big.numel()}
        del big
    elif shape in ("oom_raised", "oom_fatal"):  # an OutOfMemoryError caught, or not
        free, total = torch.cuda.mem_get_info()
        keep = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
        n = total + (1 << 30)
        truth["oom"] = {"outcome": "fatal" if shape == "oom_fatal" else "raised", "requested": n}
        save()
        if shape == "oom_fatal":
            torch.empty(n, dtype=torch.uint8, device=dev)
        try:
            torch.empty(n, dtype=torch.uint8, device=dev)
        except torch.OutOfMemoryError:
            truth["oom"]["caught"] = True
        model, opt = mlp()
        for i in range(4):
            train_step(model, opt, 256, 256, 0)
        del keep
    elif shape == "leak_dies":  # a training leak that kills the run (or STEPS steps of it)
        leak, steps = args
        model, opt = mlp()
        truth["leak"] = leak
        i = 0
        while not steps or i < steps:
            truth["started"] = i + 1
            save()
            train_step(model, opt, 256, 256, leak)
            i += 1
            truth["completed"] = i
        save()
    elif shape == "ckpt":  # the same model with torch.utils.checkpoint every N blocks
        N, every = args
        model, opt = mlp(every=every)
        for i in range(N):
            if i == 2:
                torch.cuda.reset_peak_memory_stats()
            train_step(model, opt, 512, 256, 0)
        truth["steady_peak"] = torch.cuda.max_memory_allocated()
        truth["phases"] = {"training": N}
        truth["unit"] = "Block.forward"
    else:
        raise SystemExit("prog.py: unknown shape " + shape)
    torch.cuda.synchronize()
    truth["max_allocated"] = torch.cuda.max_memory_allocated()
    truth["max_reserved"] = torch.cuda.max_memory_reserved()
    save()


main()
