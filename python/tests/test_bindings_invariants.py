"""The bindings reproduce the core's invariants on NumPy arrays, in float64 and float32: gauge actions
leave what they must unchanged (logits under a Q/K gauge, outputs under a V/O gauge, A·Bᵀ under the
factor gauge) at many random points, while a non-gauge change of the same size does move them;
GaugeFix balances s_Q = s_K without changing any q_j·k_j; the full quotient correction makes the
represented motion of an SGD step gauge-independent; update rules and bad input behave as stated."""
from __future__ import annotations

import numpy as np
import pytest

from built_module import import_gaugelab

g = import_gaugelab()

DTYPES = [np.float64, np.float32]
# Tolerance on relative errors: a few hundred ulps of the dtype (κ ≤ 10 gauges, tiny heads).
TOL = {np.float64: 1e-10, np.float32: 2e-4}
POINTS = 25  # random (head, inputs, gauge) draws per test


def rel(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(np.asarray(a, np.float64)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_qk_gauge_leaves_logits_unchanged(dtype):
    worst, moved = 0.0, []
    for seed in range(POINTS):
        rng = g.Rng(seed)
        d, dk, dv = 6 + seed % 5, 2 + seed % 3, 3
        head = g.random_head(rng, d, dk, dv, dtype=dtype)
        X = g.randn(rng, 7, d, dtype=dtype)
        S = g.random_gl(rng, dk, kappa=1.0 + seed % 10, dtype=dtype)
        gauged = g.apply_qk_gauge(head, S)
        ref = g.head_logits(head, X)
        assert ref.dtype == dtype and gauged.W_q.dtype == dtype
        worst = max(worst, rel(ref, g.head_logits(gauged, X)))
        assert rel(g.head_output(head, X), g.head_output(gauged, X)) < TOL[dtype]
        # the same S applied to W_q alone is not a gauge: the logits move
        broken = g.AttentionHead(head.W_q @ S, head.W_k, head.W_v, head.W_o, head.b_q @ S, head.b_k, head.b_v)
        moved.append(rel(ref, g.head_logits(broken, X)))
    assert worst < TOL[dtype], f"logits changed by {worst:g} under a Q/K gauge"
    assert min(moved) > 100 * TOL[dtype], "a non-gauge change left the logits unchanged: the check cannot fail"


@pytest.mark.parametrize("dtype", DTYPES)
def test_vo_gauge_leaves_output_unchanged_and_moves_values(dtype):
    for seed in range(POINTS):
        rng = g.Rng(1000 + seed)
        head = g.random_head(rng, 8, 3, 4, dtype=dtype)
        X = g.randn(rng, 5, 8, dtype=dtype)
        C = g.near_orthogonal(rng, 4, 0.3, dtype=dtype)
        gauged = g.apply_vo_gauge(head, C)
        assert rel(g.head_output(head, X), g.head_output(gauged, X)) < TOL[dtype]
        assert rel(head.W_v, gauged.W_v) > 1e-3  # the representative did move
        # gauge-dependent coordinate: value orthonormality changes, the logits do not even see C
        assert g.value_orthonormality_error(head) != pytest.approx(g.value_orthonormality_error(gauged), rel=1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_factor_gauge_keeps_represented_matrix(dtype):
    for seed in range(POINTS):
        rng = g.Rng(2000 + seed)
        A, B = g.randn(rng, 6, 3, dtype=dtype), g.randn(rng, 5, 3, dtype=dtype)
        S = g.random_gl(rng, 3, kappa=5.0, dtype=dtype)
        A2, B2 = g.apply_factor_gauge(A, B, S)
        assert rel(g.represented(A, B), g.represented(A2, B2)) < TOL[dtype]
        assert g.gram_imbalance(A, B)["norm"] != pytest.approx(g.gram_imbalance(A2, B2)["norm"], rel=1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gauge_fix_balances_scales_and_keeps_products(dtype):
    rng = g.Rng(7)
    h, dk = 4, 3
    r_q = g.random_positive_diagonal(rng, h * dk, 2.0, dtype=dtype)
    r_k = g.random_positive_diagonal(rng, h * dk, 2.0, dtype=dtype)
    b_q, b_k = g.randn(rng, 1, h * dk, dtype=dtype)[0], g.randn(rng, 1, h * dk, dtype=dtype)[0]
    m = g.QkMultipliers(h, r_q, r_k, b_q, b_k)
    s_q, s_k = g.lrm_head_scales(m)
    assert g.lrm_drift(s_q, s_k).max > 0.1  # drawn unbalanced
    fixed, factors = g.gauge_fix(m)
    assert factors.shape == (h,) and fixed.r_q.dtype == dtype
    assert g.lrm_drift(*g.lrm_head_scales(fixed)).max < 10 * TOL[dtype]
    # what the logits see per coordinate: r_q·r_k, b_q·b_k, r_q·b_k, b_q·r_k
    for a, b in (("r_q", "r_k"), ("b_q", "b_k"), ("r_q", "b_k"), ("b_q", "r_k")):
        before = getattr(m, a) * getattr(m, b)
        after = getattr(fixed, a) * getattr(fixed, b)
        assert rel(before, after) < TOL[dtype], f"{a}·{b} changed"
    again, g2 = g.gauge_fix(fixed)  # idempotent: a balanced layer gets g = 1
    assert np.allclose(g2, 1.0, atol=10 * TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gram_balance_and_qr_slice_keep_the_function(dtype):
    rng = g.Rng(11)
    head = g.random_head(rng, 9, 3, 3, dtype=dtype)
    X = g.randn(rng, 6, 9, dtype=dtype)
    ref = g.head_output(head, X)
    balanced, S = g.gram_balance_qk(head)
    assert rel(balanced.W_q.T @ balanced.W_q, balanced.W_k.T @ balanced.W_k) < 10 * TOL[dtype]
    canon, R_q, R_v = g.qr_canonical_head(head)
    assert np.allclose(canon.W_q.T @ canon.W_q, np.eye(3), atol=10 * TOL[dtype])
    for h2 in (balanced, canon):
        assert rel(ref, g.head_output(h2, X)) < TOL[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_quotient_correction_makes_motion_gauge_independent(dtype):
    """SGD on M = W_Q·W_Kᵀ: at (W_Q S, W_K S⁻ᵀ) the gradients are (G_Q S⁻ᵀ, G_K S). Raw, the represented
    motion depends on S; corrected with correct_qk (full, λ = 0) it does not."""
    raw_spread, corrected_spread = [], []
    for seed in range(POINTS):
        rng = g.Rng(3000 + seed)
        WQ, WK = g.randn(rng, 8, 3, dtype=dtype), g.randn(rng, 8, 3, dtype=dtype)
        G_M = g.randn(rng, 8, 8, dtype=dtype)  # dL/dM
        S = g.random_gl(rng, 3, kappa=8.0, dtype=dtype)
        WQ2, WK2 = g.apply_factor_gauge(WQ, WK, S)

        def motion(wq, wk, correct):
            gq, gk = G_M @ wk, G_M.T @ wq  # chain rule through M = W_Q W_Kᵀ
            uq, uk = -0.01 * gq, -0.01 * gk
            if correct:
                uq, uk = g.correct_qk(wq, wk, uq, uk, mode="full")
            return g.first_order_motion(wq, wk, uq, uk)

        raw_spread.append(rel(motion(WQ, WK, False), motion(WQ2, WK2, False)))
        corrected_spread.append(rel(motion(WQ, WK, True), motion(WQ2, WK2, True)))
    assert max(corrected_spread) < 10 * TOL[dtype]
    assert min(raw_spread) > 1e-3, "raw SGD motion did not depend on the gauge: the comparison is vacuous"


@pytest.mark.parametrize("dtype", DTYPES)
def test_vo_correction_matches_its_factor_pair_form(dtype):
    rng = g.Rng(5)
    WV, WO = g.randn(rng, 7, 3, dtype=dtype), g.randn(rng, 3, 7, dtype=dtype)
    UV, UO = g.randn(rng, 7, 3, dtype=dtype), g.randn(rng, 3, 7, dtype=dtype)
    cv, co = g.correct_vo(WV, WO, UV, UO, mode="full")
    pa, pb = g.opposite_gram_correction(WV, WO.T.copy(), UV, UO.T.copy(), mode="full")
    assert rel(pa, cv) < TOL[dtype] and rel(pb.T, co) < TOL[dtype]
    none_v, none_o = g.correct_vo(WV, WO, UV, UO, mode="none")
    assert np.array_equal(none_v, UV) and np.array_equal(none_o, UO)


@pytest.mark.parametrize("dtype", DTYPES)
def test_update_rules_step_and_state(dtype):
    rng = g.Rng(9)
    W, G = g.randn(rng, 4, 3, dtype=dtype), g.randn(rng, 4, 3, dtype=dtype)
    sgd = g.SgdOptions(lr=0.1, weight_decay=0.5)
    st = g.RuleState(dtype)
    step = g.propose(sgd, W, G, st)
    assert st.step == 1 and step.U.dtype == dtype
    assert np.allclose(g.apply_step(W, step), (1 - 0.1 * 0.5) * W - 0.1 * G, rtol=TOL[dtype] * 10)
    adam, st = g.AdamWOptions(lr=1e-2, weight_decay=0.0), g.RuleState(dtype)
    U1 = g.propose(adam, W, G, st).U
    assert st.moment1.shape == W.shape and st.moment2.shape == W.shape
    assert np.allclose(np.abs(U1), 1e-2, rtol=1e-3)  # first AdamW step: |U| = lr (bias-corrected sign step)
    muon = g.default_rule_options("muon")
    assert isinstance(muon, g.MuonOptions) and muon.orthogonaliser == "newton_schulz"
    hb = g.HyperballOptions(lr=0.1)
    W_next = g.apply_step(W, g.propose(hb, W, G, g.RuleState(dtype)))
    assert np.linalg.norm(W_next) == pytest.approx(np.linalg.norm(W), rel=TOL[dtype] * 10)


def test_bad_input_raises_one_clear_error():
    rng = g.Rng(0)
    head = g.random_head(rng, 6, 2, 2)
    with pytest.raises(ValueError, match="apply_qk_gauge"):
        g.apply_qk_gauge(head, np.eye(3))
    with pytest.raises(ValueError, match="correct_qk: mode must be none, diagonal or full"):
        g.correct_qk(head.W_q, head.W_k, head.W_q, head.W_k, mode="sideways")
    with pytest.raises(ValueError, match="AttentionHead: W_q must be float64 or float32"):
        g.AttentionHead(np.ones((4, 2), np.complex128), np.ones((4, 2)), np.ones((4, 2)), np.ones((2, 4)))
    with pytest.raises(AttributeError):
        g.SgdOptions(learning_rate=0.1)
    with pytest.raises(ValueError, match="kappa"):
        g.random_gl(rng, 3, kappa=0.5)


def test_float32_draw_is_the_float64_draw_cast():
    a = g.random_gl(g.Rng(42), 4, kappa=3.0)
    b = g.random_gl(g.Rng(42), 4, kappa=3.0, dtype=np.float32)
    assert b.dtype == np.float32 and np.array_equal(a.astype(np.float32), b)
    assert np.linalg.cond(a) == pytest.approx(3.0, rel=1e-9)
