"""The argument checks of gaugelab.torch's functions. Each refuses in one line, in the bindings' form
"gaugelab.<function>: <argument> must be <requirement> (got <value>)": TypeError for a value of the wrong
kind (a string where a number is expected), ValueError for one out of range. The functions check every
argument before they move anything, so a refused call leaves the model and the optimizer as they were."""
from __future__ import annotations

import math
import numbers

import torch
from torch import nn


def shown(v) -> str:
    """A value as a message shows it: numbers in %g, anything else as its type and repr, cut short."""
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return f"{float(v):g}" if isinstance(v, float) or not isinstance(v, numbers.Integral) else str(int(v))
    text = repr(v)
    return f"{type(v).__name__} {text[:40] + '...' if len(text) > 40 else text}"


def fail(fn: str, arg: str, must: str, got=None, exc=ValueError):
    raise exc(f"gaugelab.{fn}: {arg} must be {must}" + ("" if got is None else f" (got {got})"))


def integer(fn: str, arg: str, v, lo: int = 1) -> int:
    """An integer >= lo (a bool, float or string is refused)."""
    must = f"an integer >= {lo}"
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        fail(fn, arg, must, shown(v), TypeError)
    if v < lo:
        fail(fn, arg, must, shown(v))
    return int(v)


def real(fn: str, arg: str, v, lo: float | None = None, strict: bool = False) -> float:
    """A finite real number, >= lo (> lo when strict); the bindings' wording ("finite and >= 0")."""
    must = "finite" + ("" if lo is None else f" and {'>' if strict else '>='} {lo:g}")
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        fail(fn, arg, f"a number, {must}", shown(v), TypeError)
    x = float(v)
    if not math.isfinite(x) or (lo is not None and (x <= lo if strict else x < lo)):
        fail(fn, arg, must, shown(x))
    return x


def flag(fn: str, arg: str, v) -> bool:
    if not isinstance(v, bool):
        fail(fn, arg, "True or False", shown(v), TypeError)
    return v


def choice(fn: str, arg: str, v, options) -> str:
    if not isinstance(v, str) or v not in options:
        fail(fn, arg, f"one of {', '.join(options)}", repr(v), ValueError if isinstance(v, str) else TypeError)
    return v


def module(fn: str, arg: str, v) -> nn.Module:
    if not isinstance(v, nn.Module):
        fail(fn, arg, "a torch.nn.Module", shown(v), TypeError)
    return v


def optimizer(fn: str, v) -> torch.optim.Optimizer:
    if not isinstance(v, torch.optim.Optimizer):
        fail(fn, "optimizer", "a torch.optim.Optimizer", shown(v), TypeError)
    return v


def generator(fn: str, v):
    if v is not None and not isinstance(v, torch.Generator):
        fail(fn, "generator", "a torch.Generator or None", shown(v), TypeError)
    return v


def gauge_fix_eps(fn: str, eps, dtype: torch.dtype) -> float:
    """GaugeFix's ε of g = √((s_Q+ε)/(s_K+ε)) (seed 000 eq. 4) on multipliers of `dtype`, by the core binding's
    rule (gaugelab.gauge_fix): finite and >= 0, and finite in the multipliers' dtype (1e300 is inf in float32,
    and inf/inf a NaN in every multiplier). Where it is 0 in that dtype, gauge_fix_zero_head checks the heads."""
    e = real(fn, "eps", eps, 0.0)
    top = torch.finfo(dtype).max
    if e > top:
        fail(fn, "eps", f"at most {top:g}, the largest {str(dtype).replace('torch.', '')}", shown(e))
    return e


def gauge_fix_zero_head(fn: str, eps: float, dtype: torch.dtype, scales) -> None:
    """With ε 0 in `dtype`, every head's scales must be > 0: the core binding's rule, the factor being 0/0 or
    x/0 otherwise. scales() gives {pair: [s, s']} ("Q or K": s_Q, s_K or n_Q, n_K; "V or O"), each [H]."""
    if torch.tensor(eps, dtype=dtype) > 0:
        return
    for pair, ss in scales().items():
        if not all(bool((s > 0).all()) for s in ss):
            fail(fn, "eps", f"> 0 where a head's {pair} multipliers are all zero (its factor would be 0/0 or x/0)",
                 shown(eps))


def batch(fn: str, idx) -> torch.Tensor:
    """A batch for the model's forward: a tensor [B, T, ...] with no empty dimension."""
    if not isinstance(idx, torch.Tensor):
        fail(fn, "idx", "a tensor [B, T]", shown(idx), TypeError)
    if idx.dim() < 2 or idx.numel() == 0:
        fail(fn, "idx", "a batch [B, T] with B, T >= 1", f"shape {list(idx.shape)}")
    return idx
