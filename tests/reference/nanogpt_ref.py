"""Eager PyTorch reference for bench/gpt2_step: a nanoGPT-style GPT-2 trained on random tokens, or with --data on
a token file (nanoGPT's uint16 train.bin, `gaugelab prepare`'s) in the windows `gaugelab train --seed S` reads.

The model is nanoGPT's (Karpathy, model.py) in its plain eager form: fused c_attn Linear, causal
F.scaled_dot_product_attention, tanh GELU, pre-LayerNorm, tied LM head over the vocabulary padded
to a multiple of 64 (as nanoGPT pads 50257 to 50304), cross-entropy over the padded logits, and
torch.optim.AdamW with nanoGPT's two groups (weight decay on matrices and embeddings, none on
biases and LayerNorm). On the CPU nanoGPT uses the non-fused AdamW, and so does this script.

On CUDA (--device cuda) it is nanoGPT's GPU configuration: fused AdamW, bf16 autocast, and with
--compile torch.compile of the model (nanoGPT's compile=True); scripts/gpu-bench.sh runs it beside ours.

Without --data every step trains on one batch of random tokens (the speed alone is compared). With --data FILE
(or a directory holding train.bin) step i (0-based, warm-up steps counted) reads the windows of gaugelab's step
i + 1 (tests/reference/gaugelab_windows.py, seed --data-seed), so its losses stand beside ours step for step.

Prints one JSON line: {"tokens_per_s": ..., "step_s": ..., "loss": ..., "first_loss": ..., "losses": [every
step's], "mfu": ..., ...}.
usage: nanogpt_ref.py --threads 2 --dtype fp32 [--n-layer 4 --n-head 4 --n-embd 256 --seq 256 --batch 4]
       [--device cuda --compile --peak-tflops 989] [--data runs/data/train.bin --data-seed 0]
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gaugelab_windows import windows  # noqa: E402


def read_tokens(path, vocab):
    """The uint16 tokens of PATH (or PATH/train.bin), memory-mapped; every id checked against the vocabulary."""
    if os.path.isdir(path):
        path = os.path.join(path, "train.bin")
    if not os.path.isfile(path):
        raise SystemExit(f"nanogpt_ref: --data {path}: no such token file")
    tokens = np.memmap(path, dtype=np.uint16, mode="r")
    if len(tokens) and int(tokens.max()) >= vocab:
        raise SystemExit(f"nanogpt_ref: {path} holds id {int(tokens.max())} >= --vocab {vocab}")
    return tokens


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.attn_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, n_layer, n_head, n_embd, block_size, vocab):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        T = idx.size(1)
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for b in self.h:
            x = b(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=256)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (nanoGPT's compile=True)")
    ap.add_argument("--peak-tflops", type=float, default=0.0, help="MFU denominator; 0: no MFU")
    ap.add_argument("--profile-out", default="", help="after the timed steps, --profile-steps more traced by "
                    "torch.profiler into this Chrome trace (scripts/trace_top.py ranks its kernels)")
    ap.add_argument("--profile-steps", type=int, default=2)
    ap.add_argument("--data", default="", help="a uint16 token file (or a directory with train.bin): gaugelab's "
                    "training windows instead of one random batch")
    ap.add_argument("--data-seed", type=int, default=0, help="with --data: the windows of `gaugelab train --seed N`")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    padded = (a.vocab + 63) // 64 * 64
    dev = torch.device(a.device)
    model = GPT(a.n_layer, a.n_head, a.n_embd, a.seq, padded).to(dev)
    # nanoGPT's estimate_mfu: N without the position embedding, 6N + 12·L·d·T FLOPs per token
    n_params = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    flops_per_token = 6 * n_params + 12 * a.n_layer * a.n_embd * a.seq
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    fused = {"fused": True} if dev.type == "cuda" else {}  # nanoGPT: fused AdamW where available
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=6e-4, betas=(0.9, 0.95), **fused)
    run = torch.compile(model) if a.compile else model
    n_steps = max(a.warmup, 1) + a.steps + (a.profile_steps if a.profile_out else 0)
    if a.data:  # every step's windows staged on the device before the first step: no loading inside the timing
        tokens = read_tokens(a.data, a.vocab)
        batches = [torch.from_numpy(windows(tokens, a.data_seed, i, 0, 1, a.batch, a.seq)) for i in range(n_steps)]
    else:
        batches = [torch.randint(0, a.vocab, (a.batch, a.seq + 1))]
    batches = [(b[:, :-1].contiguous().to(dev), b[:, 1:].contiguous().to(dev)) for b in batches]  # (inputs, targets)
    taken = 0

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    losses = []

    def step():
        nonlocal taken
        x, y = batches[taken % len(batches)]
        taken += 1
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=a.dtype == "bf16"):
            loss = run(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        return losses[-1]

    first_loss = step()  # also the compile, when --compile
    for _ in range(max(a.warmup - 1, 0)):
        step()
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    sync()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    sync()
    dt = (time.perf_counter() - t0) / a.steps
    tps = a.batch * a.seq / dt
    peak_mem = torch.cuda.max_memory_allocated() / 1e9 if dev.type == "cuda" else None
    if a.profile_out:  # outside the timed window: the profiler's own cost never reaches tokens/s
        acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.type == "cuda" else [])
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(a.profile_steps):
                step()
            sync()
        prof.export_chrome_trace(a.profile_out)
    print(json.dumps({"impl": "nanogpt-" + ("compile" if a.compile else "eager"), "torch": torch.__version__,
                      "threads": a.threads, "device": a.device, "dtype": a.dtype, "step_s": dt, "tokens_per_s": tps,
                      "loss": loss, "first_loss": first_loss, "losses": losses, "data": a.data or "random",
                      "flops_per_token": flops_per_token,
                      "mfu": flops_per_token * tps / (a.peak_tflops * 1e12) if a.peak_tflops > 0 else None,
                      "peak_mem_gb": peak_mem}))


if __name__ == "__main__":
    main()
