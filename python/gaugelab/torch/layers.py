"""The attention layers of a nanoGPT-style model, as the gauge operators need them: a module with a packed
Q/K/V projection `c_attn` ([3d, d], torch's Linear layout), an output projection `c_proj` and `n_head`
(nanoGPT's CausalSelfAttention). Other names: attention_layers(model, qkv=..., out=..., n_head=...)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from . import _checks
from .lrm import LRMLinear


@dataclass
class AttentionLayer:
    name: str
    qkv: nn.Module   # c_attn: Linear or LRMLinear with groups (q, k, v); weight [3d, d]
    out: nn.Module   # c_proj: weight [d, d]
    heads: int
    module: nn.Module | None = None  # the attention module holding c_attn and c_proj

    @property
    def d(self) -> int:
        return self.qkv.weight.shape[1]

    def bias_slice(self, part: int):
        """Rows [part·d, (part+1)·d) of c_attn's bias (a view: writes move the parameter), or None."""
        b = self.qkv.bias
        return None if b is None else b.narrow(0, part * self.d, self.d)

    def weight_slice(self, part: int) -> torch.Tensor:
        """W̄_Q (0), W̄_K (1) or W̄_V (2) [d, d], a view of c_attn.weight."""
        return self.qkv.weight.narrow(0, part * self.d, self.d)

    def multiplier(self, kind: str, tag: str):
        return self.qkv.multiplier(kind, tag) if isinstance(self.qkv, LRMLinear) else None

    def row_scale(self, tag: str):
        return self.qkv.row_scale(tag) if isinstance(self.qkv, LRMLinear) else None

    def effective(self, part: int) -> torch.Tensor:
        """The effective Q (0), K (1) or V (2) rows [d, d], every multiplier merged."""
        w = self.qkv.effective_weight() if isinstance(self.qkv, LRMLinear) else self.qkv.weight
        return w.detach().narrow(0, part * self.d, self.d)

    def require_rows(self, what: str) -> None:
        if self.multiplier("r", "q") is None or self.multiplier("r", "k") is None:
            raise ValueError(f"gaugelab.{what}: needs row multipliers on q and k (layer {self.name}; "
                             "add_multipliers(model) places them)")

    def has_qk_norm(self) -> bool:
        """Whether the attention module normalises q and k: it holds a norm layer (q_norm, k_norm: any module
        whose class name ends in Norm, nn.RMSNorm and nn.LayerNorm included) or has a true `qk_norm`
        attribute (set it where the normalisation is functional, F.rms_norm in forward)."""
        m = self.module
        if m is None:
            return False
        if getattr(m, "qk_norm", False) is True:
            return True
        return any(type(c).__name__.endswith("Norm") for c in m.children())


def attention_layers(model: nn.Module, qkv: str = "c_attn", out: str = "c_proj", n_head: int | None = None):
    """Every attention layer of `model`, in module order."""
    _checks.module("torch", "model", model)
    if n_head is not None:
        _checks.integer("torch", "n_head", n_head)
    found = []
    for name, m in model.named_modules():
        a, o = getattr(m, qkv, None), getattr(m, out, None)
        if not isinstance(a, nn.Module) or not isinstance(o, nn.Module) or not hasattr(a, "weight"):
            continue
        heads = n_head if n_head is not None else getattr(m, "n_head", None)
        if heads is None:
            raise ValueError(f"gaugelab.torch: attention module {name!r} has no n_head attribute (pass n_head=)")
        _checks.integer("torch", f"{name or 'the model'}.n_head" if n_head is None else "n_head", heads)
        w = a.weight
        if w.dim() != 2 or w.shape[0] != 3 * w.shape[1] or w.shape[1] % heads:
            raise ValueError(f"gaugelab.torch: {name}.{qkv}.weight must be [3d, d] with n_head {heads} dividing d "
                             f"(got {list(w.shape)})")
        found.append(AttentionLayer(name, a, o, int(heads), m))
    if not found:
        raise ValueError(f"gaugelab.torch: no attention module with {qkv!r}, {out!r} and n_head found in the model")
    return found
