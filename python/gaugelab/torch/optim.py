"""The trainer's conditions (A–E, D-cap, QK-Clip, the projections) on a PyTorch optimizer: the parameter
groups each condition decays, and its per-step hooks, both read from the trainer's conditions table.

    groups = param_groups(model, "B")                          # AdamW groups of condition B
    opt = torch.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95))
    attach(opt, model, "B")                                    # GaugeFix after every step

The hooks are torch.optim's step hooks, so they wrap any optimizer: a pre-step hook (the snapshot before the
step, or the gradient projection) and a post-step hook (GaugeFix, the cap, QK-Clip, the quotient correction
of the step, the projection of the update)."""
from __future__ import annotations

import torch
from torch import nn

from . import _checks
from ._library import condition, load, step_hooks
from .gauge import check_fix, gauge_fix_, qk_cap_, qk_clip_
from .layers import attention_layers
from .lrm import LRMLinear

ROLES = ("matrices", "multipliers_qk", "multipliers_other", "biases_norms", "embeddings")
PROJECTIONS = ("exact", "approx")


def parameter_roles(model: nn.Module) -> dict:
    """{parameter: role} in the trainer's roles (gpt2/model/lrm.hpp ParamRole): an LRMLinear's Q/K row or
    scalar multipliers are multipliers_qk, its other multipliers multipliers_other; Embedding weights are
    embeddings; weights of Linear layers (and any other parameter of dim >= 2) are matrices; biases, norms'
    gains and other 1-D parameters biases_norms. A tied parameter is counted once, at its first module."""
    _checks.module("parameter_roles", "model", model)
    roles = {}
    for _, m in model.named_modules():
        for pname, p in m.named_parameters(recurse=False):
            if p in roles:
                continue
            if isinstance(m, LRMLinear) and pname[0] in "rcs" and pname not in ("weight", "bias"):
                tag = pname[2:] if "_" in pname else ""
                roles[p] = "multipliers_qk" if pname[0] in "rs" and tag in m.qk_tags else "multipliers_other"
            elif isinstance(m, nn.Embedding):
                roles[p] = "embeddings"
            elif pname == "bias" or isinstance(m, (nn.LayerNorm, nn.GroupNorm)) or p.dim() < 2:
                roles[p] = "biases_norms"
            else:
                roles[p] = "matrices"
    return roles


def param_groups(model: nn.Module, cond: str = "A", weight_decay: float = 0.1, wd_multipliers: float = 2e-3,
                 wd_embeddings: float = 0.1, multiplier_lr_scale: float = 1.0, lr: float | None = None) -> list:
    """torch.optim param groups of condition `cond`, decayed as the trainer decays them (seed 000 §4.1):
    matrices at weight_decay, embeddings at wd_embeddings, biases and norms not at all, multipliers at
    wd_multipliers (λ_lrm) except the Q/K ones when the condition does not decay them (the table's
    decays_qk: B, C, ...). Each group has "name" and "lr_scale": the multipliers step at multiplier_lr_scale × the
    learning rate. torch.optim does not read lr_scale: with `lr` given each group's "lr" is set to lr × lr_scale,
    and a schedule that sets group["lr"] itself must multiply by group["lr_scale"] (a scale other than 1
    without `lr` is refused, so that it is not silently ignored)."""
    fn = "param_groups"
    _checks.module(fn, "model", model)
    weight_decay, wd_multipliers, wd_embeddings = (_checks.real(fn, name, v, 0.0) for name, v in (
        ("weight_decay", weight_decay), ("wd_multipliers", wd_multipliers), ("wd_embeddings", wd_embeddings)))
    multiplier_lr_scale = _checks.real(fn, "multiplier_lr_scale", multiplier_lr_scale, 0.0, strict=True)
    if lr is not None:
        lr = _checks.real(fn, "lr", lr, 0.0)
    if multiplier_lr_scale != 1.0 and lr is None:
        raise ValueError("gaugelab.param_groups: multiplier_lr_scale needs lr= (torch.optim ignores lr_scale; "
                         "each group's lr is set to lr x lr_scale)")
    decays_qk = condition(cond)["decays_qk"]
    wd = {"matrices": weight_decay, "embeddings": wd_embeddings, "biases_norms": 0.0,
          "multipliers_qk": wd_multipliers if decays_qk else 0.0, "multipliers_other": wd_multipliers}
    roles = parameter_roles(model)
    groups = []
    for role in ROLES:
        ps = [p for p, r in roles.items() if r == role and p.requires_grad]
        if ps:
            scale = multiplier_lr_scale if role.startswith("multipliers") else 1.0
            groups.append({"params": ps, "weight_decay": wd[role], "name": role, "lr_scale": scale,
                           **({"lr": lr * scale} if lr is not None else {})})
    return groups


