"""Every exported function refuses bad input with one ValueError "gaugelab.<function>: <argument> must be
..." and accepts the good call it is tested beside (float64 and float32). The table holds one good call
per function; from it each array argument is made 1-D where [rows, cols] is expected (2-D where [n]
is), 3-D, NaN, inf, complex and a string (named as a str, not as NumPy's array of characters), each head
gets a NaN entry and a string, and each row adds the function's own cases: singular gauges, rank-deficient
factors, eps=nan, a zero head. A function missing from the table fails test_every_function_is_in_the_table."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from built_module import import_gaugelab

g = import_gaugelab()

D, DK, DV, R = 6, 3, 2, 3


def good(dtype=np.float64) -> dict:
    """Arguments a good call can draw from, of one dtype."""
    rng = g.Rng(0)
    x = dict(head=g.random_head(rng, D, DK, DV, dtype=dtype), direction=g.random_head(rng, D, DK, DV, dtype=dtype),
             X=g.randn(rng, 5, D, dtype=dtype), S=g.random_gl(rng, DK, 3.0, dtype=dtype),
             C=g.random_gl(rng, DV, 3.0, dtype=dtype), A=g.randn(rng, 7, R, dtype=dtype), B=g.randn(rng, 5, R, dtype=dtype),
             U_A=g.randn(rng, 7, R, dtype=dtype), U_B=g.randn(rng, 5, R, dtype=dtype), S_r=g.random_gl(rng, R, 3.0, dtype=dtype),
             r_q=g.random_positive_diagonal(rng, 6, 1.0, dtype=dtype), r_k=g.random_positive_diagonal(rng, 6, 1.0, dtype=dtype),
             W=g.randn(rng, 4, 3, dtype=dtype), G=g.randn(rng, 4, 3, dtype=dtype), rng=rng)
    x["multipliers"] = g.QkMultipliers(2, x["r_q"], x["r_k"])
    x["state"] = g.RuleState(dtype)
    x["step"] = g.propose(g.SgdOptions(lr=0.1), x["W"], x["G"], g.RuleState(dtype))
    return x


def spd(n, dtype):
    a = g.randn(g.Rng(n), n + 2, n, dtype=dtype)
    return a.T @ a


def zero_head(dtype=np.float64):
    z = lambda *s: np.zeros(s, dtype)  # noqa: E731
    return g.AttentionHead(z(D, DK), z(D, DK), z(D, DV), z(DV, D))


def with_nan(head):
    """A copy of the head (or multipliers) with one NaN written through the array view."""
    if hasattr(head, "W_q"):
        h = g.AttentionHead(head.W_q.copy(), head.W_k, head.W_v, head.W_o, head.b_q, head.b_k, head.b_v)
        h.W_q[0, 0] = np.nan
        return h, ".W_q"
    m = g.QkMultipliers(head.n_heads, head.r_q.copy(), head.r_k, head.b_q, head.b_k)
    m.r_q[0] = np.nan
    return m, ".r_q"


def f32_multipliers():
    """float32 multipliers: an eps of 1e300 is inf there (and inf/inf a NaN in every multiplier)."""
    return g.QkMultipliers(2, np.ones(6, np.float32), np.full(6, 2.0, np.float32))


def rank1(n):
    return np.outer(np.arange(1.0, n + 1), np.ones(n))


# function -> (good keyword arguments from good(), extra bad cases [(argument, value, other kwargs)]).
# "auto": the array/head mutations are made for every argument listed; lrm_drift takes any matching shapes.
TABLE = {
    "head_logits": (lambda x: dict(head=x["head"], X=x["X"]), []),
    "head_output": (lambda x: dict(head=x["head"], X=x["X"]), [("X", np.ones((5, D + 1)), {})]),
    "apply_qk_gauge": (lambda x: dict(head=x["head"], S=x["S"]),
                       [("S", np.zeros((DK, DK)), {}), ("S", rank1(DK), {}), ("S", np.eye(DK + 1), {}),
                        ("head", np.ones((D, DK)), {})]),
    "apply_vo_gauge": (lambda x: dict(head=x["head"], C=x["C"]), [("C", np.zeros((DV, DV)), {})]),
    "apply_head_gauge": (lambda x: dict(head=x["head"], S=x["S"], C=x["C"]),
                         [("S", rank1(DK), {}), ("C", np.zeros((DV, DV)), {})]),
    "represented": (lambda x: dict(A=x["A"], B=x["B"]), [("B", np.ones((5, R + 1)), {})]),
    "apply_factor_gauge": (lambda x: dict(A=x["A"], B=x["B"], S=x["S_r"]), [("S", rank1(R), {})]),
    "lrm_head_scales": (lambda x: dict(r_q=x["r_q"], r_k=x["r_k"], n_heads=2),
                        [("n_heads", 0, {}), ("r_q", np.ones(7), {}), ("r_k", np.ones(5), {})]),
    "lrm_drift": (lambda x: dict(s_q=x["r_q"], s_k=x["r_k"]),
                  [("s_q", np.zeros(6), {}), ("s_k", np.ones(5), {}), ("s_q", np.full(6, np.nan), {})]),
    "gram_imbalance": (lambda x: dict(A=x["A"], B=x["B"]), []),
    "qk_covariances": (lambda x: dict(head=x["head"], X=x["X"]), []),
    "activation_covariance_imbalance": (lambda x: dict(head=x["head"], X=x["X"]), [("X", np.ones((5, D)), {})]),
    "value_orthonormality_error": (lambda x: dict(head=x["head"]), []),
    "invariance_error": (lambda x: dict(f_a=x["A"], f_b=x["U_A"]), [("f_b", np.ones((7, R + 1)), {})]),
    "gauge_fix_factors": (lambda x: dict(multipliers=x["multipliers"]), [("eps", np.nan, {}), ("eps", -1.0, {})]),
    "gauge_fix": (lambda x: dict(multipliers=x["multipliers"]),
                  [("eps", np.nan, {}), ("eps", np.inf, {}), ("eps", 1e300, dict(multipliers=f32_multipliers())),
                   ("eps", 0.0, dict(multipliers=g.QkMultipliers(2, np.zeros(6), np.ones(6))))]),
    "rescale_qk_multipliers": (lambda x: dict(multipliers=x["multipliers"], g=np.ones(2, x["r_q"].dtype)),
                               [("g", np.array([1.0, 0.0]), {}), ("g", np.ones(3), {})]),
    "gram_balance": (lambda x: dict(A=x["A"], B=x["B"]), [("A", np.zeros((7, R)), {}), ("B", rank1(R), {})]),
    "gram_balance_qk": (lambda x: dict(head=x["head"]), [("head.W_q", None, dict(head=zero_head()))]),
    "covariance_balance_qk": (lambda x: dict(head=x["head"], X=x["X"]), [("X", np.ones((5, D)), {})]),
    "qr_canonical_head": (lambda x: dict(head=x["head"]), [("head.W_q", None, dict(head=zero_head()))]),
    "correct_qk": (lambda x: dict(W_Q=x["A"], W_K=x["A"], U_Q=x["U_A"], U_K=x["U_A"], mode="full"),
                   [("W_K", np.zeros((7, R)), {}), ("damping", np.nan, {}), ("damping", -1.0, {}), ("mode", "fuller", {})]),
    "correct_vo": (lambda x: dict(W_V=x["A"], W_O=x["A"].T, U_V=x["U_A"], U_O=x["U_A"].T, mode="full"),
                   [("W_O", np.zeros((R, 7)), {}), ("W_V", np.zeros((7, R)), dict(mode="diagonal"))]),
    "opposite_gram_correction": (lambda x: dict(A=x["A"], B=x["B"], U_A=x["U_A"], U_B=x["U_B"], mode="full"),
                                 [("B", rank1(R)[[0, 1, 2, 0, 1]], {})]),
    "first_order_motion": (lambda x: dict(A=x["A"], B=x["B"], U_A=x["U_A"], U_B=x["U_B"]), [("U_B", np.ones((5, 2)), {})]),
    "exact_motion": (lambda x: dict(A=x["A"], B=x["B"], U_A=x["U_A"], U_B=x["U_B"]), [("rho_A", np.inf, {})]),
    "solve_sylvester_psd": (lambda x: dict(A=spd(3, x["A"].dtype), B=spd(2, x["A"].dtype), C=x["A"][:3, :2]),
                            [("A", -np.eye(3), {}), ("B", np.array([[1.0, 2.0], [0.0, 1.0]]), {}), ("rel_tol", np.nan, {})]),
    "head_orbit_tangent": (lambda x: dict(head=x["head"], X=x["S"], Y=x["C"]), [("Y", np.eye(DV + 1), {})]),
    "head_vertical_coordinates": (lambda x: dict(head=x["head"], direction=x["direction"]),
                                  [("direction", None, dict(direction=g.random_head(g.Rng(1), D, DK + 1, DV)))]),
    "head_horizontal_projection": (lambda x: dict(head=x["head"], direction=x["direction"]), []),
    "head_horizontal_projection_approx": (lambda x: dict(head=x["head"], direction=x["direction"]), []),
    "head_inner": (lambda x: dict(a=x["head"], b=x["direction"]), []),
    "factor_horizontal_projection": (lambda x: dict(A=x["A"], B=x["B"], G_A=x["U_A"], G_B=x["U_B"]), []),
    "randn": (lambda x: dict(rng=x["rng"], rows=2, cols=3), [("rows", 0, {}), ("stddev", np.nan, {}), ("dtype", np.int32, {})]),
    "random_orthogonal": (lambda x: dict(rng=x["rng"], r=3), [("r", -1, {}), ("dtype", "bogus", {})]),
    "random_gl": (lambda x: dict(rng=x["rng"], r=3, kappa=2.0), [("kappa", 0.5, {}), ("kappa", np.nan, {})]),
    "random_diagonal_kappa": (lambda x: dict(rng=x["rng"], r=3, kappa=2.0), [("kappa", np.inf, {})]),
    "random_positive_diagonal": (lambda x: dict(rng=x["rng"], r=3, log_spread=1.0), [("log_spread", -1.0, {})]),
    "near_orthogonal": (lambda x: dict(rng=x["rng"], r=3, perturbation=0.1), [("perturbation", np.nan, {})]),
    "propose": (lambda x: dict(rule=g.SgdOptions(lr=0.1), W=x["W"], G=x["G"], state=x["state"]),
                [("rule.lr", None, dict(rule=g.SgdOptions(lr=np.nan))), ("rule", "sgd", {}),
                 ("state", None, dict(state=g.RuleState(np.float32))), ("G", np.ones((4, 4)), {})]),
    "apply_step": (lambda x: dict(W=x["W"], step=x["step"]), [("step", None, dict(W=np.ones((3, 3))))]),
    "default_rule_options": (lambda x: dict(name="sgd"), [("name", "sgdx", {})]),
    "AttentionHead": (lambda x: dict(W_q=x["head"].W_q, W_k=x["head"].W_k, W_v=x["head"].W_v, W_o=x["head"].W_o),
                      [("W_k", np.ones((D, DK + 1)), {}), ("W_q", np.ones((D, DK), complex), {})]),
    "QkMultipliers": (lambda x: dict(n_heads=2, r_q=x["r_q"], r_k=x["r_k"]), [("n_heads", 0, {}), ("r_q", np.ones(7), {})]),
    "random_head": (lambda x: dict(rng=x["rng"], d_model=D, d_k=DK, d_v=DV), [("d_k", 0, {})]),
}
NO_SHAPE_CASES = {"lrm_drift"}  # flattens any matching shapes ([layer, head])
NOT_A_FUNCTION = {"Rng", "DriftStats", "InvarianceError", "RuleState", "pybind11_version"}


def cases():
    """(function, argument named in the error, keyword arguments) for every bad call."""
    out = []
    for fn, (make, extra) in TABLE.items():
        kw = make(good())
        for arg, v in kw.items():
            if isinstance(v, np.ndarray) and fn not in NO_SHAPE_CASES:
                bad = [v[0] if v.ndim == 2 else v[None], v[None], v.astype(complex), "W"]  # "W": a string
                for poison in (np.nan, np.inf):
                    p = v.copy()
                    p.flat[p.size // 2] = poison
                    bad.append(p)
                out += [(fn, arg, {**kw, arg: b}) for b in bad]
            elif hasattr(v, "W_q") or hasattr(v, "r_q"):
                nan, field = with_nan(v)
                out.append((fn, arg + field, {**kw, arg: nan}))
                out.append((fn, arg, {**kw, arg: "head"}))  # a string where the object is expected
        for arg, v, other in extra:
            out.append((fn, arg, {**kw, **({} if v is None else {arg.split(".")[0]: v}), **other}))
    return out


def call(fn, kw):
    return getattr(g, fn)(**kw)


def test_every_function_is_in_the_table():
    public = {n for n in g.__all__ if callable(getattr(g, n)) and not n.endswith("Options")}
    assert public - NOT_A_FUNCTION - set(TABLE) == set(), "functions without validation cases"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", sorted(TABLE))
def test_good_call_passes(fn, dtype):
    call(fn, TABLE[fn][0](good(dtype)))


@pytest.mark.parametrize("fn,arg,kw", [pytest.param(*c, id=f"{c[0]}-{c[1]}-{i}") for i, c in enumerate(cases())])
def test_bad_argument_raises_one_value_error_naming_it(fn, arg, kw):
    with pytest.raises(ValueError) as e:
        call(fn, kw)
    msg = str(e.value)
    assert msg.startswith(f"gaugelab.{fn}: {arg} "), msg
    assert "\n" not in msg and len(msg) < 300, msg
    if isinstance(kw[arg.split(".")[0]], str) and arg not in ("mode", "name", "dtype", "rule"):
        assert msg.endswith("(got str)"), msg  # a string, not NumPy's "<U1" array of it


def test_singular_gauge_is_refused_not_inf():
    head = good()["head"]
    with pytest.raises(ValueError, match=r"^gaugelab.apply_qk_gauge: S must be invertible \(got all zeros\)$"):
        g.apply_qk_gauge(head, np.zeros((DK, DK)))
    with pytest.raises(ValueError, match=r"^gaugelab.apply_qk_gauge: S must be invertible \(got condition number inf\)$"):
        g.apply_qk_gauge(head, np.diag([1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match=r"^gaugelab.apply_vo_gauge: C must be invertible \(got condition number 1e\+17\)$"):
        g.apply_vo_gauge(head, np.diag([1.0, 1e-17]))  # singular to float64 rounding
    # a well-conditioned but far from orthogonal gauge passes
    assert np.isfinite(g.apply_qk_gauge(head, g.random_gl(g.Rng(3), DK, 1e4)).W_k).all()


def test_mixed_dtypes_name_the_reference_argument():
    x = good()
    with pytest.raises(ValueError, match="gaugelab.head_logits: X must be float64 like head"):
        g.head_logits(x["head"], x["X"].astype(np.float32))


def test_integer_arrays_and_lists_are_taken_as_the_calls_dtype():
    x = good(np.float32)
    out = g.head_logits(x["head"], np.ones((2, D), np.int64))
    assert out.dtype == np.float32
    assert g.represented([[1, 2]], [[3, 4]]).tolist() == [[11.0]]


def test_setters_check_the_value():
    head = good()["head"]
    with pytest.raises(ValueError, match=r"gaugelab.AttentionHead_f64.W_q: value must be 2-D"):
        head.W_q = np.ones(D)
    with pytest.raises(ValueError, match=r"gaugelab.AttentionHead_f64.b_q: value must be finite"):
        head.b_q = np.full(DK, np.inf)


def test_signatures_keep_their_argument_names():
    assert "eps" in g.gauge_fix.__doc__ and "head" in g.apply_qk_gauge.__doc__
    assert list(inspect.signature(g.AttentionHead).parameters)[:2] == ["W_q", "W_k"]


def test_multipliers_overload_of_lrm_head_scales_checks_too():
    m, _ = with_nan(good()["multipliers"])
    with pytest.raises(ValueError, match=r"^gaugelab.lrm_head_scales: multipliers.r_q must be finite \(got nan in it\)$"):
        g.lrm_head_scales(m)
    with pytest.raises(ValueError, match=r"^gaugelab.lrm_head_scales: multipliers must be an array or a gaugelab object"):
        g.lrm_head_scales({"r_q": 1})
