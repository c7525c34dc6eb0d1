#!/usr/bin/env python3
"""Compares two training logs of the same run on two devices (scripts/gpu-check.sh): the per-step
training loss, the final validation loss and, where both logged them, the largest attention logit.

  gpu_check_compare.py NAME REF.h5 OTHER.h5 [--early K] [--early-tol T] [--final-tol F]

Prints one table row; exits 1 when a bound is broken, 0 otherwise. The bounds were chosen before the first
GPU run; that run's largest gaps are stated beside them:
  early: the first K steps' losses agree to T (absolute, nats). Both devices compute in float32 but
         reduce in different orders; on an H200 the largest gap over 10 steps was 3.1e-4 (Muon, whose
         NS5 is bfloat16 on CUDA), 1.3e-5 for A-D. T = 1e-3 is 3x the largest.
  final: the final validation losses agree to F (relative). Training amplifies round-off, so the end
         of a run is looser: the largest gap measured was 0.7 %; F = 2 % is ~3x that. It catches a device
         path that trains another kind of model (Muon against AdamW differ by 5 % at 60 steps, E against
         A by 1.6 %). Neither bound separates A-D (< 0.1 % apart at 60 steps): this checks the device
         path, not the gauge handling.
"""
import argparse
import math
import sys

import h5py
import numpy as np


def read(path):
    with h5py.File(path, "r") as f:
        steps = np.asarray(f["series/step"][...])
        loss = np.asarray(f["series/loss"][...])
        attn = np.asarray(f["series/attn_logit_max"][...]) if "series/attn_logit_max" in f else None
        summary = dict(f["summary"].attrs)
    return steps, loss, attn, summary


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name")
    p.add_argument("ref")
    p.add_argument("other")
    p.add_argument("--early", type=int, default=10)
    p.add_argument("--early-tol", type=float, default=1e-3)
    p.add_argument("--final-tol", type=float, default=0.02)
    a = p.parse_args()
    s1, l1, a1, m1 = read(a.ref)
    s2, l2, a2, m2 = read(a.other)
    n = min(len(s1), len(s2))
    if n == 0 or not np.array_equal(s1[:n], s2[:n]):
        print(f"{a.name:<12} steps differ: {s1[:5]} vs {s2[:5]}")
        return 1
    d = np.abs(l1[:n] - l2[:n])
    k = min(a.early, n)
    early = float(np.max(d[:k]))
    worst = float(np.nanmax(d))
    v1, v2 = float(m1.get("final_val_loss", math.nan)), float(m2.get("final_val_loss", math.nan))
    rel = abs(v1 - v2) / abs(v1) if v1 else math.inf
    attn = ""
    if a1 is not None and a2 is not None:
        ok = ~(np.isnan(a1[:n]) | np.isnan(a2[:n]))
        if ok.any():
            r = np.max(np.abs(a1[:n][ok] - a2[:n][ok]) / np.maximum(np.abs(a1[:n][ok]), 1e-12))
            attn = f" attn-logit rel {r:.1e}"
    fails = []
    if not early <= a.early_tol:
        fails.append(f"early |dloss| {early:.2e} > {a.early_tol:g}")
    if not rel <= a.final_tol:
        fails.append(f"final val rel {rel:.2e} > {a.final_tol:g}")
    print(f"{a.name:<12} steps {n:4d}  |dloss| first {k}: {early:.2e}  all: {worst:.2e}  "
          f"val {v1:.5f} / {v2:.5f} (rel {rel:.1e}){attn}  {'FAIL: ' + '; '.join(fails) if fails else 'ok'}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