def clipped_parameters(model: nn.Module) -> list:
    """The parameters whose gradients the trainer's clip sees: all but the multipliers (seed 002)."""
    return [p for p, r in parameter_roles(model).items() if not r.startswith("multipliers")]


def _multipliers(L):
    """AttentionMultipliers of one layer for the quotient operator: r and c of q, k, v and of the output."""
    out = L.out if isinstance(L.out, LRMLinear) else None
    return (L.row_scale("q"), L.multiplier("c", "q"), L.row_scale("k"), L.multiplier("c", "k"),
            L.row_scale("v"), L.multiplier("c", "v"),
            out.row_scale() if out else None, out.multiplier("c") if out else None)


class _Snapshot:
    """The attention weights before a step (c_attn weight and bias, c_proj weight per layer)."""

    def __init__(self, layers):
        self.layers, self.before = layers, None

    def take(self, *_):
        with torch.no_grad():
            self.before = [(L.qkv.weight.detach().clone(),
                            None if L.qkv.bias is None else L.qkv.bias.detach().clone(),
                            L.out.weight.detach().clone()) for L in self.layers]


def quotient_correction(optimizer, model: nn.Module, full: bool = True, damping: float = 1e-3, vo: bool = True,
                        match_rms: bool = False, every: int = 1, layers=None) -> list:
    """Condition E (seed 003 §3, §7) around any optimizer: each step's increments of every head's Q/K (and V/O)
    weights are replaced by their opposite-Gram corrected forms, Ũ_Q = U_Q (W_KᵀW_K + λI)⁻¹ etc. (full Grams,
    or their diagonals with full=False); match_rms rescales each head's corrected Q/K pair and V/O pair by one factor
    per pair to the pair's raw RMS (condition Erms). every > 1 with full: the full Grams every `every`-th step, their diagonals between (seed 003
    §7, the trainer's --quotient-every). Registers a pre-step and a post-step hook; returns their handles."""
    check_quotient("quotient_correction", optimizer, full, damping, vo, match_rms, every)
    layers = layers or attention_layers(model)
    snap, ops, steps = _Snapshot(layers), load(), [0]

    def correct(*_):
        use_full = full and steps[0] % every == 0  # the trainer's: full at steps 0, every, 2·every, ... (0-based)
        steps[0] += 1
        with torch.no_grad():
            for L, (w0, _b0, p0) in zip(layers, snap.before):
                ops.correct_attention_increments_(L.qkv.weight, w0, L.out.weight, p0, *_multipliers(L), L.heads,
                                                  use_full, damping, vo, match_rms)

    return [optimizer.register_step_pre_hook(snap.take), optimizer.register_step_post_hook(correct)]


def check_quotient(fn: str, optimizer, full, damping, vo, match_rms, every) -> None:
    _checks.optimizer(fn, optimizer)
    for name, v in (("full", full), ("vo", vo), ("match_rms", match_rms)):
        _checks.flag(fn, name, v)
    _checks.real(fn, "damping", damping, 0.0)
    _checks.integer(fn, "every", every)


def _require_plain(layers, what):
    for L in layers:
        if isinstance(L.qkv, LRMLinear) or isinstance(L.out, LRMLinear):
            raise ValueError(f"gaugelab.{what}: the projection needs attention without multipliers (layer {L.name})")


