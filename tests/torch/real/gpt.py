# SPDX-License-Identifier: MIT
# A tiny GPT-style model (Embedding, Linear, LayerNorm,
# scaled_dot_product_attention, GELU, cross-entropy) and its training step
# (autocast to bf16, torch.utils.checkpoint on one block, backward, AdamW).
# Shared by the real-PyTorch tests (tests/torch/real), the measurements
# (docs/simulate.md) and the GPU check (tests/gpu/torch_gpt.py).
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=512, ctx=64, d=128, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for i, blk in enumerate(self.blocks):
            if i == 0:  # activation checkpointing on the first block
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def make(device, **kw):
    model = GPT(**kw).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return model, opt


def batch(device, vocab=512, ctx=64, bsz=4):
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, vocab, (bsz, ctx), generator=g)
    return idx.to(device), torch.roll(idx, -1, 1).to(device)


def step(model, opt, idx, targets):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(idx, targets)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss
