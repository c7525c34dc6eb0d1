"""gaugelab.torch: each operator against the symmetry core (gaugelab's NumPy bindings of src/core) on the same
inputs in float64, the model-level functions against their invariants (GaugeFix keeps every logit, QK-Clip
brings the largest logit to tau), gradients of lrm_linear by torch.autograd.gradcheck, and the errors.
Runs in the torch venv only (skipped elsewhere with the reason); on CUDA too when a GPU is present."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="SKIPPED: gaugelab.torch needs PyTorch (the project's venv)")

from built_module import PACKAGE_DIR, import_gaugelab  # noqa: E402

g = import_gaugelab()
if not (PACKAGE_DIR / "gaugelab" / "torch" / "libgaugelab_torch_ops.so").exists():
    pytest.skip(f"SKIPPED: gaugelab.torch is not built in {PACKAGE_DIR} (configure with LibTorch)", allow_module_level=True)
import gaugelab.torch as gt  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
F64 = torch.float64


def rand(*shape, device="cpu", positive=False, seed=[0]):
    seed[0] += 1
    gen = torch.Generator().manual_seed(seed[0])
    x = torch.randn(*shape, generator=gen, dtype=F64)
    return (x.abs() + 0.2 if positive else x).to(device)


def npy(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_qk_gauge_fix_matches_the_core(device):
    H, d = 3, 12
    rq, rk, bq, bk = (rand(d, device=device, positive=True) for _ in range(4))
    fixed, gh = g.gauge_fix(g.QkMultipliers(H, npy(rq), npy(rk), npy(bq), npy(bk)), 1e-12)
    gg = torch.ops.gaugelab.qk_gauge_fix_(rq, rk, bq, bk, H, 1e-12)
    for ours, core in ((rq, fixed.r_q), (rk, fixed.r_k), (bq, fixed.b_q), (bk, fixed.b_k), (gg, gh)):
        np.testing.assert_allclose(npy(ours), np.asarray(core), rtol=1e-13, atol=1e-15)
    s_q, s_k = g.lrm_head_scales(npy(rq), npy(rk), H)
    np.testing.assert_allclose(npy(torch.ops.gaugelab.head_rms(rq, H)), s_q, rtol=1e-13)
    np.testing.assert_allclose(s_q, s_k, rtol=1e-12)  # drift 0


def _head(w_attn, w_proj, h, H):
    """Head h of a layer in the core's row-vector convention: W_q, W_k, W_v [d, dh], W_o [dh, d]."""
    d = w_attn.shape[1]
    dh = d // H
    rows = lambda part: npy(w_attn[part * d + h * dh: part * d + (h + 1) * dh]).T  # noqa: E731
    return rows(0), rows(1), rows(2), npy(w_proj[:, h * dh:(h + 1) * dh]).T


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("full", [True, False])
def test_quotient_correction_matches_the_core(device, full):
    H, d, lam = 2, 8, 1e-3
    w0, p0 = rand(3 * d, d, device=device), rand(d, d, device=device)
    mode = "full" if full else "diagonal"
    w_raw, p_raw = w0 + 0.1 * rand(3 * d, d, device=device), p0 + 0.1 * rand(d, d, device=device)
    w, p = w_raw.clone(), p_raw.clone()
    torch.ops.gaugelab.correct_attention_increments_(w, w0, p, p0, *([None] * 8), H, full, lam, True, False)
    for h in range(H):
        Wq, Wk, Wv, Wo = _head(w0, p0, h, H)
        Rq, Rk, Rv, Ro = _head(w_raw, p_raw, h, H)
        Cq, Ck, Cv, Co = _head(w, p, h, H)
        uq, uk = g.correct_qk(Wq, Wk, Rq - Wq, Rk - Wk, mode=mode, damping=lam)
        uv, uo = g.correct_vo(Wv, Wo, Rv - Wv, Ro - Wo, mode=mode, damping=lam)
        for ours, core in ((Cq - Wq, uq), (Ck - Wk, uk), (Cv - Wv, uv), (Co - Wo, uo)):
            np.testing.assert_allclose(ours, np.asarray(core), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_quotient_correction_with_multipliers_acts_on_the_effective_factors(device):
    """With multipliers the core's correction applies to the effective factors diag(r)·W̄·diag(c), and W̄ carries it:
    ΔW̄ = diag(r)⁻¹·Ũ_eff·diag(c)⁻¹ for the Q, K, V rows, the output projection's columns likewise."""
    H, d, lam = 2, 8, 1e-3
    m = [rand(d, device=device, positive=True) for _ in range(8)]  # r_q, c_q, r_k, c_k, r_v, c_v, r_o, c_o
    w0, p0 = rand(3 * d, d, device=device), rand(d, d, device=device)
    w_raw, p_raw = w0 + 0.1 * rand(3 * d, d, device=device), p0 + 0.1 * rand(d, d, device=device)
    w, p = w_raw.clone(), p_raw.clone()
    torch.ops.gaugelab.correct_attention_increments_(w, w0, p, p0, *m, H, True, lam, True, False)

    def eff(wa, pa):  # effective c_attn [3d, d] and c_proj [d, d]
        rows = torch.cat([m[0], m[2], m[4]])[:, None] * wa * torch.cat([m[1][None], m[3][None], m[5][None]]).repeat_interleave(d, 0)
        return rows, m[6][:, None] * pa * m[7][None, :]

    E0, P0 = eff(w0, p0)
    Er, Pr = eff(w_raw, p_raw)
    Ec, Pc = eff(w, p)
    for h in range(H):
        Wq, Wk, Wv, Wo = _head(E0, P0, h, H)
        Rq, Rk, Rv, Ro = _head(Er, Pr, h, H)
        Cq, Ck, Cv, Co = _head(Ec, Pc, h, H)
        uq, uk = g.correct_qk(Wq, Wk, Rq - Wq, Rk - Wk, mode="full", damping=lam)
        uv, uo = g.correct_vo(Wv, Wo, Rv - Wv, Ro - Wo, mode="full", damping=lam)
        for ours, core in ((Cq - Wq, uq), (Ck - Wk, uk), (Cv - Wv, uv), (Co - Wo, uo)):
            np.testing.assert_allclose(ours, np.asarray(core), rtol=1e-8, atol=1e-11)
    # match_rms (condition Erms): each head's corrected Q/K pair and V/O pair scaled by one factor per pair to the
    # pair's raw RMS in the stored coordinates; the direction within the pair is the plain correction's
    w_plain, p_plain = w.clone(), p.clone()
    w, p = w_raw.clone(), p_raw.clone()
    torch.ops.gaugelab.correct_attention_increments_(w, w0, p, p0, *m, H, True, lam, True, True)
    for h in range(H):
        got = [x - y for x, y in zip(_head(w, p, h, H), _head(w0, p0, h, H))]
        raw = [x - y for x, y in zip(_head(w_raw, p_raw, h, H), _head(w0, p0, h, H))]
        plain = [x - y for x, y in zip(_head(w_plain, p_plain, h, H), _head(w0, p0, h, H))]
        for pair in ((0, 1), (2, 3)):
            sq = lambda xs: sum(float(np.square(xs[i]).sum()) for i in pair)  # noqa: E731
            assert sq(got) == pytest.approx(sq(raw), rel=1e-10)
            f = math.sqrt(sq(got) / sq(plain))
            for i in pair:  # one factor for both members
                np.testing.assert_allclose(got[i], f * plain[i], rtol=1e-9, atol=1e-12)


def _bias(b, part, h, H):
    d = b.shape[0] // 3
    dh = d // H
    return npy(b[part * d + h * dh: part * d + (h + 1) * dh])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["exact", "approx"])