@torch.no_grad()
def project_gradients_(model: nn.Module, mode: str = "exact", layers=None) -> None:
    """Every attention layer's gradients (c_attn weight and bias, c_proj weight) replaced by their parts
    orthogonal to the head gauges' orbits (seed 001 App. H.2): exact (Remark 51, a Sylvester solve per head)
    or approx (Alg. 2). Layers without gradients are skipped."""
    _checks.choice("project_gradients_", "mode", mode, PROJECTIONS)
    layers = layers or attention_layers(model)
    _require_plain(layers, "project_gradients_")
    ops = load()
    for L in layers:
        ga, gp = L.qkv.weight.grad, L.out.weight.grad
        if ga is None or gp is None:
            continue
        b = L.qkv.bias
        if b is not None and b.grad is None:
            raise ValueError(f"gaugelab.project_gradients_: {L.name}'s c_attn bias has no gradient (frozen?): the "
                             "projection moves the bias with its rows")
        ops.project_layer_gradients_(L.qkv.weight, b, L.out.weight, ga, None if b is None else b.grad, gp, L.heads,
                                     mode)


def projection_hook(optimizer, model: nn.Module, mode: str = "exact", target: str = "gradient", layers=None) -> list:
    """Conditions P/Pa (target "gradient": the gradients projected before each step) and Pu/Pau ("update":
    the optimizer's step itself projected at the weights before it). Returns the hook handles."""
    _checks.optimizer("projection_hook", optimizer)
    _checks.choice("projection_hook", "mode", mode, PROJECTIONS)
    _checks.choice("projection_hook", "target", target, ("gradient", "update"))
    layers = layers or attention_layers(model)
    _require_plain(layers, "projection_hook")
    if target == "gradient":
        return [optimizer.register_step_pre_hook(lambda *_: project_gradients_(model, mode, layers))]
    snap, ops = _Snapshot(layers), load()

    def project(*_):
        with torch.no_grad():
            for L, (w0, b0, p0) in zip(layers, snap.before):
                dw, dp = L.qkv.weight - w0, L.out.weight - p0
                db = None if b0 is None else L.qkv.bias - b0
                ops.project_layer_gradients_(w0, b0, p0, dw, db, dp, L.heads, mode)
                L.qkv.weight.copy_(w0 + dw)
                L.out.weight.copy_(p0 + dp)
                if db is not None:
                    L.qkv.bias.copy_(b0 + db)

    return [optimizer.register_step_pre_hook(snap.take), optimizer.register_step_post_hook(project)]


def _model_without_multipliers(cond, value, model, layers):
    """Bundle flag multipliers (none: nanoGPT's model, N and the projections)."""
    placed = [name for name, m in model.named_modules() if isinstance(m, LRMLinear)]
    if value == "none" and placed:
        raise ValueError(f"gaugelab.attach: condition {cond} needs a model without multipliers ({placed[0]} is an "
                         "LRMLinear)")


def _model_with_qk_norm(cond, value, model, layers):
    """Bundle flag qk-norm (Q): the normalisation is part of the model, which attach cannot change."""
    bare = [L.name for L in layers if not L.has_qk_norm()]
    if value != "none" and bare:
        raise ValueError(f"gaugelab.attach: condition {cond} needs QK-norm in the model, which attach cannot add: "
                         f"attention module {bare[0]!r} holds no norm layer and no qk_norm = True (build the model "
                         "with QK-norm, or train this one as condition C)")


# How attach meets each flag a condition's bundle fixes (the conditions table's flag -> value): the flags
# that describe the model are checked against it; the others it applies (param_groups reads magnitude's Q/K
# decay from decays_qk, the hooks read the rest). A flag in neither is refused, not ignored.
MODEL_FLAGS = {"multipliers": _model_without_multipliers, "qk-norm": _model_with_qk_norm}
APPLIED_FLAGS = ("magnitude", "gaugefix-mode", "quotient-scale", "grad-projection", "projection-target")
# The trainer's hooks (its registry, step_hooks()) that attach runs; a row naming another is refused before any step.
ATTACHED_HOOKS = ("gauge_fix", "qk_cap", "qk_clip", "quotient")


