"""Coppelius's training in PyTorch, written as a user would: the same model and run as
`coppelius-host train` (docs/coppelius-host.md) -- a byte-level GPT (pre-norm, GELU tanh,
untied head), AdamW (lr 1e-3, betas 0.9/0.95, eps 1e-8, weight decay 0.1 on matrices and
embeddings), mixed precision through torch.autocast(float16) and a GradScaler, one context
of T tokens per update read at the cursor of the same token stream, the checkpoint (master
weights and both moments) saved atomically every `interval` updates, the first context's
predictions (the last position's logits) and every update's loss written out.

    python bench/coppelius_host/torch_train.py --config small --input STREAM \
        --checkpoint-out OUT --predictions FILE --result FILE [--steps 200 --interval 50]

bench/coppelius_host/bench.py times this process, fresh to outputs written, against the
built host's `train` invocation.
"""
from __future__ import annotations

import argparse
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {"small": dict(layers=4, width=256, heads=4, context=128),
           "large": dict(layers=12, width=768, heads=12, context=256)}
HEADER = 64


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.fcproj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        t, d = x.shape[1], x.shape[2]
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(1, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(o.transpose(1, 2).reshape(1, t, d))
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, width, heads, context):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(256, width), nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(width)
        self.head = nn.Linear(width, 256, bias=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.lnf(x))


def read_stream(path):
    data = open(path, "rb").read()
    magic, _version, _bytes, _vocabulary, _header, count = struct.unpack_from("<8sIIIIQ", data)
    assert magic == b"COPSTRM1", f"{path} is not a Coppelius token stream"
    return np.frombuffer(data, "<u4", count, HEADER).astype(np.int64)


def save_atomically(state, path):
    temporary = f"{path}.tmp"
    torch.save(state, temporary)
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    parser.add_argument("--input", required=True)
    parser.add_argument("--checkpoint-out", required=True)
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--result", required=True)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--interval", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    shape = CONFIGS[args.config]
    torch.manual_seed(args.seed)
    model = GPT(**shape).cuda()
    with torch.no_grad():                       # Coppelius's fresh state: every parameter U(-0.01, 0.01)
        for name, p in model.named_parameters():
            p.uniform_(-0.01, 0.01)
            if name.endswith(("ln1.weight", "ln2.weight", "lnf.weight")):
                p.add_(1.0)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                                  lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    scaler = torch.cuda.amp.GradScaler()
    tokens = torch.from_numpy(read_stream(args.input)).cuda()
    context = shape["context"]

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        predictions = model(tokens[None, :context])[0, -1].float().cpu().numpy()
    losses = []
    for step in range(args.steps):
        window = tokens[step * context:step * context + context + 1]
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(window[None, :-1])
            loss = F.cross_entropy(logits[0].float(), window[1:])
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        if (step + 1) % args.interval == 0:
            save_atomically({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step + 1},
                            args.checkpoint_out)
    np.asarray(predictions, "<f4").tofile(args.predictions)
    np.asarray(torch.stack(losses).float().cpu().numpy(), "<f4").tofile(args.result)
    if not math.isfinite(float(losses[-1])):
        raise SystemExit("the loss is not finite")


if __name__ == "__main__":
    main()
