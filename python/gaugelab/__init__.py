"""gaugelab from Python: the symmetry core (src/core) on NumPy arrays, in float64 and float32.

    import numpy as np, gaugelab as g
    rng = g.Rng(0)
    head = g.random_head(rng, d_model=16, d_k=4, d_v=4)            # float64; dtype=np.float32 for float32
    X = g.randn(rng, 8, 16)
    S = g.random_gl(rng, head.d_k, kappa=10.0)                      # a Q/K gauge, condition number 10
    g.head_logits(g.apply_qk_gauge(head, S), X)                     # == g.head_logits(head, X)
    fixed, g_h = g.gauge_fix(g.QkMultipliers(2, r_q, r_k))          # seed 000 GaugeFix: s_Q = s_K per head
    U_Q, U_K = g.correct_qk(W_Q, W_K, U_Q, U_K, mode="full")         # quotient correction of increments
    step = g.propose(g.AdamWOptions(lr=1e-3), W, G, state := g.RuleState())

Every function takes float64 or float32 arrays and returns the same dtype; classes holding arrays
(AttentionHead, QkMultipliers, RuleState) are made by the factories below, which pick the float64 or
float32 class from the arrays' dtype (integer arrays and lists are taken as the call's dtype). Every
bad argument raises one ValueError "gaugelab.<function>: <argument> must be ... (got ...)": a 1-D or
3-D array where [rows, cols] is expected, a string, another dtype, a wrong shape, NaN or inf, a singular
gauge or a factor whose Gram the function inverts, eps or damping that is NaN or negative. An argument
of the wrong kind for a number, flag or name (a string for rows), or one missing or unknown, raises one
TypeError line in the same form, e.g. "gaugelab.randn: rows must be an integer (got str '2')".
The module is built by CMake (GAUGELAB_PYTHON, on when pybind11 is found) into <build>/python, with
pybind11 >= 2.12 for NumPy 1 and 2 alike (README.md, "gaugelab from Python").
"""
from __future__ import annotations

import numpy as np

from . import _arguments, _core
from ._core import *  # noqa: F401,F403  (the bound functions and options classes)

__all__ = [n for n in dir(_core) if not n.startswith("_") and not n.endswith(("_f64", "_f32"))]

# A call that matches no signature (a string for a number, a missing or unknown argument) raises one
# TypeError line naming the argument instead of pybind11's multi-line list of overloads (_arguments.py).
for _name in dir(_core):
    _obj = getattr(_core, _name)
    if _name.startswith("_"):
        continue
    if isinstance(_obj, type):
        _arguments.bound_class(_obj, _core)
    elif callable(_obj):
        globals()[_name] = _arguments.function(_name, _obj, _core)
del _name, _obj
__all__ += ["AttentionHead", "QkMultipliers", "RuleState", "random_head", "lrm_drift"]


def _array(name: str, x, arg: str) -> np.ndarray:
    """x as an array; a string is refused (NumPy would make an array of its characters)."""
    if isinstance(x, (str, bytes)):
        raise ValueError(f"gaugelab.{name}: {arg} must be an array (got {type(x).__name__})")
    return np.asarray(x)


def _class(name: str, dtype, arg: str) -> type:
    """The float64 or float32 class of `name` for arrays of `dtype` (integers are taken as float64)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"gaugelab.{name}: {arg} must be float64 or float32 (got {dtype!r})") from None
    if dt == np.float32:
        return getattr(_core, name + "_f32")
    if dt == np.float64 or dt.kind in "iu":
        return getattr(_core, name + "_f64")
    raise ValueError(f"gaugelab.{name}: {arg} must be float64 or float32 (got {dt})")


def _cols(a) -> int:
    """Columns of a 2-D array; 1 otherwise (the class then names the argument that is not 2-D)."""
    shape = np.shape(a)
    return shape[1] if len(shape) == 2 else 1


def AttentionHead(W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None):
    """One attention head; W_q's dtype picks float64 or float32; biases default to zeros."""
    W_q = _array("AttentionHead", W_q, "W_q")
    cls = _class("AttentionHead", W_q.dtype, "W_q")
    dt = np.float32 if W_q.dtype == np.float32 else np.float64
    zeros = lambda n: np.zeros(n, dt)  # noqa: E731
    return cls(W_q, W_k, W_v, W_o, zeros(_cols(W_q)) if b_q is None else b_q,
               zeros(_cols(W_q)) if b_k is None else b_k, zeros(_cols(W_v)) if b_v is None else b_v)


def QkMultipliers(n_heads: int, r_q, r_k, b_q=None, b_k=None):
    """Q/K multipliers and biases of one layer, each [h·dk]; r_q's dtype picks the class."""
    r_q = _array("QkMultipliers", r_q, "r_q")
    cls = _class("QkMultipliers", r_q.dtype, "r_q")
    zeros = np.zeros(r_q.shape, np.float32 if r_q.dtype == np.float32 else np.float64)
    return cls(n_heads, r_q, r_k, zeros if b_q is None else b_q, zeros if b_k is None else b_k)


def RuleState(dtype=np.float64):
    """Fresh optimizer state of one matrix of the given dtype."""
    return _class("RuleState", dtype, "dtype")()


def random_head(rng, d_model: int, d_k: int, d_v: int, dtype=np.float64, bias_stddev: float = 0.1):
    """A head with N(0, 1/d_model) weights (W_o: N(0, 1/d_v)) and N(0, bias_stddev²) biases, from `rng`."""
    for name, n in (("d_model", d_model), ("d_k", d_k), ("d_v", d_v)):
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"gaugelab.random_head: {name} must be an integer >= 1 (got {n!r})")
    sd, sv = 1.0 / np.sqrt(d_model), 1.0 / np.sqrt(d_v)
    return AttentionHead(randn(rng, d_model, d_k, sd, dtype), randn(rng, d_model, d_k, sd, dtype),  # noqa: F405
                         randn(rng, d_model, d_v, sd, dtype), randn(rng, d_v, d_model, sv, dtype),  # noqa: F405
                         randn(rng, 1, d_k, bias_stddev, dtype)[0], randn(rng, 1, d_k, bias_stddev, dtype)[0],  # noqa: F405
                         randn(rng, 1, d_v, bias_stddev, dtype)[0])  # noqa: F405


def lrm_drift(s_q, s_k):
    """Drift over every head of every layer: s_q, s_k of any matching shape (e.g. [layer, head])."""
    s_q, s_k = _array("lrm_drift", s_q, "s_q"), _array("lrm_drift", s_k, "s_k")
    if s_q.shape != s_k.shape:
        raise ValueError(f"gaugelab.lrm_drift: s_k must be of s_q's shape {list(s_q.shape)} (got {list(s_k.shape)})")
    return _core.lrm_drift(s_q.ravel(), s_k.ravel())
