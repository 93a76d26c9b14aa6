"""The PyTorch side of bench/coppelius: Coppelius's shape as a PyTorch user writes it
(docs/coppelius.md, "The model"): token and position embeddings, pre-norm blocks of
causal multi-head attention (F.scaled_dot_product_attention, is_causal) and a tanh-GELU
MLP of width 4d, a final layer norm, an untied output head without bias, mean
cross-entropy over the next byte; torch.optim.AdamW with Coppelius's hyperparameters
(lr 1e-3, betas 0.9 / 0.95, eps 1e-8, weight decay 0.1 on the matrices and
embeddings only; the default foreach implementation).

Four ways to run one update (one context, batch 1), as the issue names them:
  eager     binary32 (TF32 off, PyTorch's default for matrix products)
  amp       torch.autocast(float16) + torch.amp.GradScaler
  compile   amp with the model under torch.compile (default mode)
  graphs    amp with the model under torch.compile(mode="reduce-overhead") (CUDA graphs)
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

VARIANTS = ("eager", "amp", "compile", "graphs")


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.fcproj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(c, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers: int, width: int, heads: int, context: int, vocabulary: int = 256):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocabulary, width), nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary, bias=False)

    def forward(self, tokens, targets):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.lnf(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def build(config, variant: str, device: str = "cuda"):
    """(model, a step function step(tokens, targets) -> loss tensor) for one variant."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = GPT(config.layers, config.width, config.heads, config.context).to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    rest = [p for n, p in model.named_parameters() if p.dim() != 2]
    h = config.hyper
    optimizer = torch.optim.AdamW([dict(params=decay, weight_decay=float(h.weight_decay)),
                                   dict(params=rest, weight_decay=0.0)], lr=float(h.learning_rate),
                                  betas=(float(h.beta1), float(h.beta2)), eps=float(h.epsilon))
    if variant == "eager":
        def step(tokens, targets):
            optimizer.zero_grad(set_to_none=True)
            loss = model(tokens, targets)
            loss.backward()
            optimizer.step()
            return loss
        return model, step
    forward = model
    if variant == "compile":
        forward = torch.compile(model)
    elif variant == "graphs":
        forward = torch.compile(model, mode="reduce-overhead")
    elif variant != "amp":
        raise ValueError(f"no PyTorch variant {variant!r} (one of {', '.join(VARIANTS)})")
    scaler = torch.amp.GradScaler("cuda")

    def step(tokens, targets):
        if variant == "graphs":
            torch.compiler.cudagraph_mark_step_begin()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = forward(tokens, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss
    return model, step
