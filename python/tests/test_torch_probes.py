"""The misuse probes of gaugelab.torch, one table (like PyTorch's OpInfo error inputs): each row a call a user
might make by mistake and the one-line error it must raise. The contract: a ValueError or TypeError
"gaugelab.<function>: <argument> must be ... (got ...)" naming the argument, raised before anything moves
(every probe checks that the model's parameters, the optimizer's state and its hooks are as they were),
never a silent wrong result or an error from deep inside torch; an in-place operator's write to a leaf
that requires grad raises torch's own RuntimeError, as torch's in-place operators do. Beside the table, the
good calls next to each probe pass. `python test_torch_probes.py` prints each probe's outcome and the
count off contract (GAUGELAB_BUILD_DIR picks the build). Venv only (needs torch)."""
from __future__ import annotations

import copy
import math
import re
import sys
from dataclasses import dataclass
from typing import Callable

import pytest

torch = pytest.importorskip("torch", reason="SKIPPED: gaugelab.torch needs PyTorch (the project's venv)")

from built_module import PACKAGE_DIR, import_gaugelab  # noqa: E402

import_gaugelab()
if not (PACKAGE_DIR / "gaugelab" / "torch" / "libgaugelab_torch_ops.so").exists():
    pytest.skip(f"SKIPPED: gaugelab.torch is not built in {PACKAGE_DIR} (configure with LibTorch)", allow_module_level=True)
import gaugelab.torch as gt  # noqa: E402
from gaugelab.torch.nanogpt import NanoGPT  # noqa: E402

nn = torch.nn
D = 8
LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation."


