"""nanoGPT's training loop, written from its semantics, as the reference `gaugelab train` is checked against.

What it reproduces (karpathy/nanoGPT train.py + model.py, the settings of its GPT-2 run):
  * the model with bias=False (no Linear or LayerNorm biases), exact GELU (nn.GELU()), pre-LayerNorm
    blocks, causal scaled_dot_product_attention, the LM head tied to wte, dropout 0;
  * configure_optimizers: weight decay on every parameter with dim >= 2 (all matrices, wte, wpe), none on
    the rest; AdamW(betas=(0.9, 0.95), eps=1e-8), here with fused=True on the CPU (nanoGPT uses the fused
    kernel on CUDA; on the CPU it falls back to the default), so the update arithmetic is the kernel
    gaugelab calls and the comparison measures the forward/backward;
  * get_lr: linear warm-up lr·(it+1)/(warmup+1), cosine to min_lr at lr_decay_iters, min_lr after;
  * the step: grad_accum micro-batches of loss/grad_accum, clip_grad_norm_(…, grad_clip), step, zero_grad.
Not nanoGPT's, and why: the batches are gaugelab's seeded windows (its get_batch draws with torch.randint;
the comparison needs the same data), recomputed by gaugelab_windows.py from the documented rule (gpt2/train/data_loader.hpp:
sample g = ((step·accum + micro)·world + rank)·B + row starts at mix_seed(seed, g) mod (N − T)); the logged
loss of a step is the mean over its micro-batches (nanoGPT prints the last one).

With --lrm the model carries learnable multipliers as gaugelab places them by default (rows and columns on
q, k, v, the attention output, the MLP input and output: W_eff = diag(r)·W̄·diag(c)) and the optimizer
groups are the paper's (seed 000 §4.1): matrices and embeddings decayed at --weight-decay, multipliers at
--wd-multipliers except the Q/K row multipliers under conditions B and C, LayerNorm gains not at all;
the clipped norm leaves the multipliers out (seed 002); condition B applies GaugeFix after each step
(per head g = sqrt((s_Q+eps)/(s_K+eps)), s = RMS of the head's row-multiplier slice, r_Q/g, r_K·g).
This is our own reference of the multiplier groups, written independently of the C++ trainer.

Reads the initial weights from a gaugelab checkpoint directory (config.json + model.safetensors, our
parameter names); writes OUT/losses.json ({"loss": [...], "grad_norm_clipped": [...], "lr": [...]}) and
OUT/final.safetensors (our names). Checked by tests/train/test_train_nanogpt.cpp.
usage: nanogpt_train_ref.py --init DIR --data train.bin --out DIR [--lrm] [--condition A|B|C] ...
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gaugelab_windows import windows  # noqa: E402


def batch(tokens, seed, step, micro, accum, B, T):
    """[B, T+1] int64 windows of gaugelab's rule (world 1, rank 0)."""
    return torch.from_numpy(windows(tokens, seed, step, micro, accum, B, T))


