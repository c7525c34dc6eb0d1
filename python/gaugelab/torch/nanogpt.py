"""A stand-in for your own model: nanoGPT's GPT (karpathy/nanoGPT model.py), written from its semantics in a
few lines: bias=False, exact GELU, pre-LayerNorm blocks, causal scaled_dot_product_attention, the LM head tied
to wte, no dropout. Its module names are gaugelab's parameter names (wte, wpe, h.i.attn.c_attn, ...), so a
`gaugelab train` checkpoint loads with load_state_dict. Nothing in gaugelab.torch depends on this class: the
gauge tools find any model's attention modules by nanoGPT's names (c_attn, c_proj, n_head)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks

CONFIG_KEYS = ("n_layer", "n_head", "n_embd", "block_size", "vocab_size")


class SelfAttention(nn.Module):
    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False), n_head

    def forward(self, x):  # x [B, T, d]
        B, T, d = x.shape
        q, k, v = (t.view(B, T, self.n_head, d // self.n_head).transpose(1, 2) for t in self.c_attn(x).split(d, 2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, H, T, d_h]
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, d))


class Mlp(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.c_fc, self.c_proj = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(d, bias=False), SelfAttention(d, n_head)
        self.ln_2, self.mlp = nn.LayerNorm(d, bias=False), Mlp(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    """cfg: n_layer, n_head, n_embd, block_size, vocab_size (a gaugelab checkpoint's config.json "model")."""

    def __init__(self, cfg: dict):
        super().__init__()
        if not isinstance(cfg, dict) or any(k not in cfg for k in CONFIG_KEYS):
            _checks.fail("NanoGPT", "cfg", f"a dict with {', '.join(CONFIG_KEYS)}",
                         _checks.shown(cfg) if not isinstance(cfg, dict) else f"keys {', '.join(map(str, cfg))}",
                         TypeError if not isinstance(cfg, dict) else ValueError)
        for k in CONFIG_KEYS:
            _checks.integer("NanoGPT", f"cfg[{k!r}]", cfg[k])
        if cfg["n_embd"] % cfg["n_head"]:
            _checks.fail("NanoGPT", "cfg['n_head']", f"a divisor of n_embd {cfg['n_embd']}", cfg["n_head"])
        self.block_size = cfg["block_size"]
        d = cfg["n_embd"]
        self.wte, self.wpe = nn.Embedding(cfg["vocab_size"], d), nn.Embedding(cfg["block_size"], d)
        self.h = nn.ModuleList(Block(d, cfg["n_head"]) for _ in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(d, bias=False)
        self.lm_head = nn.Linear(d, cfg["vocab_size"], bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as nanoGPT
        for name, p in self.named_parameters():  # nanoGPT's init: N(0, 0.02), residual projections scaled
            if p.dim() == 2:
                std = 0.02 / (2 * cfg["n_layer"]) ** 0.5 if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets=None):  # idx [B, T] -> loss (targets given) or logits [B, T, vocab]
        if not isinstance(idx, torch.Tensor) or idx.is_floating_point() or idx.is_complex() or idx.dtype == torch.bool:
            _checks.fail("NanoGPT", "idx", "an integer tensor [B, T] of token ids",
                         idx.dtype if isinstance(idx, torch.Tensor) else _checks.shown(idx), TypeError)
        if idx.dim() != 2 or idx.numel() == 0 or idx.shape[1] > self.block_size:
            _checks.fail("NanoGPT", "idx", f"[B, T] with B >= 1 and 1 <= T <= block_size {self.block_size}",
                         f"shape {list(idx.shape)}")
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.h:
            x = b(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