class Attention(nn.Module):
    """nanoGPT's CausalSelfAttention with biases; q_norm/k_norm (RMSNorm) when qk_norm."""

    def __init__(self, n_head: int, qk_norm: bool):
        super().__init__()
        self.c_attn, self.c_proj, self.n_head = nn.Linear(D, 3 * D), nn.Linear(D, D), n_head
        if qk_norm:
            self.q_norm, self.k_norm = nn.RMSNorm(D // n_head), nn.RMSNorm(D // n_head)

    def forward(self, x):  # x [B, T, d]
        B, T, d = x.shape
        q, k, v = (t.view(B, T, self.n_head, d // self.n_head).transpose(1, 2) for t in self.c_attn(x).split(d, 2))
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, d))


class Block(nn.Module):
    def __init__(self, n_head: int, qk_norm: bool):
        super().__init__()
        self.attn = Attention(n_head, qk_norm)

    def forward(self, x):
        return x + self.attn(x)


class Model(nn.Module):
    def __init__(self, n_layer: int = 2, n_head: int = 2, qk_norm: bool = False):
        super().__init__()
        self.h = nn.ModuleList(Block(n_head, qk_norm) for _ in range(n_layer))

    def forward(self, x):
        for b in self.h:
            x = b(x)
        return x


class World:
    """A fresh two-layer model (float32 by default) with multipliers at `placement` moved off balance, an
    AdamW over it after one step (so that it has state), and a batch x [2, 5, d]. Each kind is built once
    and copied for every probe (a copy takes ~3 ms, a build ~50 ms)."""

    built: dict = {}

    def __init__(self, placement: str | None = "default", dtype=torch.float32, qk_norm: bool = False):
        key = (placement, dtype, qk_norm)
        if key not in World.built:
            World.built[key] = self.build(*key)
        m, opt_state, x = World.built[key]
        self.m, self.x = copy.deepcopy(m), x.clone()
        self.opt = torch.optim.AdamW(self.m.parameters(), lr=1e-2)
        self.opt.load_state_dict(copy.deepcopy(opt_state))

    @staticmethod
    def build(placement, dtype, qk_norm):
        torch.manual_seed(0)
        m = Model(qk_norm=qk_norm).to(dtype)
        if placement:
            gt.add_multipliers(m, placement)
            with torch.no_grad():
                for name, p in m.named_parameters():
                    if name.split(".")[-1][0] in "rc":
                        p.mul_(torch.rand_like(p) * 3 + 0.1)
        x = torch.randn(2, 5, D, dtype=dtype)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
        m(x).square().sum().backward()
        opt.step()
        opt.zero_grad()
        return m, opt.state_dict(), x

    @property
    def attn(self):
        return self.m.h[0].attn

    def state(self) -> list:
        """Everything a refused call must leave as it was: parameters, optimizer moments, hook counts."""
        moments = [t for s in self.opt.state.values() for t in s.values() if isinstance(t, torch.Tensor)]
        return ([t.detach().clone() for t in list(self.m.parameters()) + moments],
                len(self.opt._optimizer_step_pre_hooks), len(self.opt._optimizer_step_post_hooks))


def plain():
    return World(placement=None)


def f32(*shape, value=1.0):
    return torch.full(shape, value)


def long(*shape):
    return torch.ones(shape, dtype=torch.long)


def tiny_gpt(**cfg):
    return {"n_layer": 1, "n_head": 2, "n_embd": D, "block_size": 6, "vocab_size": 11, **cfg}


def with_heads(n):
    def make():
        w = World()
        w.attn.n_head = n
        return w
    return make


def zero_head():
    w = World()
    with torch.no_grad():
        w.attn.c_attn.r_q[:D // 2] = 0  # head 0 of layer 0: s_Q = 0
    return w


def grad_leaf(*shape):
    return torch.ones(shape, requires_grad=True)


@dataclass
class Probe:
    id: str
    call: Callable   # call(world)
    exc: type        # the exception it must raise
    message: str     # its whole message
    world: Callable = World
    torch_rule: bool = False  # torch's own in-place error: a RuntimeError with torch's message

    def arg(self) -> str:
        """The argument the message names: '<function>: <argument> must'."""
        m = re.match(r"gaugelab\.[\w.]+: (.+?) (must|needs|is)\b", self.message)
        return m.group(1) if m else ""


ops = torch.ops.gaugelab
P = Probe
PROBES = [
    # the attention modules' head count (attention_layers, and every function through it)
    P("n_head-0", lambda w: gt.head_stats(w.m), ValueError,
      "gaugelab.torch: h.0.attn.n_head must be an integer >= 1 (got 0)", with_heads(0)),
    P("n_head-negative", lambda w: gt.gauge_fix_(w.m), ValueError,
      "gaugelab.torch: h.0.attn.n_head must be an integer >= 1 (got -2)", with_heads(-2)),
    P("n_head-float", lambda w: gt.head_stats(w.m), TypeError,
      "gaugelab.torch: h.0.attn.n_head must be an integer >= 1 (got 2.5)", with_heads(2.5)),
    P("n_head-argument-0", lambda w: gt.attention_layers(w.m, n_head=0), ValueError,
      "gaugelab.torch: n_head must be an integer >= 1 (got 0)"),
    P("model-not-a-module", lambda w: gt.attention_layers("model"), TypeError,
      "gaugelab.torch: model must be a torch.nn.Module (got str 'model')"),
    P("nanogpt-n_head-0", lambda w: NanoGPT(tiny_gpt(n_head=0)), ValueError,
      "gaugelab.NanoGPT: cfg['n_head'] must be an integer >= 1 (got 0)"),
    P("nanogpt-n_head-not-dividing", lambda w: NanoGPT(tiny_gpt(n_head=3)), ValueError,
      "gaugelab.NanoGPT: cfg['n_head'] must be a divisor of n_embd 8 (got 3)"),
    P("nanogpt-missing-key", lambda w: NanoGPT({"n_layer": 1}), ValueError,
      "gaugelab.NanoGPT: cfg must be a dict with n_layer, n_head, n_embd, block_size, vocab_size (got keys n_layer)"),
    # the batch of token ids
    P("nanogpt-idx-1d", lambda w: NanoGPT(tiny_gpt())(torch.arange(4)), ValueError,
      "gaugelab.NanoGPT: idx must be [B, T] with B >= 1 and 1 <= T <= block_size 6 (got shape [4])"),
    P("nanogpt-idx-empty", lambda w: NanoGPT(tiny_gpt())(torch.zeros(1, 0, dtype=torch.long)), ValueError,
      "gaugelab.NanoGPT: idx must be [B, T] with B >= 1 and 1 <= T <= block_size 6 (got shape [1, 0])"),
    P("nanogpt-idx-too-long", lambda w: NanoGPT(tiny_gpt())(torch.zeros(1, 7, dtype=torch.long)), ValueError,
      "gaugelab.NanoGPT: idx must be [B, T] with B >= 1 and 1 <= T <= block_size 6 (got shape [1, 7])"),
    P("nanogpt-idx-float", lambda w: NanoGPT(tiny_gpt())(torch.zeros(1, 3)), TypeError,
      "gaugelab.NanoGPT: idx must be an integer tensor [B, T] of token ids (got torch.float32)"),
    P("logit-max-idx-1d", lambda w: gt.attention_logit_max(w.m, w.x[0, 0]), ValueError,
      "gaugelab.attention_logit_max: idx must be a batch [B, T] with B, T >= 1 (got shape [8])"),
    P("logit-max-idx-empty", lambda w: gt.attention_logit_max(w.m, w.x[:, :0]), ValueError,
      "gaugelab.attention_logit_max: idx must be a batch [B, T] with B, T >= 1 (got shape [2, 0, 8])"),
    P("logit-max-idx-list", lambda w: gt.attention_logit_max(w.m, [[1, 2]]), TypeError,
      "gaugelab.attention_logit_max: idx must be a tensor [B, T] (got list [[1, 2]])"),
    P("logit-max-absolute-str", lambda w: gt.attention_logit_max(w.m, w.x, absolute="yes"), TypeError,
      "gaugelab.attention_logit_max: absolute must be True or False (got str 'yes')"),
    P("head-stats-idx-1d", lambda w: gt.head_stats(w.m, idx=w.x[0, 0]), ValueError,
      "gaugelab.head_stats: idx must be a batch [B, T] with B, T >= 1 (got shape [8])"),
    P("qk-clip-idx-empty", lambda w: gt.qk_clip_(w.m, 1.0, idx=w.x[:0]), ValueError,
      "gaugelab.qk_clip_: idx must be a batch [B, T] with B, T >= 1 (got shape [0, 5, 8])"),
    # attach: every argument and what the condition needs of the model, checked when it registers
    P("attach-every-0", lambda w: gt.attach(w.opt, w.m, "B", every=0), ValueError,
      "gaugelab.attach: every must be an integer >= 1 (got 0)"),
    P("attach-every-negative", lambda w: gt.attach(w.opt, w.m, "B", every=-2), ValueError,
      "gaugelab.attach: every must be an integer >= 1 (got -2)"),
    P("attach-every-float", lambda w: gt.attach(w.opt, w.m, "B", every=1.5), TypeError,
      "gaugelab.attach: every must be an integer >= 1 (got 1.5)"),
    P("attach-eps-nan", lambda w: gt.attach(w.opt, w.m, "B", eps=math.nan), ValueError,
      "gaugelab.attach: eps must be finite and >= 0 (got nan)"),
    P("attach-eps-negative", lambda w: gt.attach(w.opt, w.m, "B", eps=-1e-12), ValueError,
      "gaugelab.attach: eps must be finite and >= 0 (got -1e-12)"),
    P("attach-eps-1e300", lambda w: gt.attach(w.opt, w.m, "B", eps=1e300), ValueError,
      "gaugelab.attach: eps must be at most 3.40282e+38, the largest float32 (got 1e+300)"),
    P("attach-Q-without-qk-norm", lambda w: gt.attach(w.opt, w.m, "Q"), ValueError,
      "gaugelab.attach: condition Q needs QK-norm in the model, which attach cannot add: attention module "
      "'h.0.attn' holds no norm layer and no qk_norm = True (build the model with QK-norm, or train this one as "
      "condition C)"),
    P("attach-N-with-multipliers", lambda w: gt.attach(w.opt, w.m, "N"), ValueError,
      "gaugelab.attach: condition N needs a model without multipliers (h.0.attn.c_attn is an LRMLinear)"),
    P("attach-B-without-rows", lambda w: gt.attach(w.opt, w.m, "B"), ValueError,
      "gaugelab.attach: condition B: needs row multipliers on q and k (layer h.0.attn; add_multipliers(model) "
      "places them)", lambda: World("q:column,k:column")),
    P("attach-B-vo-without-vo-multipliers", lambda w: gt.attach(w.opt, w.m, "B", vo=True), ValueError,
      "gaugelab.attach: vo needs row multipliers on v and column multipliers on the output projection "
      "(layer h.0.attn)", lambda: World("q:row,k:row")),
    P("attach-transport-unknown", lambda w: gt.attach(w.opt, w.m, "B", transport="vectors"), ValueError,
      "gaugelab.attach: transport must be one of none, vector, covector (got 'vectors')"),
    P("attach-cap-0", lambda w: gt.attach(w.opt, w.m, "Dcap", cap=0), ValueError,
      "gaugelab.attach: cap must be finite and > 0 (got 0)"),
    P("attach-cap-nan", lambda w: gt.attach(w.opt, w.m, "Dcap", cap=math.nan), ValueError,
      "gaugelab.attach: cap must be finite and > 0 (got nan)"),
    P("attach-tau-negative", lambda w: gt.attach(w.opt, w.m, "QKclip", tau=-1.0, batch=lambda: w.x), ValueError,
      "gaugelab.attach: tau must be finite and > 0 (got -1)"),
    P("attach-batch-missing", lambda w: gt.attach(w.opt, w.m, "QKclip"), ValueError,
      "gaugelab.attach: batch must be a callable that returns the step's batch (QK-Clip measures the logits on it) "
      "(got NoneType None)"),
    P("attach-batch-not-callable", lambda w: gt.attach(w.opt, w.m, "QKclip", batch=torch.zeros(1)), TypeError,
      "gaugelab.attach: batch must be a callable that returns the step's batch (QK-Clip measures the logits on it) "
      "(got Tensor tensor([0.]))"),
    P("attach-clip-on-unknown", lambda w: gt.attach(w.opt, w.m, "QKclip", clip_on="multiplier", batch=lambda: w.x),
      ValueError, "gaugelab.attach: clip_on must be one of weights, multipliers (got 'multiplier')"),
    P("attach-quotient-unknown", lambda w: gt.attach(w.opt, w.m, "E", quotient="fulll"), ValueError,
      "gaugelab.attach: quotient must be one of full, diagonal (got 'fulll')"),
    P("attach-quotient-every-0", lambda w: gt.attach(w.opt, w.m, "E", quotient_every=0), ValueError,
      "gaugelab.attach: quotient_every must be an integer >= 1 (got 0)"),
    P("attach-damping-negative", lambda w: gt.attach(w.opt, w.m, "E", damping=-1.0), ValueError,
      "gaugelab.attach: damping must be finite and >= 0 (got -1)"),
    P("attach-damping-inf", lambda w: gt.attach(w.opt, w.m, "E", damping=math.inf), ValueError,
      "gaugelab.attach: damping must be finite and >= 0 (got inf)"),
    P("attach-not-an-optimizer", lambda w: gt.attach(None, w.m, "B"), TypeError,
      "gaugelab.attach: optimizer must be a torch.optim.Optimizer (got NoneType None)"),
    P("attach-condition-unknown", lambda w: gt.attach(w.opt, w.m, "Z"), ValueError,
      "gaugelab.torch: condition must be one of A, B, C, D, Dcap, E, Q, QKclip, N, P, Pa, Pu, Pau, Beff, Erms "
      "(got 'Z')"),
    # gauge_fix_: eps by the core binding's rule, every layer checked before any moves
    P("gauge-fix-eps-nan", lambda w: gt.gauge_fix_(w.m, eps=math.nan), ValueError,
      "gaugelab.gauge_fix_: eps must be finite and >= 0 (got nan)"),
    P("gauge-fix-eps-negative", lambda w: gt.gauge_fix_(w.m, eps=-1.0), ValueError,
      "gaugelab.gauge_fix_: eps must be finite and >= 0 (got -1)"),
    P("gauge-fix-eps-1e300", lambda w: gt.gauge_fix_(w.m, eps=1e300), ValueError,
      "gaugelab.gauge_fix_: eps must be at most 3.40282e+38, the largest float32 (got 1e+300)"),
    P("gauge-fix-eps-str", lambda w: gt.gauge_fix_(w.m, eps="1e-12"), TypeError,
      "gaugelab.gauge_fix_: eps must be a number, finite and >= 0 (got str '1e-12')"),
    P("gauge-fix-eps-0-zero-head", lambda w: gt.gauge_fix_(w.m, eps=0.0), ValueError,
      "gaugelab.gauge_fix_: eps must be > 0 where a head's Q or K multipliers are all zero (its factor would be "
      "0/0 or x/0) (got 0)", zero_head),
    P("gauge-fix-vo-without-vo-multipliers", lambda w: gt.gauge_fix_(w.m, vo=True), ValueError,
      "gaugelab.gauge_fix_: vo needs row multipliers on v and column multipliers on the output projection "
      "(layer h.0.attn)", lambda: World("q:row,k:row")),
    P("gauge-fix-mode-unknown", lambda w: gt.gauge_fix_(w.m, mode="heads"), ValueError,
      "gaugelab.gauge_fix_: mode must be one of head, effective (got 'heads')"),
    P("gauge-fix-optimizer-not-one", lambda w: gt.gauge_fix_(w.m, optimizer="adam", transport="vector"), TypeError,
      "gaugelab.gauge_fix_: optimizer must be a torch.optim.Optimizer (got str 'adam')"),
    # offset_qk_gauge_
    P("offset-sigma-1e308", lambda w: gt.offset_qk_gauge_(w.m, 1e308, torch.Generator().manual_seed(0)), ValueError,
      "gaugelab.offset_qk_gauge_: sigma must be small enough that every factor exp(sigma*z) and the moved "
      "multipliers stay finite and nonzero in float32 (got 1e+308, a factor inf in layer h.0.attn)"),
    P("offset-sigma-200-float32", lambda w: gt.offset_qk_gauge_(w.m, 200.0, torch.Generator().manual_seed(0)),
      ValueError, "gaugelab.offset_qk_gauge_: sigma must be small enough that every factor exp(sigma*z) and the "
      "moved multipliers stay finite and nonzero in float32 (got 200, a factor 7.06678e+133 in layer h.0.attn)"),
    P("offset-sigma-nan", lambda w: gt.offset_qk_gauge_(w.m, math.nan), ValueError,
      "gaugelab.offset_qk_gauge_: sigma must be finite and >= 0 (got nan)"),
    P("offset-sigma-str", lambda w: gt.offset_qk_gauge_(w.m, "0.5"), TypeError,
      "gaugelab.offset_qk_gauge_: sigma must be a number, finite and >= 0 (got str '0.5')"),
    P("offset-generator-int", lambda w: gt.offset_qk_gauge_(w.m, 0.5, 42), TypeError,
      "gaugelab.offset_qk_gauge_: generator must be a torch.Generator or None (got 42)"),
    # the cap and QK-Clip
    P("cap-0", lambda w: gt.qk_cap_(w.m, 0.0), ValueError, "gaugelab.qk_cap_: cap must be finite and > 0 (got 0)"),
    P("cap-str", lambda w: gt.qk_cap_(w.m, "4"), TypeError,
      "gaugelab.qk_cap_: cap must be a number, finite and > 0 (got str '4')"),
    P("qk-clip-tau-str", lambda w: gt.qk_clip_(w.m, "100", idx=w.x), TypeError,
      "gaugelab.qk_clip_: tau must be a number, finite and > 0 (got str '100')"),
    P("qk-clip-logit-max-list", lambda w: gt.qk_clip_(w.m, 1.0, logit_max=[[1.0, 2.0], [1.0, 2.0]]), TypeError,
      "gaugelab.qk_clip_: logit_max must be a tensor [2, 2] (got list [[1.0, 2.0], [1.0, 2.0]])"),
    P("qk-clip-logit-max-inf", lambda w: gt.qk_clip_(w.m, 1.0, logit_max=torch.full((2, 2), math.inf)), ValueError,
      "gaugelab.qk_clip_: logit_max must be finite (an inf or NaN logit would scale the head to zero or NaN) "
      "(got a non-finite entry)"),
    # add_multipliers
    P("add-multipliers-twice", lambda w: gt.add_multipliers(w.m), ValueError,
      "gaugelab.add_multipliers: the model already has multipliers (h.0.attn.c_attn is an LRMLinear); call "
      "add_multipliers once, before making the optimizer"),
    P("add-multipliers-spec-int", lambda w: gt.add_multipliers(w.m, 3), TypeError,
      "gaugelab.add_multipliers: spec must be a placement string (default, none, q:row+column,k:row, ...) (got 3)",
      plain),
    P("add-multipliers-site-unknown", lambda w: gt.add_multipliers(w.m, sites={"attn.c_attn": "qkv"}), ValueError,
      "gaugelab.add_multipliers: sites['attn.c_attn'] must be a site among attn_out, k, lm_head, mlp_in, mlp_out, q, "
      "v or a tuple of them (got 'qkv')", plain),
    P("add-multipliers-model-none", lambda w: gt.add_multipliers(None), TypeError,
      "gaugelab.add_multipliers: model must be a torch.nn.Module (got NoneType None)"),
    # param_groups: torch.optim validates its defaults, not the groups' own values
    P("param-groups-weight-decay-negative", lambda w: gt.param_groups(w.m, "B", weight_decay=-0.1), ValueError,
      "gaugelab.param_groups: weight_decay must be finite and >= 0 (got -0.1)"),
    P("param-groups-lr-scale-negative", lambda w: gt.param_groups(w.m, "B", multiplier_lr_scale=-1.0, lr=1e-3),
      ValueError, "gaugelab.param_groups: multiplier_lr_scale must be finite and > 0 (got -1)"),
    P("param-groups-lr-nan", lambda w: gt.param_groups(w.m, "B", lr=math.nan), ValueError,
      "gaugelab.param_groups: lr must be finite and >= 0 (got nan)"),
    # the quotient correction and the projections, checked when the hooks are registered
    P("quotient-every-float", lambda w: gt.quotient_correction(w.opt, w.m, every=2.5), TypeError,
      "gaugelab.quotient_correction: every must be an integer >= 1 (got 2.5)"),
    P("quotient-damping-negative", lambda w: gt.quotient_correction(w.opt, w.m, damping=-1.0), ValueError,
      "gaugelab.quotient_correction: damping must be finite and >= 0 (got -1)"),
    P("projection-hook-mode-unknown", lambda w: gt.projection_hook(w.opt, w.m, "exactt", "update"), ValueError,
      "gaugelab.projection_hook: mode must be one of exact, approx (got 'exactt')", plain),
    P("project-gradients-mode-unknown", lambda w: gt.project_gradients_(w.m, "x"), ValueError,
      "gaugelab.project_gradients_: mode must be one of exact, approx (got 'x')", plain),
    # the operators: integer tensors refused by name
    P("op-head-rms-long", lambda w: ops.head_rms(long(4), 2), ValueError,
      "gaugelab.head_rms: x must be a floating-point tensor (got Long)"),
    P("op-lrm-linear-long", lambda w: ops.lrm_linear(long(2, 4), long(3, 4)), ValueError,
      "gaugelab.lrm_linear: x must be a floating-point tensor (got Long)"),
    P("op-gauge-fix-long", lambda w: ops.qk_gauge_fix_(long(4), long(4), None, None, 2, 1e-12), ValueError,
      "gaugelab.qk_gauge_fix_: r_q must be a floating-point tensor (got Long)"),
    P("op-logit-max-long", lambda w: ops.attention_logit_max(long(1, 2, 3, 4), long(1, 2, 3, 4)), ValueError,
      "gaugelab.attention_logit_max: q must be a floating-point tensor (got Long)"),
    P("op-transport-int", lambda w: ops.transport_head_moments_(f32(4), None, torch.ones(2, dtype=torch.int32), 2,
                                                                "vector"), ValueError,
      "gaugelab.transport_head_moments_: a must be a floating-point tensor (got Int)"),
    P("op-effective-weight-bool", lambda w: ops.lrm_effective_weight(torch.ones(2, 2, dtype=torch.bool)), ValueError,
      "gaugelab.lrm_effective_weight: weight must be a floating-point tensor (got Bool)"),
    # the operators' eps, as gauge_fix_'s
    P("op-gauge-fix-eps-nan", lambda w: ops.qk_gauge_fix_(f32(4), f32(4, value=2.0), None, None, 2, math.nan),
      ValueError, "gaugelab.qk_gauge_fix_: eps must be finite and >= 0 (got nan)"),
    P("op-gauge-fix-eps-1e300", lambda w: ops.qk_gauge_fix_(f32(4), f32(4, value=2.0), None, None, 2, 1e300),
      ValueError, "gaugelab.qk_gauge_fix_: eps must be at most 3.40282e+38, the largest float32 (got 1e+300)"),
    P("op-vo-fix-eps-negative", lambda w: ops.vo_gauge_fix_(f32(4), None, f32(4), 2, -1.0), ValueError,
      "gaugelab.vo_gauge_fix_: eps must be finite and >= 0 (got -1)"),
    P("op-effective-fix-eps-0-zero-head",
      lambda w: ops.qk_gauge_fix_effective_(f32(4), f32(4), None, None, torch.zeros(4, 3), f32(4, 3), 2, 0.0),
      ValueError, "gaugelab.qk_gauge_fix_effective_: eps must be > 0 where a head's Q or K multipliers are all zero "
      "(its factor would be 0/0 or x/0) (got 0)"),
    # in-place operators on tensors that require grad, with grad mode on: torch's own rule
    P("op-gauge-fix-leaf", lambda w: ops.qk_gauge_fix_(grad_leaf(4), grad_leaf(4), None, None, 2, 1e-12), RuntimeError,
      LEAF, torch_rule=True),
    P("op-rescale-view-of-leaf", lambda w: ops.rescale_qk_pair_(f32(4), f32(4), grad_leaf(8)[:4], None, f32(4)),
      RuntimeError, VIEW_OF_LEAF, torch_rule=True),
    P("op-cap-leaf", lambda w: ops.qk_cap_(grad_leaf(4), f32(4), None, None, 2, 1.0), RuntimeError, LEAF,
      torch_rule=True),
    P("op-clip-model-weights", lambda w: ops.qk_clip_(w.attn.c_attn.weight[:D], w.attn.c_attn.weight[D:2 * D], None,
                                                       None, torch.full((2,), 1e3), 1.0),
      RuntimeError, VIEW_OF_LEAF, torch_rule=True),
    P("op-transport-non-leaf", lambda w: ops.transport_head_moments_(grad_leaf(4) * 2, None, f32(2), 2, "vector"),
      RuntimeError, "gaugelab.transport_head_moments_: m requires grad, and the operator writes it without autograd: "
      "call it under torch.no_grad()", torch_rule=True),
]


def run(probe: Probe):
    """(the exception or None, whether everything the world holds is as it was)."""
    w = probe.world()
    before = w.state()
    try:
        probe.call(w)
        err = None
    except Exception as e:  # noqa: BLE001  (every outcome is recorded)
        err = e
    after = w.state()
    kept = before[1:] == after[1:] and all(torch.equal(a, b) for a, b in zip(before[0], after[0]))
    return err, kept


def on_contract(probe: Probe, err, kept: bool) -> bool:
    """The contract, without the exact words: an error of the probe's kind, one line, naming the function's
    package and the argument (torch's rule: its own RuntimeError and message), and nothing moved."""
    if err is None or not kept:
        return False
    msg = str(err)
    if probe.torch_rule:
        return type(err) is RuntimeError and msg == probe.message
    return (type(err) in (ValueError, TypeError) and "\n" not in msg and len(msg) < 300 and msg.startswith("gaugelab.")
            and probe.arg() in msg)


@pytest.mark.parametrize("probe", PROBES, ids=[p.id for p in PROBES])
def test_probe_raises_its_one_line_error_and_moves_nothing(probe):
    err, kept = run(probe)
    assert err is not None, "accepted"
    assert type(err) is probe.exc, f"{type(err).__name__}: {err}"
    assert str(err) == probe.message
    assert kept, "the refused call moved the model or the optimizer"
    assert on_contract(probe, err, kept)


def test_probe_ids_are_distinct_and_each_names_an_argument():
    assert len({p.id for p in PROBES}) == len(PROBES)
    assert all(p.torch_rule or p.arg() for p in PROBES)


def test_the_good_call_beside_each_probe_passes():
    w = World()
    gt.attach(w.opt, w.m, "B", every=2, eps=0.0, transport="vector", vo=True)
    gt.gauge_fix_(w.m, eps=0.0)  # no head's scale is zero
    assert gt.gauge_fix_(w.m, eps=3e38).isfinite().all()  # finite in float32: g = 1
    assert torch.isfinite(gt.offset_qk_gauge_(w.m, 0.5, torch.Generator().manual_seed(0))).all()
    assert gt.qk_cap_(w.m, 4.0) >= 0 and gt.qk_clip_(w.m, 100.0, idx=w.x) >= 0
    assert gt.attention_logit_max(w.m, w.x).shape == (2, 2)
    assert len(gt.attach(w.opt, w.m, "QKclip", batch=lambda: w.x, clip_on="multipliers")) == 1
    assert len(gt.attach(w.opt, w.m, "E", quotient="diagonal", quotient_every=3, damping=0.0)) == 2
    q = World(qk_norm=True)
    assert gt.attach(q.opt, q.m, "Q") == []  # QK-norm in the model: nothing to add per step
    q = World()
    for b in q.m.h:
        b.attn.qk_norm = True  # a functional QK-norm, declared
    assert gt.attach(q.opt, q.m, "Q") == []
    p = plain()
    assert gt.attach(p.opt, p.m, "N") == [] and len(gt.attach(p.opt, p.m, "Pu")) == 2
    assert gt.param_groups(w.m, "B", weight_decay=0.0, multiplier_lr_scale=2.0, lr=1e-3)[0]["lr"] == 1e-3
    gpt = NanoGPT(tiny_gpt())
    assert gpt(torch.zeros(2, 6, dtype=torch.long)).shape == (2, 6, 11)
    gt.add_multipliers(gpt)
    with torch.no_grad():
        assert ops.qk_gauge_fix_(grad_leaf(4), grad_leaf(4), None, None, 2, 0.0).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("cond", list(gt.conditions()))
def test_every_condition_attaches_to_the_model_it_needs_and_steps(cond):
    bundle = gt.condition(cond)["bundle"]
    w = plain() if bundle.get("multipliers") == "none" else World(qk_norm="qk-norm" in bundle)
    before = [p.detach().clone() for p in w.m.parameters()]
    gt.attach(w.opt, w.m, cond, batch=lambda: w.x)
    w.m(w.x).square().sum().backward()
    w.opt.step()
    after = list(w.m.parameters())
    assert all(torch.isfinite(p).all() for p in after)
    assert any(not torch.equal(a, b) for a, b in zip(before, after))


def test_refused_eps_leaves_no_nan_where_it_used_to():
    """The issue's case: eps NaN, negative or 1e300 wrote NaN into every Q/K multiplier of a float32 model."""
    for eps in (math.nan, -1.0, 1e300):
        w = World()
        with pytest.raises(ValueError):
            gt.gauge_fix_(w.m, eps=eps)
        assert all(torch.isfinite(p).all() for p in w.m.parameters())


def main() -> int:
    """Each probe's outcome, and the count off contract."""
    off = 0
    for p in PROBES:
        err, kept = run(p)
        ok = on_contract(p, err, kept)
        off += not ok
        what = "accepted" if err is None else f"{type(err).__name__}: {str(err).splitlines()[0][:150]}" + (
            f" [+{len(str(err).splitlines()) - 1} lines]" if "\n" in str(err) else "")
        print(f"{'ok ' if ok else 'OFF'} {p.id:40} {what}{'' if kept else ' [moved the model]'}")
    print(f"{off} of {len(PROBES)} probes off contract")
    return 0


if __name__ == "__main__":
    sys.exit(main())