def attach(optimizer, model: nn.Module, cond: str, every: int = 1, eps: float = 1e-12, transport: str = "none",
           vo: bool = False, cap: float = 4.0, tau: float = 100.0, clip_on: str = "weights", batch=None,
           quotient: str = "full", quotient_every: int = 1, damping: float = 1e-3, quotient_vo: bool = True,
           project_gradients: bool = True) -> list:
    """Registers on `optimizer` the step hooks that the conditions table gives condition `cond`, with the
    trainer's defaults: GaugeFix every `every` steps (mode from the row's bundle: head, or effective for
    Beff; the trainer's coordinate mode is not offered) and the cap of s_Q·s_K after it (Dcap), QK-Clip at
    tau on the batch `batch()` returns (QKclip), the quotient correction (E, Erms), the gradient or update
    projection (the rows whose bundle sets --grad-projection). The trainer projects gradients (target gradient)
    before its clip; a step pre-hook runs
    after yours, so to match it pass project_gradients=False and call project_gradients_(model, mode) before
    clip_grad_norm_ (the hook is right when you do not clip). Every argument and what the condition needs of
    the model (row multipliers on q and k where the row's needs_qk_rows is set; none for the rows without
    multipliers; QK-norm for Q: a norm layer in each attention module, or its attribute qk_norm = True) are
    checked here, before any step. Returns the hook handles."""
    fn = "attach"
    _checks.optimizer(fn, optimizer)
    row = condition(cond)
    bundle, hooks, layers, handles = row["bundle"], row["hooks"], attention_layers(model), []
    every = _checks.integer(fn, "every", every)
    cap = _checks.real(fn, "cap", cap, 0.0, strict=True)
    tau = _checks.real(fn, "tau", tau, 0.0, strict=True)
    _checks.choice(fn, "clip_on", clip_on, ("weights", "multipliers"))
    _checks.choice(fn, "quotient", quotient, ("full", "diagonal"))
    quotient_every = _checks.integer(fn, "quotient_every", quotient_every)
    damping = _checks.real(fn, "damping", damping, 0.0)
    _checks.flag(fn, "quotient_vo", quotient_vo)
    _checks.flag(fn, "project_gradients", project_gradients)
    for flag, value in bundle.items():
        if flag in MODEL_FLAGS:
            MODEL_FLAGS[flag](cond, value, model, layers)
        elif flag not in APPLIED_FLAGS:
            raise ValueError(f"gaugelab.attach: condition {cond} fixes --{flag} {value}, which gaugelab.torch does not "
                             "apply")
    if row["needs_qk_rows"] or (clip_on == "multipliers" and "qk_clip" in hooks):
        for L in layers:
            L.require_rows(f"attach: condition {cond}")
    unknown = [h["name"] for h in step_hooks() if h["name"] in hooks and h["name"] not in ATTACHED_HOOKS]
    if unknown:
        raise ValueError(f"gaugelab.attach: condition {cond} runs the trainer's hook {unknown[0]}, which gaugelab.torch "
                         "does not run")
    mode = bundle.get("gaugefix-mode", "head")
    eps = check_fix(fn, layers if "gauge_fix" in hooks else [], eps, mode, vo, transport, optimizer)
    if "qk_clip" in hooks and not callable(batch):
        _checks.fail(fn, "batch", "a callable that returns the step's batch (QK-Clip measures the logits on it)",
                     _checks.shown(batch), ValueError if batch is None else TypeError)
    if "grad-projection" in bundle and (project_gradients or bundle["projection-target"] == "update"):
        handles += projection_hook(optimizer, model, bundle["grad-projection"], bundle["projection-target"], layers)
    # Each hook of the row, in the row's order, through the trainer's hook registry: one handler per registry name.
    steps = [0]

    per_step = {
        "gauge_fix": lambda: gauge_fix_(model, eps, mode, vo, optimizer, transport, layers),
        "qk_cap": lambda: qk_cap_(model, cap, layers),
        "qk_clip": lambda: qk_clip_(model, tau, idx=batch(), on=clip_on, layers=layers),
    }
    cadence = {"gauge_fix": every, "qk_cap": every, "qk_clip": 1}  # the cap follows the fix; QK-Clip every step
    post = []
    for h in step_hooks():
        name = h["name"]
        if name not in hooks:
            continue
        if name == "quotient":
            handles += quotient_correction(optimizer, model, quotient == "full", damping, quotient_vo,
                                           bundle.get("quotient-scale") == "rms", quotient_every, layers)
        else:
            post.append(name)
    if post:
        order = [h for h in hooks if h in post]  # the condition's order (GaugeFix before its cap)

        def after(*_):
            steps[0] += 1
            for name in order:
                if steps[0] % cadence[name] == 0:
                    per_step[name]()

        handles.append(optimizer.register_step_post_hook(after))
    return handles
