"""A PyTorch training loop that gets its multipliers, optimizer groups, clip set and condition hooks only
from gaugelab.torch, on a nanoGPT-style nn.Module: the proof that a PyTorch user reproduces `gaugelab
train`. Same command line, batches, schedule and outputs as nanogpt_train_ref.py (OUT/losses.json,
OUT/final.safetensors by gaugelab's names); checked by tests/train/test_train_nanogpt.cpp for A, B, C.

The model is a plain nn.Module written from nanoGPT's model.py (gaugelab.torch.nanogpt.NanoGPT: nn.Linear
layers, bias=False, exact GELU, causal SDPA, LM head tied to wte); its module names are gaugelab's parameter
names, so the initial checkpoint loads with load_state_dict. What gaugelab.torch does to it:

    gt.add_multipliers(model)                                        # --lrm: the seed's placement
    opt = torch.optim.AdamW(gt.param_groups(model, cond, ...), ...)  # the condition's decay groups
    gt.attach(opt, model, cond)                                      # its step hooks (B: GaugeFix)
    gt.project_gradients_(model, mode)                               # P, Pa: before the clip, as the trainer
    torch.nn.utils.clip_grad_norm_(gt.clipped_parameters(model), clip)
usage: torch_ops_train.py --init DIR --data train.bin --out DIR [--lrm] [--condition KEY] ...
(PYTHONPATH must hold the build's python/ folder.)
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nanogpt_train_ref import arguments, run_steps, write_outputs  # noqa: E402

import gaugelab.torch as gt  # noqa: E402
from gaugelab.torch.nanogpt import NanoGPT  # noqa: E402


def main(argv=None):
    """argv: the command line's arguments (None: sys.argv's); run_batch.py calls this once per line of its file."""
    ap = arguments("A PyTorch loop using only gaugelab.torch, on gaugelab's initial weights and batches",
                   tuple(gt.conditions()))
    ap.add_argument("--qk-cap", type=float, default=4.0, help="Dcap's cap (the trainer's --qk-cap)")
    ap.add_argument("--qk-clip-tau", type=float, default=100.0, help="QKclip's tau (the trainer's --qk-clip-tau)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    cfg = json.load(open(os.path.join(a.init, "config.json")))["model"]
    model = NanoGPT(cfg)
    if a.lrm:
        gt.add_multipliers(model)
    missing, unexpected = model.load_state_dict(load_file(os.path.join(a.init, "model.safetensors")), strict=False)
    if missing != ["lm_head.weight"] or unexpected:
        sys.exit(f"torch_ops_train.py: the checkpoint's names differ from the model's: missing {missing}, "
                 f"unexpected {unexpected}")
    T, tokens = cfg["block_size"], np.fromfile(a.data, dtype=np.uint16).astype(np.int64)
    groups = gt.param_groups(model, a.condition, weight_decay=a.weight_decay, wd_multipliers=a.wd_multipliers,
                             wd_embeddings=a.weight_decay, multiplier_lr_scale=a.multiplier_lr_scale)
    opt = torch.optim.AdamW(groups, lr=a.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)
    last = {}  # the step's last micro-batch: QK-Clip measures the logits on it after the update, as the trainer
    # P, Pa: the trainer projects the gradients before its clip, so this loop does too (attach's pre-step hook
    # would project after the clip)
    gt.attach(opt, model, a.condition, cap=a.qk_cap, tau=a.qk_clip_tau, batch=lambda: last["x"], project_gradients=False)
    bundle = gt.condition(a.condition)["bundle"]
    project = bundle.get("projection-target") == "gradient"
    clipped = gt.clipped_parameters(model)

    def loss_of(x, y):
        last["x"] = x
        return model(x, y)

    log = run_steps(a, tokens, T, loss_of, opt, clipped,
                    before_clip=lambda: gt.project_gradients_(model, bundle["grad-projection"]) if project else None)
    write_outputs(a.out, log, {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"})


if __name__ == "__main__":
    main()
