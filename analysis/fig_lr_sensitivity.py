#!/usr/bin/env python3
"""The instability instrument's analysis (Wortsman et al. 2023, arXiv 2309.14322, Fig. 1 format):
final validation loss against learning rate per way of handling the Q/K gauge, the learning-rate
sensitivity of each with bootstrap intervals, the divergence fraction, and the attention-logit and
s_Q·s_K growth at the largest learning rate each condition survives.

LR sensitivity of a condition (Wortsman et al. §3.1): E_lr[min(L(lr), L0) − L*], the mean over the
grid's learning rates of the excess of the final validation loss over the condition's best, a diverged
run counted at the initial loss L0 (the mean step-1 training loss of all runs, ≈ ln V). Intervals: 95 %
percentile bootstrap over seeds (seeds resampled with replacement, the same draw for every learning
rate of a condition; 2000 draws); differences to condition A resample A's and the other's seeds jointly
by seed, so a shared seed effect cancels.

Usage: fig_lr_sensitivity.py [--out DIR] LOG_OR_DIR...   (gpt2/train logs, or directories holding
<run>/log.h5 as gpt2/experiments/lr_sensitivity.sh writes them). Writes fig_lr_sensitivity.png and
table_lr_sensitivity.md (GAUGELAB_FIGURES or --out, default figures/)."""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import figstyle
import gaugelab_log as gl

BOOTSTRAP_DRAWS = 2000
NAMES = {"A": "A: WD on Q/K", "B": "B: GaugeFix", "C": "C: no control", "D": "D: GaugeFix + Q/K WD",
         "Dcap": "D: GaugeFix + cap", "Q": "QK-norm (C + RMSNorm)", "E": "E: quotient-aware updates",
         "N": "N: no multipliers (nanoGPT)", "P": "P: N + exact gradient projection",
         "Pa": "Pa: N + Alg. 2 gradient projection", "Pu": "Pu: N + exact projection of the update",
         "Pau": "N + Alg. 2 projection of the update"}
BASES = ["A", "B", "C", "D", "Dcap", "Q", "E", "N", "P", "Pa", "Pu", "Pau"]
PROJECTIONS = ("P", "Pa", "Pu", "Pau")  # compared with N (the same model without multipliers), not with A
COLOR = {b: f"C{i}" for i, b in enumerate(BASES)}  # one colour per gauge handling, in both optimizers' rows
# Muon runs (Muon on the hidden matrices, AdamW on the rest) are the same handlings, prefix "M".
NAMES.update({"M" + k: "Muon, " + v for k, v in list(NAMES.items())})
ORDER = BASES + ["M" + b for b in BASES]
# Runs started off the balanced Q/K slice (--qk-gauge-init σ > 0) form their own family, prefix "o",
# compared with their own condition A (oA).
NAMES.update({"o" + k: v + ", offset start" for k, v in NAMES.items()})
ORDER += ["o" + k for k in ORDER]


@dataclass
class Run:
    cond: str
    lr: float
    seed: int
    final_val: float     # NaN if diverged
    diverged: bool
    first_loss: float
    step: np.ndarray     # /heads/step
    attn: np.ndarray     # [records] max attention logit over layers and heads
    sqk: np.ndarray      # [records] max s_Q·s_K over layers and heads (NaN without multipliers)


def condition_of(cfg: dict) -> str:
    if float(cfg.get("qk-gauge-init", 0) or 0) > 0:
        return "o" + condition_of({k: v for k, v in cfg.items() if k != "qk-gauge-init"})
    c = cfg.get("condition", "A")
    if cfg.get("qk-norm", "none") != "none":
        c = "Q"
    elif cfg.get("multipliers", "default") == "none":
        c = {"exact": "P", "approx": "Pa"}.get(cfg.get("grad-projection", "none"), "N")
        if c != "N" and cfg.get("projection-target", "gradient") == "update":
            c = {"P": "Pu", "Pa": "Pau"}[c]
    elif c == "D" and cfg.get("magnitude", "wd") == "cap":
        c = "Dcap"
    return "M" + c if cfg.get("optimizer", "adamw") == "muon" else c


def parts(c: str) -> tuple[str, bool, str]:
    """(family prefix "o" or "", Muon?, base handling) of a condition key such as "oMB"."""
    fam = "o" if c.startswith("o") else ""
    rest = c[len(fam):]
    muon = rest.startswith("M")
    return fam, muon, rest[1:] if muon else rest


def load(path: Path) -> Run | None:
    """The run's results, or None for a run still going or cut off (neither completed nor diverged)."""
    with gl.open_log(path) as f:
        prov = gl.provenance(f)
        cfg = prov.get("config", {})
        if isinstance(cfg, str):
            cfg = json.loads(cfg)
        s = gl.series(f)
        h = gl.heads(f)
        summ = gl.summary(f)
    diverged = bool(int(summ.get("diverged", 0)))
    if not diverged and not int(summ.get("completed", 0)):
        return None
    final_val = float(summ.get("final_val_loss", math.nan))
    attn = np.nanmax(h["attn_logit_max"], axis=(1, 2)) if "attn_logit_max" in h and len(h["step"]) else np.array([])
    sqk = (np.nanmax(h["s_qk"], axis=(1, 2)) if "s_qk" in h and len(h["step"]) and np.isfinite(h["s_qk"]).any()
           else np.full(len(attn), math.nan))
    return Run(condition_of(cfg), float(cfg["lr"]), int(cfg.get("seed", 0)), math.nan if diverged else final_val,
               diverged, float(s["loss"][0]) if len(s["loss"]) else math.nan, np.asarray(h.get("step", [])), attn, sqk)


