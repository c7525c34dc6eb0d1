"""Learnable multipliers on a PyTorch model (seed 002; seed 000 eq. 1): LRMLinear, a torch.nn.Linear with
row and column multipliers, W_eff = diag(r)·W̄·diag(c), y = x·W_effᵀ + b, computed by the trainer's own
operator (torch.ops.gaugelab.lrm_linear), and add_multipliers, which swaps a nanoGPT-style model's Linear
layers for it in place at the seed's placement with every multiplier at 1 (the function is unchanged)."""
from __future__ import annotations

import torch
from torch import nn

from . import _checks
from ._library import load, placement

# nanoGPT's module names -> the trainer's multiplier sites. c_attn packs Q, K and V as [3d, d]: its rows
# split into three groups, each with its own multipliers (r_q, c_q, ...), as in the trainer.
NANOGPT_SITES = {"attn.c_attn": ("q", "k", "v"), "attn.c_proj": "attn_out", "mlp.c_fc": "mlp_in",
                 "mlp.c_proj": "mlp_out", "lm_head": "lm_head"}
MODES = ("none", "scalar", "row", "column", "row+column")


class LRMLinear(nn.Linear):
    """A torch.nn.Linear with learnable multipliers (isinstance(m, nn.Linear) holds; weight and bias as Linear's). groups: None (one group: parameters r, c, s) or tags such as
    ("q", "k", "v") (the rows split into equal groups with parameters r_q, c_q, s_q, ...); modes: one mode
    for every group or a {tag: mode} dict, each of none, scalar (s [1]), row (r [rows]), column (c [in]),
    row+column. qk_tags: the groups whose row/scalar multipliers carry the Q/K gauge (seed 000)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, modes="row+column", groups=None,
                 qk_tags=("q", "k"), device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)  # Linear's weight, bias, init
        tags = tuple(groups) if groups else ("",)
        if out_features % len(tags):
            raise ValueError(f"gaugelab.LRMLinear: out_features {out_features} must split into {len(tags)} groups")
        modes = {t: (modes[t] if isinstance(modes, dict) else modes) for t in tags}
        for t, m in modes.items():
            if m not in MODES:
                raise ValueError(f"gaugelab.LRMLinear: mode must be one of {', '.join(MODES)} (got {m!r})")
        kw = {"device": device, "dtype": dtype}
        self.tags, self.modes = tags, modes
        self.qk_tags = tuple(t for t in tags if t in qk_tags)
        self.rows = out_features // len(tags)
        for t, m in modes.items():
            sfx = f"_{t}" if t else ""
            if m == "scalar":
                self.register_parameter("s" + sfx, nn.Parameter(torch.ones(1, **kw)))
            if m in ("row", "row+column"):
                self.register_parameter("r" + sfx, nn.Parameter(torch.ones(self.rows, **kw)))
            if m in ("column", "row+column"):
                self.register_parameter("c" + sfx, nn.Parameter(torch.ones(in_features, **kw)))

    @classmethod
    def from_linear(cls, linear: nn.Linear, modes="row+column", groups=None) -> "LRMLinear":
        """Multipliers at 1 around an existing Linear: the same weight and bias Parameters (ties kept)."""
        m = cls(linear.in_features, linear.out_features, linear.bias is not None, modes, groups,
                device=linear.weight.device, dtype=linear.weight.dtype)
        m.weight = linear.weight
        m.bias = linear.bias
        return m

    def multiplier(self, kind: str, tag: str = ""):
        """The parameter r, c or s of group `tag`, or None."""
        return getattr(self, kind + (f"_{tag}" if tag else ""), None)

    def row_scale(self, tag: str = ""):
        """Group `tag`'s per-row scale [rows]: r, s expanded, or None."""
        r = self.multiplier("r", tag)
        if r is not None:
            return r
        s = self.multiplier("s", tag)
        return None if s is None else s.expand(self.rows)

    def _scales(self):
        """r [out] and c ([in] for one group, [G, in] for several), or None where no group has them."""
        if len(self.tags) == 1:
            return self.row_scale(), self.multiplier("c")
        rs = [self.row_scale(t) for t in self.tags]
        cs = [self.multiplier("c", t) for t in self.tags]
        r = None if all(x is None for x in rs) else torch.cat(
            [x if x is not None else self.weight.new_ones(self.rows) for x in rs])  # [out]
        c = None if all(x is None for x in cs) else torch.stack(
            [x if x is not None else self.weight.new_ones(self.in_features) for x in cs])  # [G, in]
        return r, c

    def effective_weight(self) -> torch.Tensor:
        """W_eff [out, in]."""
        r, c = self._scales()
        return load().lrm_effective_weight(self.weight, r, c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x [..., in] -> [..., out]
        r, c = self._scales()
        return load().lrm_linear(x, self.weight, self.bias, r, c)

    def extra_repr(self) -> str:
        return f"in={self.in_features}, out={self.out_features}, bias={self.bias is not None}, modes={self.modes}"


def add_multipliers(model: nn.Module, spec: str = "default", sites: dict | None = None) -> nn.Module:
    """Replaces, in place, every Linear whose module name ends in a key of `sites` (default: nanoGPT's names,
    NANOGPT_SITES) by an LRMLinear at the placement `spec` (the trainer's --multipliers: "default" is the
    seed's rows+columns on q, k, v, attn_out, mlp_in, mlp_out and none on the tied LM head), multipliers at 1.
    Returns the model. Call it before making the optimizer."""
    _checks.module("add_multipliers", "model", model)
    if not isinstance(spec, str):
        _checks.fail("add_multipliers", "spec", "a placement string (default, none, q:row+column,k:row, ...)",
                     _checks.shown(spec), TypeError)
    if sites is not None and not isinstance(sites, dict):
        _checks.fail("add_multipliers", "sites", "a dict {module-name suffix: site}", _checks.shown(sites), TypeError)
    modes = placement(spec)
    sites = NANOGPT_SITES if sites is None else sites
    for suffix, site in sites.items():
        for t in site if isinstance(site, tuple) else (site,):
            if t not in modes:
                _checks.fail("add_multipliers", f"sites[{suffix!r}]", f"a site among {', '.join(modes)} or a tuple of them",
                             repr(site))

    def site_of(name):
        return next((s for suffix, s in sites.items() if name == suffix or name.endswith("." + suffix)), None)

    placed = [name for name, module in model.named_modules() if isinstance(module, LRMLinear) and site_of(name)]
    if placed:  # checked before anything is swapped: a second call would place multipliers on multipliers
        raise ValueError(f"gaugelab.add_multipliers: the model already has multipliers ({placed[0]} is an LRMLinear); "
                         "call add_multipliers once, before making the optimizer")
    swapped = 0
    for name, module in list(model.named_modules()):
        site = site_of(name)
        if site is None or not isinstance(module, nn.Linear):
            continue
        if isinstance(site, tuple):
            mode, groups = {t: modes[t] for t in site}, site
            if all(m == "none" for m in mode.values()):
                continue
        else:
            mode, groups = modes[site], None
            if mode == "none":
                continue
        parent, _, leaf = name.rpartition(".")
        setattr(model.get_submodule(parent) if parent else model, leaf, LRMLinear.from_linear(module, mode, groups))
        swapped += 1
    if swapped == 0 and any(m != "none" for m in modes.values()):
        raise ValueError("gaugelab.add_multipliers: no Linear layer matched the sites "
                         f"{', '.join(sites)} (pass sites={{module-name suffix: site}})")
    return model