@pytest.mark.parametrize("bias", [False, True])
def test_gradient_projections_match_the_core(device, mode, bias):
    H, d = 2, 8
    w, p = rand(3 * d, d, device=device), rand(d, d, device=device)
    gw, gp = rand(3 * d, d, device=device), rand(d, d, device=device)
    b, gb = (rand(3 * d, device=device), rand(3 * d, device=device)) if bias else (None, None)
    gw0, gp0, gb0 = gw.clone(), gp.clone(), None if gb is None else gb.clone()
    torch.ops.gaugelab.project_layer_gradients_(w, b, p, gw, gb, gp, H, mode)
    core_fn = g.head_horizontal_projection if mode == "exact" else g.head_horizontal_projection_approx
    for h in range(H):
        biases = lambda t: [_bias(t, i, h, H) for i in range(3)] if bias else []  # noqa: E731
        core = core_fn(g.AttentionHead(*_head(w, p, h, H), *biases(b)), g.AttentionHead(*_head(gw0, gp0, h, H), *biases(gb0)))
        ours = list(_head(gw, gp, h, H)) + biases(gb)
        theirs = [core.W_q, core.W_k, core.W_v, core.W_o] + ([core.b_q, core.b_k, core.b_v] if bias else [])
        for o, c in zip(ours, theirs):
            np.testing.assert_allclose(o, np.asarray(c), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_transport_moves_moments_as_vectors_or_covectors(device):
    H, d = 2, 6
    a = rand(H, device=device, positive=True)
    m, v = rand(d, device=device), rand(d, device=device, positive=True)
    per = a.repeat_interleave(d // H)
    for mode, f in (("vector", per), ("covector", 1 / per)):
        mm, vv = m.clone(), v.clone()
        torch.ops.gaugelab.transport_head_moments_(mm, vv, a, H, mode)
        torch.testing.assert_close(mm, m * f)
        torch.testing.assert_close(vv, v * f * f)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("r,c", [(False, False), (True, False), (False, True), (True, "groups")])
def test_lrm_linear_gradcheck_and_value(device, r, c):
    out, inp = 6, 4
    x = rand(2, 3, inp, device=device).requires_grad_()
    w = rand(out, inp, device=device).requires_grad_()
    b = rand(out, device=device).requires_grad_()
    rr = rand(out, device=device, positive=True).requires_grad_() if r else None
    cc = (rand(3, inp, device=device, positive=True) if c == "groups" else rand(inp, device=device, positive=True)
          ).requires_grad_() if c else None
    args = (x, w, b, rr, cc)
    assert torch.autograd.gradcheck(torch.ops.gaugelab.lrm_linear, args, eps=1e-6, atol=1e-8)
    eff = w * (rr[:, None] if r else 1)
    if c == "groups":
        eff = (eff.view(3, 2, inp) * cc[:, None, :]).view(out, inp)
    elif c:
        eff = eff * cc[None, :]
    torch.testing.assert_close(torch.ops.gaugelab.lrm_linear(*args), x @ eff.T + b)


class TinyAttention(torch.nn.Module):
    """nanoGPT's CausalSelfAttention, biases on (so GaugeFix must move b_Q, b_K with r_Q, r_K)."""

    def __init__(self, d=8, n_head=2):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d), n_head

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = (t.view(B, T, self.n_head, d // self.n_head).transpose(1, 2) for t in self.c_attn(x).split(d, 2))
        return self.c_proj(torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                           .transpose(1, 2).reshape(B, T, d)), (q @ k.transpose(-1, -2))


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = TinyAttention()

    def forward(self, x):
        return self.attn(x)


def tiny(device):
    torch.manual_seed(0)
    m = gt.add_multipliers(Tiny().to(device, F64), sites={"attn.c_attn": ("q", "k", "v"), "attn.c_proj": "attn_out"})
    with torch.no_grad():  # an unbalanced start: every multiplier away from 1
        for name, p in m.named_parameters():
            if name.split(".")[-1][0] in "rc":
                p.mul_(torch.rand_like(p) * 3 + 0.1)
    return m


@pytest.mark.parametrize("device", DEVICES)
def test_gauge_fix_keeps_every_logit_and_balances_each_head(device):
    m = tiny(device)
    x = rand(2, 5, 8, device=device)
    y0, s0 = m(x)
    before = gt.head_stats(m)
    assert before["drift"].max() > 0.1
    ops = torch.ops.gaugelab
    assert (ops.head_rms(m.attn.c_attn.r_v, 2) / ops.head_rms(m.attn.c_proj.c, 2)).log().abs().max() > 0.05
    gt.gauge_fix_(m, vo=True)
    y1, s1 = m(x)
    torch.testing.assert_close(s1, s0, rtol=1e-12, atol=1e-12)  # every logit q·k
    torch.testing.assert_close(y1, y0, rtol=1e-12, atol=1e-12)  # and the output (V/O fix too)
    after = gt.head_stats(m)
    assert after["drift"].max() < 1e-12
    ops = torch.ops.gaugelab  # the V/O pair balanced too: s_V = s_O per head
    torch.testing.assert_close(ops.head_rms(m.attn.c_attn.r_v, 2), ops.head_rms(m.attn.c_proj.c, 2), rtol=1e-12, atol=0)
    gt.gauge_fix_(m, mode="effective")
    assert gt.head_stats(m)["rho"].abs().max() < 1e-12
    torch.testing.assert_close(m(x)[1], s0, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_qk_clip_brings_the_largest_logit_to_tau(device):
    m = tiny(device)
    x = rand(2, 5, 8, device=device)
    before = gt.attention_logit_max(m, x)
    tau = float(before.min()) * 0.5
    assert gt.qk_clip_(m, tau, idx=x) == before.numel()
    # the logits are measured in float32, as the trainer logs them: float32 rounding, not float64's
    torch.testing.assert_close(gt.attention_logit_max(m, x), torch.full_like(before, tau), rtol=1e-6, atol=0)
    assert gt.qk_clip_(m, tau * 1.01, idx=x) == 0  # under tau: untouched


def test_param_groups_follow_the_conditions_table():
    m = tiny("cpu")
    for cond, qk_decay in (("A", 2e-3), ("B", 0.0), ("C", 0.0)):
        groups = {grp["name"]: grp for grp in gt.param_groups(m, cond)}
        assert groups["multipliers_qk"]["weight_decay"] == qk_decay
        assert groups["multipliers_other"]["weight_decay"] == 2e-3
        assert groups["matrices"]["weight_decay"] == 0.1 and groups["biases_norms"]["weight_decay"] == 0.0
        names = {n for n, p in m.named_parameters() if any(p is q for q in groups["multipliers_qk"]["params"])}
        assert names == {"attn.c_attn.r_q", "attn.c_attn.r_k"}
    assert set(gt.conditions()) >= {"A", "B", "C", "E", "Dcap", "QKclip", "Beff"}


def test_errors_are_one_line_value_errors():
    with pytest.raises(ValueError, match=r"^gaugelab.qk_gauge_fix_: heads must divide the width 6 \(got 4\)$"):
        torch.ops.gaugelab.qk_gauge_fix_(torch.ones(6), torch.ones(6), None, None, 4, 1e-12)
    with pytest.raises(ValueError, match="condition must be one of A, B"):
        gt.param_groups(tiny("cpu"), "Z")
    with pytest.raises(ValueError, match="needs row multipliers on q and k"):
        gt.gauge_fix_(gt.add_multipliers(Tiny(), "q:column,k:column", sites={"attn.c_attn": ("q", "k", "v")}))
    with pytest.raises(ImportError, match=r"built against torch 2\.11\.0 but this Python imports torch 2\.15\.0\+cu130"):
        gt.check_torch_version("2.11.0", "2.15.0+cu130")
    gt.check_torch_version(torch.__version__.split("+")[0], torch.__version__)


def test_gauge_fix_transports_the_adam_state_of_the_moved_multipliers():
    m = tiny("cpu")
    opt = torch.optim.AdamW(gt.param_groups(m, "B"), lr=1e-2)
    y, s = m(rand(2, 5, 8))
    (y.square().sum() + s.sum()).backward()
    opt.step()
    rq, bias = m.attn.c_attn.r_q, m.attn.c_attn.bias
    m0, v0, mb0 = (opt.state[rq]["exp_avg"].clone(), opt.state[rq]["exp_avg_sq"].clone(),
                   opt.state[bias]["exp_avg"].clone())
    g = gt.gauge_fix_(m, optimizer=opt, transport="vector")[0].repeat_interleave(4)  # [d]
    torch.testing.assert_close(opt.state[rq]["exp_avg"], m0 / g)          # r_Q moved by 1/g: m·a, a = 1/g
    torch.testing.assert_close(opt.state[rq]["exp_avg_sq"], v0 / g ** 2)
    torch.testing.assert_close(opt.state[bias]["exp_avg"][8:16], mb0[8:16] * g)  # b_K's moments by g
    torch.testing.assert_close(opt.state[bias]["exp_avg"][16:], mb0[16:])        # b_V's untouched


@pytest.mark.parametrize("cond", ["P", "Pa"])
def test_projection_conditions_leave_projected_gradients_for_the_step(cond):
    torch.manual_seed(1)
    m = Tiny().to(dtype=F64)  # the projections need attention without multipliers
    opt = torch.optim.SGD(m.parameters(), lr=0.0)  # lr 0: the step leaves the weights, the hook the gradients
    gt.attach(opt, m, cond)
    y, s = m(rand(2, 5, 8))
    # a gauge-invariant loss has horizontal gradients already (seed 001 Prop. 38): add a term that is not
    (y.square().sum() + s.sum() + m.attn.c_attn.weight[:8].sum()).backward()
    raw = m.attn.c_attn.weight.grad.clone()
    opt.step()
    projected = m.attn.c_attn.weight.grad.clone()
    assert (projected - raw).abs().max() > 1e-6  # the vertical part was removed
    if cond == "P":  # the exact projection is idempotent
        gt.project_gradients_(m, "exact")
        torch.testing.assert_close(m.attn.c_attn.weight.grad, projected, rtol=1e-9, atol=1e-11)
    with pytest.raises(ValueError, match="without multipliers"):
        gt.attach(opt, tiny("cpu"), cond)


@pytest.mark.parametrize("device", DEVICES)
def test_cap_limits_the_scale_product_and_keeps_the_ratio(device):
    m = tiny(device)
    before = gt.head_stats(m)
    prod, ratio = before["s_q"] * before["s_k"], before["s_q"] / before["s_k"]
    cap = float(prod.median())
    n = gt.qk_cap_(m, cap)
    after = gt.head_stats(m)
    assert n == int((prod > cap).sum()) >= 1
    torch.testing.assert_close(after["s_q"] * after["s_k"], prod.clamp_max(cap), rtol=1e-12, atol=0)
    torch.testing.assert_close(after["s_q"] / after["s_k"], ratio, rtol=1e-12, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_effective_fix_returns_the_norm_ratio_and_logit_max_is_the_causal_maximum(device):
    m = tiny(device)
    L = gt.attention_layers(m)[0]
    nq = L.effective(0).view(2, -1).norm(dim=1)
    nk = L.effective(1).view(2, -1).norm(dim=1)
    g_eff = gt.gauge_fix_(m, mode="effective")[0]
    torch.testing.assert_close(g_eff, ((nq + 1e-12) / (nk + 1e-12)).sqrt(), rtol=1e-12, atol=0)
    x = rand(2, 5, 8, device=device)
    _, scores = m(x)                                   # q·kᵀ [B, H, T, T], before the 1/√d_h scale
    causal = torch.ones(5, 5, dtype=torch.bool, device=device).tril()
    s = scores / 2.0                                   # d_h = 4
    expect = s.masked_fill(~causal, -float("inf")).amax((0, 2, 3))
    expect_abs = s.abs().masked_fill(~causal, 0).amax((0, 2, 3))
    torch.testing.assert_close(gt.attention_logit_max(m, x)[0].double(), expect, rtol=1e-6, atol=0)
    torch.testing.assert_close(gt.attention_logit_max(m, x, absolute=True)[0].double(), expect_abs, rtol=1e-6, atol=0)
