"""A small GPT: token + learned position embeddings, pre-LayerNorm transformer
blocks (causal self-attention, GELU MLP), final LayerNorm, and an output
projection tied to the token embedding.

Sizes by name (vocabulary 256: byte-level tokens, see data.py):

    tiny       2 layers,  2 heads, d=64,  context 64     ~0.12M parameters (CPU demo)
    small      6 layers,  6 heads, d=384, context 256    ~10.8M parameters
    gpt2-124m 12 layers, 12 heads, d=768, context 1024   ~86.0M parameters

`gpt2-124m` is GPT-2 small's architecture; with GPT-2's 50257-token vocabulary
it has 124M parameters, with our 256-byte vocabulary the embedding shrinks and
it has about 86.0M. Runs on torch 1.13 and 2.x: attention uses
F.scaled_dot_product_attention where it exists and an explicit masked softmax
otherwise.
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

_HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


@dataclass
class GPTConfig:
    vocab_size: int = 256
    block_size: int = 64     # maximum context length
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 64
    dropout: float = 0.0
    bias: bool = True


MODEL_SIZES = {
    "tiny": dict(n_layer=2, n_head=2, n_embd=64, block_size=64),
    "small": dict(n_layer=6, n_head=6, n_embd=384, block_size=256),
    "gpt2-124m": dict(n_layer=12, n_head=12, n_embd=768, block_size=1024),
}


def config_for(name, **overrides):
    if name not in MODEL_SIZES:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODEL_SIZES)}")
    values = dict(MODEL_SIZES[name])
    values.update({k: v for k, v in overrides.items() if v is not None})
    return GPTConfig(**values)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig, use_sdpa=None):
        super().__init__()
        if cfg.n_embd % cfg.n_head:
            raise ValueError(f"n_embd {cfg.n_embd} is not a multiple of n_head {cfg.n_head}")
        self.n_head = cfg.n_head
        self.dropout = cfg.dropout
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)
        self.use_sdpa = _HAS_SDPA if use_sdpa is None else (use_sdpa and _HAS_SDPA)
        # The causal mask is a cache, not a buffer: DDP would broadcast buffers, and
        # gloo cannot broadcast bool tensors.
        self._future = None

    def future_mask(self, T, device):
        """True where a query position would see a later key (to be masked out)."""
        if self._future is None or self._future.size(-1) < T or self._future.device != device:
            self._future = torch.ones(T, T, dtype=torch.bool, device=device).triu(1).view(1, 1, T, T)
        return self._future[:, :, :T, :T]

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        hd = C // self.n_head
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)   # B, h, T, hd
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(self.future_mask(T, x.device), float("-inf"))
            att = self.attn_drop(F.softmax(att, dim=-1))
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_drop(self.proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.proj(F.gelu(self.fc(x))))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig, use_sdpa=None):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg, use_sdpa)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig, use_sdpa=None):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg, use_sdpa) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight   # weight tying
        self.apply(self._init_weights)
        # GPT-2: scale the residual projections by 1/sqrt(2 * n_layer).
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())   # tied weights counted once

    def forward(self, idx, targets=None):
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError(f"sequence length {T} exceeds the context {self.config.block_size}")
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss


def describe(cfg: GPTConfig):
    return asdict(cfg)
