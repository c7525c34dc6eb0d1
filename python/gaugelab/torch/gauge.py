"""The gauge operations on a PyTorch model, each the trainer's own operator applied layer by layer:
GaugeFix (seed 000, with biases and optional Adam-state transport), its effective-norm and V/O variants,
condition D's cap, QK-Clip (Kimi K2), and the per-head observables. In place, without autograd."""
from __future__ import annotations

import torch
from torch import nn

from . import _checks
from ._library import load
from .layers import attention_layers

TRANSPORTS = ("none", "vector", "covector")
FIX_MODES = ("head", "effective")


def _moments(optimizer, p):
    """Adam's (exp_avg, exp_avg_sq) of parameter p, or (None, None) before its first step."""
    st = optimizer.state.get(p, {}) if optimizer is not None else {}
    return st.get("exp_avg"), st.get("exp_avg_sq")


def _c_out(L):
    """The output projection's column multipliers c_O [d], or None."""
    return L.out.multiplier("c") if hasattr(L.out, "multiplier") else None


def check_fix(fn: str, layers, eps, mode: str, vo: bool, transport: str, optimizer) -> float:
    """What gauge_fix_ needs, checked on every layer before any moves (attach checks it when it registers
    the hook): the settings, row multipliers on q and k (and on v with column multipliers on the output
    projection for vo), and eps by the core binding's rule in the multipliers' dtype. Returns eps."""
    _checks.choice(fn, "mode", mode, FIX_MODES)
    _checks.choice(fn, "transport", transport, TRANSPORTS)
    _checks.flag(fn, "vo", vo)
    if transport != "none":
        if optimizer is None:
            raise ValueError(f"gaugelab.{fn}: transport needs the optimizer")
        _checks.optimizer(fn, optimizer)
    e = _checks.real(fn, "eps", eps, 0.0)
    for L in layers:
        L.require_rows(fn)
        _checks.gauge_fix_eps(fn, e, L.multiplier("r", "q").dtype)
        if vo and (L.multiplier("r", "v") is None or _c_out(L) is None):
            raise ValueError(f"gaugelab.{fn}: vo needs row multipliers on v and column multipliers on "
                             f"the output projection (layer {L.name})")
    return e


def _fix_scales(L, mode: str, vo: bool) -> dict:
    """The per-head scales [H] that GaugeFix divides by: s_Q, s_K (n_Q, n_K for mode effective), s_V, s_O."""
    ops, H = load(), L.heads
    if mode == "head":
        out = {"Q or K": [ops.head_rms(L.multiplier("r", "q"), H), ops.head_rms(L.multiplier("r", "k"), H)]}
    else:  # a head's rows are contiguous: the RMS of its flattened rows is zero exactly where their norm is
        out = {"Q or K": [ops.head_rms(L.effective(i).reshape(-1), H) for i in (0, 1)]}
    if vo:
        out["V or O"] = [ops.head_rms(L.multiplier("r", "v"), H), ops.head_rms(_c_out(L), H)]
    return out


def _transport(optimizer, p, rows: slice, a, heads, mode):
    m, v = _moments(optimizer, p)
    ops = load()
    ops.transport_head_moments_(None if m is None else m[rows], None if v is None else v[rows], a, heads, mode)


@torch.no_grad()
def gauge_fix_(model: nn.Module, eps: float = 1e-12, mode: str = "head", vo: bool = False, optimizer=None,
               transport: str = "none", layers=None) -> torch.Tensor:
    """GaugeFix (seed 000 eqs. 3–6) on every attention layer. Group removed: each head's scalar Q/K multiplier
    gauge (ℝ₊)^H, r_Q/g, b_Q/g, r_K·g, b_K·g; representative s_Q = s_K (mode "head", s the RMS of the head's
    row-multiplier slice: drift 0, seed 000 §3.3) or n_Q = n_K (mode "effective": equal norms of the head's
    effective Q and K rows). Every logit is unchanged. vo: also the V/O pair (r_V·g, b_V·g, c_O/g at s_V = s_O).
    transport: how an AdamW `optimizer`'s moments of r_Q, r_K and the Q/K bias move (none: left, seed 000's
    choice; vector: m·a, v·a²; covector: m/a, v/a²). Returns g [L, H]."""
    layers = layers or attention_layers(model)
    eps = check_fix("gauge_fix_", layers, eps, mode, vo, transport, optimizer)
    for L in layers:
        _checks.gauge_fix_zero_head("gauge_fix_", eps, L.multiplier("r", "q").dtype, lambda: _fix_scales(L, mode, vo))
    ops, gs = load(), []
    for L in layers:
        rq, rk, bq, bk = L.multiplier("r", "q"), L.multiplier("r", "k"), L.bias_slice(0), L.bias_slice(1)
        if mode == "head":
            g = ops.qk_gauge_fix_(rq, rk, bq, bk, L.heads, eps)
        else:
            g = ops.qk_gauge_fix_effective_(rq, rk, bq, bk, L.effective(0), L.effective(1), L.heads, eps)
        if transport != "none":
            d = L.d
            _transport(optimizer, rq, slice(0, d), 1 / g, L.heads, transport)
            _transport(optimizer, rk, slice(0, d), g, L.heads, transport)
            if L.qkv.bias is not None:
                _transport(optimizer, L.qkv.bias, slice(0, d), 1 / g, L.heads, transport)
                _transport(optimizer, L.qkv.bias, slice(d, 2 * d), g, L.heads, transport)
        if vo:
            ops.vo_gauge_fix_(L.multiplier("r", "v"), L.bias_slice(2), _c_out(L), L.heads, eps)
        gs.append(g)
    return torch.stack(gs)


