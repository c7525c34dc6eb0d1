"""gaugelab.torch: the gauge tools of `gaugelab train` inside your own PyTorch training loop.

The trainer's LibTorch operations are registered as PyTorch custom operators (torch.ops.gaugelab.*, from
gpt2/ops through gpt2/torch_library; CPU and CUDA, the inputs' dtype), and this package puts a thin layer
over them for a nanoGPT-style model (attention modules with c_attn, c_proj, n_head):

    import gaugelab.torch as gt
    gt.add_multipliers(model)                                   # seed 000's placement, multipliers at 1
    opt = torch.optim.AdamW(gt.param_groups(model, "B"), lr=6e-4, betas=(0.9, 0.95))
    gt.attach(opt, model, "B")                                  # GaugeFix after every step
    ...                                                         # your loop, unchanged
    stats = gt.head_stats(model)                                # s_q, s_k, drift, rho per layer and head

Everything else: LRMLinear, gauge_fix_ (with Adam-state transport), offset_qk_gauge_ (a gauge-offset start),
qk_cap_, qk_clip_, attention_logit_max,
quotient_correction (condition E as step hooks), project_gradients_ / projection_hook (seed 001's
gauge-orthogonal projections), param_groups / clipped_parameters, conditions() (the trainer's table).
The operator library must come from the same torch release as the one imported (checked at import).
"""
from __future__ import annotations

from ._library import check_torch_version, condition, conditions, load, placement
from .gauge import attention_logit_max, gauge_fix_, head_stats, offset_qk_gauge_, qk_cap_, qk_clip_
from .layers import AttentionLayer, attention_layers
from .lrm import NANOGPT_SITES, LRMLinear, add_multipliers
from .optim import (attach, clipped_parameters, param_groups, parameter_roles, project_gradients_,
                    projection_hook, quotient_correction)

ops = load()

__all__ = ["AttentionLayer", "LRMLinear", "NANOGPT_SITES", "add_multipliers", "attach", "attention_layers",
           "attention_logit_max", "check_torch_version", "clipped_parameters", "condition", "conditions",
           "gauge_fix_", "head_stats", "load", "offset_qk_gauge_", "ops", "param_groups", "parameter_roles", "placement",
           "project_gradients_", "projection_hook", "qk_cap_", "qk_clip_", "quotient_correction"]