class Model:
    """The parameters by gaugelab's names; forward as nanoGPT's GPT.forward (plus multipliers)."""

    def __init__(self, params, n_layer, n_head, lrm):
        self.p, self.L, self.H, self.lrm = params, n_layer, n_head, lrm

    def lin(self, x, name, tags=("",)):
        """x @ W_effᵀ for the linear map `name` whose rows split into groups `tags` (c_attn: q, k, v)."""
        w = self.p[name + ".weight"]
        if not self.lrm:
            return x @ w.t()
        rows = w.shape[0] // len(tags)
        parts = []
        for i, t in enumerate(tags):
            sfx = f"_{t}" if t else ""
            r, c = self.p[f"{name}.r{sfx}"], self.p[f"{name}.c{sfx}"]
            parts.append(r[:, None] * w[i * rows:(i + 1) * rows] * c[None, :])
        return x @ torch.cat(parts).t()

    def forward(self, idx, targets):
        p, (B, T) = self.p, idx.shape
        d = p["wte.weight"].shape[1]
        x = p["wte.weight"][idx] + p["wpe.weight"][:T]
        for i in range(self.L):
            pre = f"h.{i}."
            a = F.layer_norm(x, (d,), p[pre + "ln_1.weight"], None, 1e-5)
            q, k, v = self.lin(a, pre + "attn.c_attn", ("q", "k", "v")).split(d, dim=2)
            q, k, v = (t.view(B, T, self.H, d // self.H).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T, d)
            x = x + self.lin(y, pre + "attn.c_proj")
            m = F.layer_norm(x, (d,), p[pre + "ln_2.weight"], None, 1e-5)
            x = x + self.lin(F.gelu(self.lin(m, pre + "mlp.c_fc")), pre + "mlp.c_proj")
        x = F.layer_norm(x, (d,), p["ln_f.weight"], None, 1e-5)
        logits = x @ p["wte.weight"].t()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


def get_lr(it, a):
    if it < a.warmup_iters:
        return a.lr * (it + 1) / (a.warmup_iters + 1)
    if it > a.lr_decay_iters:
        return a.min_lr
    ratio = (it - a.warmup_iters) / (a.lr_decay_iters - a.warmup_iters)
    return a.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (a.lr - a.min_lr)


def role(name):
    """gaugelab's parameter role of a name (gpt2/model/lrm.hpp ParamRole), for --lrm's groups."""
    tail = name.rsplit(".", 1)[-1]
    if tail in ("r_q", "r_k", "s_q", "s_k"):
        return "multipliers_qk"
    if tail in ("r", "c", "s") or tail.startswith(("r_", "c_", "s_")):
        return "multipliers_other"
    if name.startswith(("wte.", "wpe.")):
        return "embeddings"
    return "biases_norms" if "ln_" in name or tail == "bias" else "matrices"


def arguments(description, conditions=tuple("ABC")):
    """The command line of both reference loops (this one and torch_ops_train.py): the same settings."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--init", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--lrm", action="store_true", help="the model carries gaugelab's default multipliers")
    ap.add_argument("--condition", default="A", choices=conditions)
    ap.add_argument("--multiplier-lr-scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--grad-accum", type=int, default=2)
    ap.add_argument("--max-iters", type=int, default=24)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--min-lr", type=float, default=3e-4)
    ap.add_argument("--warmup-iters", type=int, default=4)
    ap.add_argument("--lr-decay-iters", type=int, default=24)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--wd-multipliers", type=float, default=2e-3)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    return ap


def main(argv=None):
    """argv: the command line's arguments (None: sys.argv's); run_batch.py calls this once per line of its file."""
    a = arguments("nanoGPT's training loop on gaugelab's initial weights and batches").parse_args(argv)
    torch.set_num_threads(1)
    cfg = json.load(open(os.path.join(a.init, "config.json")))["model"]
    params = {k: v.float().clone().requires_grad_(True) for k, v in load_file(os.path.join(a.init, "model.safetensors")).items()}
    model = Model(params, cfg["n_layer"], cfg["n_head"], a.lrm)
    T = cfg["block_size"]
    tokens = np.fromfile(a.data, dtype=np.uint16).astype(np.int64)

    if a.lrm:  # the paper's groups
        wd = {"matrices": a.weight_decay, "embeddings": a.weight_decay, "biases_norms": 0.0,
              "multipliers_qk": a.wd_multipliers if a.condition == "A" else 0.0, "multipliers_other": a.wd_multipliers}
        names = {g: [n for n in params if role(n) == g] for g in wd}
        groups = [{"params": [params[n] for n in ns], "weight_decay": wd[g], "name": g,
                   "lr_scale": a.multiplier_lr_scale if g.startswith("multipliers") else 1.0}
                  for g, ns in names.items() if ns]
        clipped = [params[n] for n in params if not role(n).startswith("multipliers")]
    else:  # nanoGPT's configure_optimizers
        groups = [{"params": [p for p in params.values() if p.dim() >= 2], "weight_decay": a.weight_decay, "lr_scale": 1.0},
                  {"params": [p for p in params.values() if p.dim() < 2], "weight_decay": 0.0, "lr_scale": 1.0}]
        clipped = list(params.values())
    opt = torch.optim.AdamW(groups, lr=a.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)

    def gauge_fix():  # condition B: GaugeFix after the step
        if not (a.lrm and a.condition == "B"):
            return
        with torch.no_grad():
            for i in range(cfg["n_layer"]):
                rq, rk = params[f"h.{i}.attn.c_attn.r_q"], params[f"h.{i}.attn.c_attn.r_k"]
                H = cfg["n_head"]
                sq = rq.view(H, -1).square().mean(1).sqrt()
                sk = rk.view(H, -1).square().mean(1).sqrt()
                g = ((sq + 1e-12) / (sk + 1e-12)).sqrt().repeat_interleave(rq.numel() // H)
                rq.div_(g)
                rk.mul_(g)

    log = run_steps(a, tokens, T, model.forward, opt, clipped, after_step=gauge_fix)
    write_outputs(a.out, log, params)


def run_steps(a, tokens, T, loss_of, opt, clipped, after_step=lambda: None, before_clip=lambda: None):
    """The step loop of both references: the schedule's lr per group (× its lr_scale), grad_accum micro-batches
    of loss/grad_accum, before_clip(), the clip of `clipped`, the optimizer's step, after_step(); returns the log."""
    log = {"loss": [], "grad_norm_clipped": [], "lr": []}
    for it in range(a.max_iters):
        lr = get_lr(it, a)
        for g in opt.param_groups:
            g["lr"] = lr * g["lr_scale"]
        total = 0.0
        for micro in range(a.grad_accum):
            xy = batch(tokens, a.seed, it, micro, a.grad_accum, a.batch_size, T)
            loss = loss_of(xy[:, :T], xy[:, 1:])
            (loss / a.grad_accum).backward()
            total += loss.item()
        before_clip()
        norm = torch.nn.utils.clip_grad_norm_(clipped, a.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        after_step()
        log["loss"].append(total / a.grad_accum)
        log["grad_norm_clipped"].append(float(norm))
        log["lr"].append(lr)
    return log


def write_outputs(out, log, params):
    """OUT/losses.json and OUT/final.safetensors (params: {gaugelab name: tensor})."""
    os.makedirs(out, exist_ok=True)
    json.dump(log, open(os.path.join(out, "losses.json"), "w"))
    save_file({k: v.detach().contiguous() for k, v in params.items()}, os.path.join(out, "final.safetensors"))


if __name__ == "__main__":
    main()