@torch.no_grad()
def offset_qk_gauge_(model: nn.Module, sigma: float, generator: torch.Generator | None = None, layers=None):
    """A gauge-offset start like the trainer's --qk-gauge-init (its own draws, not the trainer's): every head moved
    along its Q/K multiplier orbit, r_Q/g, b_Q/g, r_K·g, b_K·g with g = exp(σ·z), z ~ N(0, 1) per head (drawn on
    the CPU from `generator`, layer by layer).
    Every logit is unchanged; the head's drift becomes 2σ|z|. With multipliers starting at 1, A and C keep
    r_Q = r_K in exact arithmetic (equal gradients), so GaugeFix has nothing to remove: this start gives the
    gauge handlings something to act on. Returns log g [L, H]."""
    fn = "offset_qk_gauge_"
    sigma = _checks.real(fn, "sigma", sigma, 0.0)
    _checks.generator(fn, generator)
    layers = layers or attention_layers(model)
    for L in layers:
        L.require_rows(fn)
    logs = [sigma * torch.randn(L.heads, generator=generator, dtype=torch.float64) for L in layers]  # [H] each
    factors = []
    for L, log_g in zip(layers, logs):  # every layer checked before any moves
        rq = L.multiplier("r", "q")
        g = log_g.exp().repeat_interleave(L.d // L.heads).to(rq.device, rq.dtype)  # [d]
        pairs = [(rq, rq / g), (L.multiplier("r", "k"), L.multiplier("r", "k") * g)]
        pairs += [(b, b / g if i == 0 else b * g) for i, b in enumerate((L.bias_slice(0), L.bias_slice(1)))
                  if b is not None]
        kept = bool(torch.isfinite(g).all() and (g > 0).all()) and all(
            bool(torch.isfinite(new).all() and ((new != 0) == (old != 0)).all()) for old, new in pairs)
        if not kept:
            _checks.fail(fn, "sigma", f"small enough that every factor exp(sigma*z) and the moved multipliers stay "
                         f"finite and nonzero in {str(rq.dtype).replace('torch.', '')}",
                         f"{sigma:g}, a factor {float(log_g.abs().max().exp()):g} in layer {L.name}")
        factors.append(g)
    ops = load()
    for L, g in zip(layers, factors):
        ops.rescale_qk_pair_(L.multiplier("r", "q"), L.multiplier("r", "k"), L.bias_slice(0), L.bias_slice(1), g)
    return torch.stack(logs)


@torch.no_grad()
def qk_cap_(model: nn.Module, cap: float = 4.0, layers=None) -> int:
    """Condition D's cap: heads with s_Q·s_K > cap get r_Q, b_Q, r_K, b_K scaled by √(cap/(s_Q·s_K)) (the
    logits scale: a magnitude control, not a gauge move). Returns the number of heads capped."""
    cap = _checks.real("qk_cap_", "cap", cap, 0.0, strict=True)
    layers = layers or attention_layers(model)
    for L in layers:
        L.require_rows("qk_cap_")
    ops, n = load(), 0
    for L in layers:
        n += int(ops.qk_cap_(L.multiplier("r", "q"), L.multiplier("r", "k"), L.bias_slice(0), L.bias_slice(1),
                             L.heads, cap))
    return n


def _split_heads(y: torch.Tensor, part: int, d: int, heads: int) -> torch.Tensor:
    """[B, T, 3d] -> part's [B, H, T, d_h]."""
    B, T, _ = y.shape
    return y.narrow(2, part * d, d).reshape(B, T, heads, d // heads).transpose(1, 2)


@torch.no_grad()
def attention_logit_max(model: nn.Module, idx: torch.Tensor, absolute: bool = False, layers=None,
                        forward=None) -> torch.Tensor:
    """The largest causal attention logit q·k/√d_h of each head on the batch idx [B, T], [L, H] (absolute: the
    largest |logit|). Runs the model once in eval mode (no dropout), reading q and k off each c_attn's
    output; `forward(model, idx)` replaces model(idx) for models with another call signature. Assumes q and
    k enter the scores as c_attn gives them (no QK-norm or rotary between)."""
    _checks.flag("attention_logit_max", "absolute", absolute)
    if forward is None:
        _checks.batch("attention_logit_max", idx)
    elif not callable(forward):
        _checks.fail("attention_logit_max", "forward", "a callable forward(model, idx) or None", _checks.shown(forward),
                     TypeError)
    layers = layers or attention_layers(model)
    ops, rows, handles = load(), [None] * len(layers), []
    for i, L in enumerate(layers):
        def hook(_m, _inp, y, i=i, L=L):
            if y.dim() != 3 or y.shape[1] == 0:
                raise ValueError(f"gaugelab.attention_logit_max: {L.name}'s c_attn output must be [B, T, 3d] with T >= 1 "
                                 f"(got {list(y.shape)}): idx must be a batch [B, T]")
            rows[i] = ops.attention_logit_max(_split_heads(y, 0, L.d, L.heads), _split_heads(y, 1, L.d, L.heads),
                                              absolute)
        handles.append(L.qkv.register_forward_hook(hook))
    was_training = model.training
    try:
        model.eval()
        (forward or (lambda m, x: m(x)))(model, idx)
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    missing = [L.name for L, r in zip(layers, rows) if r is None]
    if missing:
        raise ValueError(f"gaugelab.attention_logit_max: the forward pass never ran {', '.join(missing)}'s c_attn")
    return torch.stack(rows)


@torch.no_grad()
def qk_clip_(model: nn.Module, tau: float = 100.0, idx: torch.Tensor | None = None, logit_max=None,
             on: str = "weights", layers=None) -> int:
    """QK-Clip (Kimi K2, arXiv 2507.20534 §2.1): every head whose largest logit exceeds tau has its query and
    key scaled by √(tau/max) each, on the head's rows of W̄_Q, W̄_K (on="weights") or its slices of r_Q, r_K
    (on="multipliers"), and its Q/K biases. logit_max [L, H] or a batch idx to measure it on (the signed
    maximum, as Kimi K2; under torch.distributed the maximum over every rank's batch). The factors √(tau/max)
    are computed in float32 (the trainer's). Returns the number of heads clipped."""
    tau = _checks.real("qk_clip_", "tau", tau, 0.0, strict=True)
    _checks.choice("qk_clip_", "on", on, ("weights", "multipliers"))
    layers = layers or attention_layers(model)
    if on == "multipliers":
        for L in layers:
            L.require_rows("qk_clip_")
    if logit_max is None:
        if idx is None:
            raise ValueError("gaugelab.qk_clip_: give the batch idx or logit_max [n_layer, n_head]")
        _checks.batch("qk_clip_", idx)
        logit_max = attention_logit_max(model, idx, absolute=False, layers=layers)
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            # data parallel: the max over every rank's batch, so every rank clips the same heads (as the trainer)
            torch.distributed.all_reduce(logit_max, op=torch.distributed.ReduceOp.MAX)
    if not isinstance(logit_max, torch.Tensor):
        _checks.fail("qk_clip_", "logit_max", f"a tensor [{len(layers)}, {layers[0].heads}]", _checks.shown(logit_max),
                     TypeError)
    if logit_max.shape != (len(layers), layers[0].heads):
        raise ValueError(f"gaugelab.qk_clip_: logit_max must be [{len(layers)}, {layers[0].heads}] "
                         f"(got {list(logit_max.shape)})")
    if not bool(torch.isfinite(logit_max).all()):
        _checks.fail("qk_clip_", "logit_max", "finite (an inf or NaN logit would scale the head to zero or NaN)",
                     "a non-finite entry")
    ops, n = load(), 0
    for L, lm in zip(layers, logit_max):
        if on == "weights":
            xq, xk = L.weight_slice(0), L.weight_slice(1)
        else:
            xq, xk = L.multiplier("r", "q"), L.multiplier("r", "k")
        n += int(ops.qk_clip_(xq, xk, L.bias_slice(0), L.bias_slice(1), lm, tau))
    return n


@torch.no_grad()
def head_stats(model: nn.Module, idx: torch.Tensor | None = None, layers=None) -> dict:
    """Per layer and head, as [L, H] tensors: s_q, s_k (RMS of the head's row multipliers; with row multipliers
    on q and k), drift |log(s_Q/s_K)| (seed 000 eq. 3), rho = log(n_Q/n_K) of the effective maps (every
    multiplier merged: the Q/K imbalance that W̄ and the column multipliers carry, which the drift does not see;
    where on the gauge orbit the head sits, not a balance the optimizer prefers: the motion driven by W̄'s steps
    does not depend on that gauge), and logit_max (the largest attention logit, when a batch idx is given;
    measured in float32, as the trainer logs it)."""
    if idx is not None:
        _checks.batch("head_stats", idx)
    layers = layers or attention_layers(model)
    ops, out = load(), {}
    if all(L.multiplier("r", "q") is not None and L.multiplier("r", "k") is not None for L in layers):
        out["s_q"] = torch.stack([ops.head_rms(L.multiplier("r", "q"), L.heads) for L in layers])
        out["s_k"] = torch.stack([ops.head_rms(L.multiplier("r", "k"), L.heads) for L in layers])
        out["drift"] = (out["s_q"].double() / out["s_k"].double()).log().abs()
    out["rho"] = torch.stack([ops.qk_effective_log_ratio(L.effective(0), L.effective(1), L.heads) for L in layers])
    if idx is not None:
        out["logit_max"] = attention_logit_max(model, idx, layers=layers)
    return out