def find_logs(items: list[str]) -> list[Path]:
    out: list[Path] = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            out += sorted(q for q in p.glob("*/log.h5"))
        else:
            out.append(p)
    return out


def grid(runs: list[Run], cond: str, L0: float) -> tuple[np.ndarray, list[int], np.ndarray]:
    """lrs [n], seeds [m], clipped final losses [n, m] (NaN where a run is missing)."""
    rs = [r for r in runs if r.cond == cond]
    lrs = np.array(sorted({r.lr for r in rs}))
    seeds = sorted({r.seed for r in rs})
    L = np.full((len(lrs), len(seeds)), math.nan)
    for r in rs:
        v = L0 if r.diverged or not math.isfinite(r.final_val) else min(r.final_val, L0)
        L[np.searchsorted(lrs, r.lr), seeds.index(r.seed)] = v
    return lrs, seeds, L


def sensitivity(L: np.ndarray) -> float:
    """Mean over learning rates of (mean over seeds) − its minimum; rows with no run are left out."""
    curve = np.nanmean(L, axis=1)
    curve = curve[np.isfinite(curve)]
    return float(np.mean(curve - curve.min())) if len(curve) else math.nan


def bootstrap(L: np.ndarray, rng: np.random.Generator, ref: np.ndarray | None = None) -> np.ndarray:
    """Sensitivity (or sensitivity − ref's, seeds paired by column) under seed resampling."""
    m = L.shape[1]
    out = np.empty(BOOTSTRAP_DRAWS)
    for i in range(BOOTSTRAP_DRAWS):
        cols = rng.integers(0, m, m)
        v = sensitivity(L[:, cols])
        out[i] = v - sensitivity(ref[:, cols]) if ref is not None else v
    return out


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="gpt2/train logs, or directories of <run>/log.h5")
    ap.add_argument("--out", "--out-dir", dest="out_dir", metavar="DIR",
                    help="where the figure and table go (default: GAUGELAB_FIGURES or figures/)")
    a = ap.parse_args(argv)
    if a.out_dir:
        os.environ["GAUGELAB_FIGURES"] = a.out_dir
    loaded = [load(p) for p in find_logs(a.logs)]
    runs = [r for r in loaded if r is not None]
    if len(runs) < len(loaded):
        print(f"fig_lr_sensitivity.py: {len(loaded) - len(runs)} unfinished runs left out")
    if not runs:
        sys.exit("fig_lr_sensitivity.py: no logs found in " + " ".join(a.logs))
    L0 = float(np.nanmean([r.first_loss for r in runs]))
    conds = [c for c in ORDER if any(r.cond == c for r in runs)]
    rng = np.random.default_rng(0)

    optimizers = sorted({parts(c)[1] for c in conds})  # a row of panels per optimizer: AdamW, then Muon
    fig, axes_grid = plt.subplots(len(optimizers), 4, figsize=(18, 4.0 * len(optimizers)), squeeze=False)
    rows = []
    refs = {base: grid(runs, base, L0)[2] for base in ("A", "MA", "oA", "oMA", "N", "MN", "oN", "oMN") if base in conds}
    for i, c in enumerate(conds):
        fam, muon, handling = parts(c)
        # each family against its own condition A; the gradient projections against N (no multipliers)
        base = fam + ("M" if muon else "") + ("N" if handling in PROJECTIONS else "A")
        ref = refs.get(base)
        lrs, seeds, L = grid(runs, c, L0)
        color = COLOR.get(handling, f"C{i % 10}")
        ax_l, ax_a, ax_t, ax_s = axes_grid[optimizers.index(muon)]
        mean = np.nanmean(L, axis=1)
        lo, hi = np.nanmin(L, axis=1), np.nanmax(L, axis=1)
        ls = "--" if fam else "-"
        ax_l.plot(lrs, mean, "o" + ls, color=color, label=NAMES.get(c, c), ms=4)
        ax_l.fill_between(lrs, lo, hi, color=color, alpha=0.15, lw=0)
        rs = [r for r in runs if r.cond == c]
        div = [r for r in rs if r.diverged]
        if div:
            ax_l.scatter([r.lr for r in div], [L0] * len(div), marker="x", color=color, s=30)
        # the largest attention logit over the run, per lr (mean over seeds)
        amax = [np.nanmean([np.nanmax(r.attn) if len(r.attn) else math.nan for r in rs if r.lr == lr]) for lr in lrs]
        ax_a.plot(lrs, amax, "o-", color=color, ms=4, label=NAMES.get(c, c))
        survived = [r.lr for r in rs if not r.diverged]
        lr_top = max(survived) if survived else math.nan
        top = [r for r in rs if r.lr == lr_top and not r.diverged and len(r.attn)]  # a seed that survived it
        if top:
            r0 = min(top, key=lambda r: r.seed)
            ax_t.plot(r0.step, r0.attn, color=color, lw=1.2, label=f"{NAMES.get(c, c)} (lr {lr_top:g})")
            if np.isfinite(r0.sqk).any():
                ax_s.plot(r0.step, r0.sqk, color=color, lw=1.2, label=NAMES.get(c, c))
        boot = bootstrap(L, rng)
        sens = sensitivity(L)
        diff = ""
        if ref is not None and c != base and ref.shape == L.shape:
            d = bootstrap(L, rng, ref)
            diff = f"{sens - sensitivity(ref):+.3f} [{np.percentile(d, 2.5):+.3f}, {np.percentile(d, 97.5):+.3f}]"
        best_i = int(np.nanargmin(mean))
        rows.append(f"| {NAMES.get(c, c)} | {sens:.3f} [{np.percentile(boot, 2.5):.3f}, {np.percentile(boot, 97.5):.3f}] "
                    f"| {diff or '—'} | {mean[best_i]:.3f} at {lrs[best_i]:g} | {len(div)}/{len(rs)} | {lr_top:g} "
                    f"| {np.nanmax(amax):.3g} | {len(seeds)} |")
    for muon, axes in zip(optimizers, axes_grid):
        ax_l, ax_a, ax_t, ax_s = axes
        opt = "Muon" if muon else "AdamW"
        if any(r.diverged and parts(r.cond)[1] == muon for r in runs):  # only then does the initial loss enter
            ax_l.axhline(L0, color="0.5", ls=":", lw=1)
            ax_l.annotate("initial loss: diverged runs (x)", (0.02, L0), xycoords=("axes fraction", "data"),
                          ha="left", va="top", fontsize=7, color="0.4")
        for ax in axes[:2]:
            ax.set_xscale("log")
            ax.set_xlabel("peak learning rate" + (" (AdamW groups; Muon's is 10x)" if muon else ""))
        ax_l.set_ylabel("final validation loss (nats)")
        ax_l.set_title(f"{opt} (a) loss vs learning rate (band: seed min–max)", fontsize=9)
        ax_a.set_yscale("log")
        ax_a.set_ylabel("max attention logit |q·k|/√d_h over the run")
        ax_a.set_title(f"{opt} (b) attention-logit growth", fontsize=9)
        ax_t.set_yscale("log")
        ax_t.set_xlabel("step")
        ax_t.set_ylabel("max attention logit")
        ax_t.set_title(f"{opt} (c) at the largest surviving lr (one seed)", fontsize=9)
        ax_s.set_yscale("log")
        ax_s.set_xlabel("step")
        ax_s.set_ylabel("max over heads of s_Q·s_K")
        ax_s.set_title(f"{opt} (d) Q/K scale product, same runs", fontsize=9)
        ax_l.legend(fontsize=7, loc="center left")  # the empty middle: low losses below, diverged runs above
        ax_t.legend(fontsize=6)
        if not ax_s.lines:
            ax_s.text(0.5, 0.5, "no multipliers logged", transform=ax_s.transAxes, ha="center", color="0.5")
    fig.tight_layout()
    n = len(runs)
    figstyle.save(fig, "fig_lr_sensitivity",
                  f"Learning-rate sensitivity of the Q/K-gauge handlings ({n} runs). (a) Final validation loss against "
                  "the peak learning rate, mean over seeds with the seed range shaded; crosses: diverged runs, counted "
                  f"at the initial loss {L0:.2f}. (b) The largest attention logit reached during the run. (c) Its "
                  "trajectory at the largest learning rate each condition survives, and (d) the largest Q/K multiplier scale "
                  "product s_Q·s_K in the same runs. Top row AdamW, bottom row Muon (when run). For the Muon runs the learning rate is that of their AdamW groups "
                  "(embeddings, norms, multipliers); Muon's own is 10 times it. Dashed: runs started off the balanced Q/K "
                  "slice by a pure gauge move (--qk-gauge-init). No paper value exists for this "
                  "experiment (the seeds do not run it); Wortsman et al.'s Fig. 1 is the format.")
    table = ["| condition | LR sensitivity [95 % CI] | minus A's (N's for P, Pa; same optimizer and start) [95 % CI] | best val loss at lr | diverged | "
             "largest surviving lr | max attention logit | seeds |", "|---|---|---|---|---|---|---|---|", *rows, "",
             f"LR sensitivity: mean over the grid's learning rates of (mean-over-seeds final validation loss − its "
             f"minimum), diverged runs at the initial loss {L0:.3f}; intervals: 95 % percentile bootstrap over seeds "
             f"({BOOTSTRAP_DRAWS} draws, seeds paired with A's of the same optimizer and start for the difference; a point "
             f"interval means one seed). {n} runs."]
    figstyle.save_table("table_lr_sensitivity", "\n".join(table))


if __name__ == "__main__":
    figstyle.run(main, sys.argv[1:])
