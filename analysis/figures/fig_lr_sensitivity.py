#!/usr/bin/env python3
"""The instability instrument's analysis (Wortsman et al. 2023, arXiv 2309.14322, Fig. 1 format):
final validation loss against learning rate per way of handling the Q/K gauge, the learning-rate
sensitivity of each with paired statistics by seed, the divergence fraction, and the attention-logit and
s_Q·s_K growth at the largest learning rate each condition survives.

LR sensitivity of a condition (Wortsman et al. §3.1): E_lr[min(L(lr), L0) − L*], the mean over the
grid's learning rates of the excess of the final validation loss over the best, a diverged run counted at
the initial loss L0 (the mean step-1 training loss of all runs, ≈ ln V), computed per seed so that
conditions pair by seed. Statistics (analysis/stats.py): the mean over seeds with a t-interval; each
condition minus its reference (the logged `condition_reference`: A of the same optimizer and start, N for
the projections) paired by seed, with a t-interval and an exact sign-flip p-value; beside them the grid's
measured null (pairs equal by construction: B − C from the balanced start, P − N); a verdict "differ",
"equivalent" (TOST within the margin declared below) or "undecided" by the rule stats.rule_text() states.
A percentile bootstrap over 3 seeds is not used: it has 10 distinct resamples and covers ~75 %.

Usage: fig_lr_sensitivity.py [--out DIR] LOG_OR_DIR...   (gpt2/train logs, or directories holding
<run>/log.h5 as gpt2/experiments/lr_sensitivity.sh writes them). Writes fig_lr_sensitivity.png and
table_lr_sensitivity.md (GAUGELAB_FIGURES or --out, default figures/)."""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

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
import stats
import manifest
from figure_decl import Figure
from seed000_runs import PAPER_TABLE1

# The equivalence margin of the verdicts, in nats of LR sensitivity, declared on 2026-11-27 before any grid
# with >= 8 seeds ran: two handlings whose sensitivities agree within it are "equivalent". 0.05 is above
# the grid's measured noise between handlings equal by construction at 3 seeds (P − N ≈ 0.03), so it can be
# met, and a quarter of the QK-norm and cap effects the 3-seed grid showed (0.2–0.4), so it does not hide
# them. A flag (--margin); a verdict names the margin it used.
MARGIN = 0.05
# Pairs equal by construction up to rounding: the grid's measured null, printed beside every difference
# (for each optimizer and start). B ≡ C from the balanced start (r_Q and r_K get identical gradients);
# P ≡ N (the raw gradient is already horizontal, Prop. 38: the exact projection changes it at rounding).
# Rounding is amplified at large learning rates, and that spread is what the null measures.
NULLS = (("B", "C"), ("P", "N"))


MIN_SEEDS = 8  # a verdict rests on at least this many seeds per condition (the statistics issue's floor)

# Seed 000, Table 1 (seed000_runs.PAPER_TABLE1): the final Q/K drift max_h |log(s_Q/s_K)| (its eq. 3) of GPT-2 124M
# after 20 000 bf16 steps, mean ± population std over its 3 seeds as the paper states them, per condition key. Printed
# beside ours; no verdict: the model and the run length differ.
SEED000_DRIFT = {c: (float(np.mean([v[2] for v in by_seed.values()])), float(np.std([v[2] for v in by_seed.values()])))
                 for c, by_seed in PAPER_TABLE1.items()}

# The figure index's entry: `make figures` draws it from the demo slice (6 runs, 1 seed), which decides nothing; the
# verdicts come from the full grid (`make lr-grid`), whose table the index prints in its own section.
FIGURE = Figure(seed="instrument", label="learning-rate sensitivity", what="LR sensitivity of the Q/K-gauge handlings",
                inputs=manifest.LRS_DEMO, status="beyond the seeds",
                paper="(no seed runs this experiment; seed 000 implies B is less stable than A)")


@dataclass
class Run:
    cond: str            # the run's condition label as the trainer logged it (conditions.hpp): key, "M" for
                         # Muon, "o" for a gauge-offset start, e.g. "oMB"
    lr: float
    seed: int
    final_val: float     # NaN if diverged
    diverged: bool
    first_loss: float
    step: np.ndarray     # /heads/step
    attn: np.ndarray     # [records] max attention logit over layers and heads
    sqk: np.ndarray      # [records] max s_Q·s_K over layers and heads (NaN without multipliers)
    key: str = ""        # the conditions table's key ("B")
    title: str = ""      # its title as logged ("Muon, B: GaugeFix, offset start")
    reference: str = ""  # the label it is compared with ("oMA"; "" for a reference itself)
    index: int = 0       # the row's place in the conditions table (the order of curves and table rows)
    muon: bool = False
    offset: bool = False
    stop: str = ""       # a diverged run's cause: "non-finite loss" or "non-finite gradient" (the loss still finite)
    drift: float = math.nan          # final Q/K drift max_h |log(s_Q/s_K)| of the multipliers (seed 000 eq. 3)
    eff_imbalance: float = math.nan  # final max_h |log(‖W_Q,eff‖/‖W_K,eff‖)| of the effective maps (what no fix sees)


def label_of(summ: dict, path) -> tuple[str, str, str, str, int]:
    """(label, key, title, reference, index) as the trainer logged them in /summary."""
    if "condition_label" not in summ:
        raise ValueError(f"{path}: the log names no condition label (a run from before the conditions table); "
                         "rerun it with this gaugelab")
    ref = str(summ.get("condition_reference", "-"))
    return (str(summ["condition_label"]), str(summ.get("condition", "")), str(summ.get("condition_title", "")),
            "" if ref == "-" else ref, int(summ.get("condition_index", 0)))


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
    label, key, title, reference, index = label_of(summ, path)
    final_val = float(summ.get("final_val_loss", math.nan))
    attn = np.nanmax(h["attn_logit_max"], axis=(1, 2)) if "attn_logit_max" in h and len(h["step"]) else np.array([])
    sqk = (np.nanmax(h["s_qk"], axis=(1, 2)) if "s_qk" in h and len(h["step"]) and np.isfinite(h["s_qk"]).any()
           else np.full(len(attn), math.nan))
    stop = str(summ.get("stop_reason", ""))
    if diverged and stop not in ("non-finite loss", "non-finite gradient"):  # a log from before stop_reason
        last_loss = float(s["loss"][-1]) if len(s["loss"]) else math.nan
        stop = "non-finite gradient" if math.isfinite(last_loss) else "non-finite loss"
    return Run(label, float(cfg["lr"]), int(cfg.get("seed", 0)), math.nan if diverged else final_val,
               diverged, float(s["loss"][0]) if len(s["loss"]) else math.nan, np.asarray(h.get("step", [])), attn, sqk,
               key=key, title=title or label, reference=reference, index=index,
               muon=str(summ.get("optimizer", cfg.get("optimizer", "adamw"))) == "muon",
               offset=float(cfg.get("qk-gauge-init", 0) or 0) > 0, stop=stop if diverged else "",
               drift=float(summ.get("final_drift_max", math.nan)),
               eff_imbalance=float(summ.get("final_eff_imbalance_max", math.nan)))


def spread(values: list[float]) -> str:
    """median [min, max] of the finite values, or — when there are none."""
    v = np.array([x for x in values if math.isfinite(x)])
    return f"{np.median(v):.3g} [{v.min():.3g}, {v.max():.3g}]" if len(v) else "—"


def drift_rows(runs: list[Run], conds: list[str], info: dict) -> list[str]:
    """One row per condition: the final Q/K drift and effective-map imbalance over its completed runs, beside seed
    000's drift for the conditions it ran, and the ratio of the seed's mean to our largest drift."""
    out = []
    for c in conds:
        done = [r for r in runs if r.cond == c and not r.diverged]
        if not done or not any(math.isfinite(r.drift) for r in done):
            continue
        seed = SEED000_DRIFT.get(info[c].key) if not info[c].muon and not info[c].offset else None
        ours = max((r.drift for r in done if math.isfinite(r.drift)), default=math.nan)
        ratio = ("—" if seed is None else "the seed's is 0 too" if seed[0] == 0 and ours == 0 else
                 f"ours is 0, the seed's {seed[0]:g}" if ours == 0 else f"{seed[0] / ours:.3g}")
        out.append(f"| {info[c].title} | {spread([r.drift for r in done])} | "
                   f"{spread([r.eff_imbalance for r in done])} | "
                   f"{'—' if seed is None else f'{seed[0]:.3f} ± {seed[1]:.3f}'} | {ratio} | {len(done)} |")
    return out


def labels_in_order(runs: list[Run]) -> list[str]:
    """Every label of `runs`, in the conditions table's order: AdamW before Muon, balanced before offset."""
    first = {}
    for r in runs:
        first.setdefault(r.cond, r)
    return sorted(first, key=lambda c: (first[c].offset, first[c].muon, first[c].index))


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
    """lrs [n], seeds [m], clipped final losses [n, m], over the seeds that ran every one of the condition's lrs: a
    seed still running (or cut short) would have its sensitivity taken over fewer lrs, so it is left out whole."""
    rs = [r for r in runs if r.cond == cond]
    lrs = np.array(sorted({r.lr for r in rs}))
    seeds = sorted({r.seed for r in rs})
    L = np.full((len(lrs), len(seeds)), math.nan)
    for r in rs:
        v = L0 if r.diverged or not math.isfinite(r.final_val) else min(r.final_val, L0)
        L[np.searchsorted(lrs, r.lr), seeds.index(r.seed)] = v
    whole = ~np.isnan(L).any(axis=0)
    return lrs, [s for s, w in zip(seeds, whole) if w], L[:, whole]


def paired_by_seed(runs: list[Run], c: str, ref: str, L0: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-seed sensitivities of c and ref over the seeds both ran on the same learning rates, in seed order."""
    lrs_c, seeds_c, Lc = grid(runs, c, L0)
    lrs_r, seeds_r, Lr = grid(runs, ref, L0)
    if len(lrs_c) != len(lrs_r) or not np.allclose(lrs_c, lrs_r):
        return None
    common = [s for s in seeds_c if s in seeds_r]
    if not common:
        return None
    x = stats.sensitivity_per_seed(Lc[:, [seeds_c.index(s) for s in common]])
    y = stats.sensitivity_per_seed(Lr[:, [seeds_r.index(s) for s in common]])
    return x, y


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="gpt2/train logs, or directories of <run>/log.h5")
    ap.add_argument("--out", "--out-dir", dest="out_dir", metavar="DIR",
                    help="where the figure and table go (default: GAUGELAB_FIGURES or figures/)")
    ap.add_argument("--margin", type=float, default=MARGIN,
                    help=f"equivalence margin of the verdicts in nats of LR sensitivity (declared: {MARGIN})")
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
    conds = labels_in_order(runs)
    info = {r.cond: r for r in runs}  # label -> a run carrying its title, reference and flags

    optimizers = sorted({info[c].muon for c in conds})  # a row of panels per optimizer: AdamW, then Muon
    fig, axes_grid = plt.subplots(len(optimizers), 4, figsize=(18, 4.0 * len(optimizers)), squeeze=False)
    rows = []
    n_seeds = min(len(grid(runs, c, L0)[1]) for c in conds)  # the seeds every lr of a condition ran, fewest
    slice_only = n_seeds < MIN_SEEDS
    whole_seeds = {c: set(grid(runs, c, L0)[1]) for c in conds}
    partial = sum(1 for r in runs if r.seed not in whole_seeds[r.cond])  # runs of a seed not yet whole
    keys = sorted({info[c].key for c in conds}, key=lambda k: next(info[c].index for c in conds if info[c].key == k))
    colors = {k: f"C{i % 10}" for i, k in enumerate(keys)}  # one colour per condition, in every optimizer's row
    for i, c in enumerate(conds):
        muon, name = info[c].muon, info[c].title
        base = info[c].reference  # the logged comparison: the same optimizer and start's A (N for projections)
        ref = grid(runs, base, L0)[2] if base and base in conds else None
        lrs, seeds, L = grid(runs, c, L0)
        color = colors[info[c].key]
        ax_l, ax_a, ax_t, ax_s = axes_grid[optimizers.index(muon)]
        mean = np.nanmean(L, axis=1)
        lo, hi = np.nanmin(L, axis=1), np.nanmax(L, axis=1)
        ls = "--" if info[c].offset else "-"
        ax_l.plot(lrs, mean, "o" + ls, color=color, label=name, ms=4)
        ax_l.fill_between(lrs, lo, hi, color=color, alpha=0.15, lw=0)
        rs = [r for r in runs if r.cond == c]
        div = [r for r in rs if r.diverged]
        if div:
            ax_l.scatter([r.lr for r in div], [L0] * len(div), marker="x", color=color, s=30)
        # the largest attention logit over the run, per lr (mean over seeds)
        amax = [np.nanmean([np.nanmax(r.attn) if len(r.attn) else math.nan for r in rs if r.lr == lr]) for lr in lrs]
        ax_a.plot(lrs, amax, "o-", color=color, ms=4, label=name)
        survived = [r.lr for r in rs if not r.diverged]
        lr_top = max(survived) if survived else math.nan
        top = [r for r in rs if r.lr == lr_top and not r.diverged and len(r.attn)]  # a seed that survived it
        if top:
            r0 = min(top, key=lambda r: r.seed)
            ax_t.plot(r0.step, r0.attn, color=color, lw=1.2, label=f"{name} (lr {lr_top:g})")
            if np.isfinite(r0.sqk).any():
                ax_s.plot(r0.step, r0.sqk, color=color, lw=1.2, label=name)
        per_seed = stats.sensitivity_per_seed(L)  # [seeds]: paired across conditions by seed
        own = stats.paired_difference(per_seed, np.zeros_like(per_seed))
        diff, verdict = "—", "—"
        if ref is not None:
            d = paired_by_seed(runs, c, base, L0)
            if d is not None:
                paired = stats.paired_difference(*d, name=f"{c} − {base}")
                verdict = ("no verdict (a slice)" if slice_only or paired.n < MIN_SEEDS else
                           stats.verdict(paired, stats.tost(*d, margin=a.margin) if paired.n >= 2 else None))
                diff = paired.text()
        best_i = int(np.nanargmin(mean))
        n_grad = sum(r.stop == "non-finite gradient" for r in div)
        stopped = f"{len(div)}/{len(rs)}" + (f" ({len(div) - n_grad} loss, {n_grad} gradient)" if div else "")
        fit = stats.logistic_lr50([r.lr for r in rs], [r.diverged for r in rs])
        lr50 = (f"{fit.lr50:.3g} [{fit.lo:.3g}, {fit.hi:.3g}]" if math.isfinite(fit.lr50) else
                f"— ({fit.reason})" if fit.reason else "—")
        rows.append(f"| {name} | {own.mean:.3f} [{own.lo:.3f}, {own.hi:.3f}] | {diff} | {verdict} "
                    f"| {mean[best_i]:.3f} at {lrs[best_i]:g} | {stopped} | {lr50} | {lr_top:g} "
                    f"| {np.nanmax(amax):.3g} | {len(seeds)} |")
    nulls = []
    for c in conds:  # the measured null of the same grid, for each optimizer and start that ran both
        for a_key, b_key in NULLS:
            if info[c].key != a_key:
                continue
            other = next((x for x in conds if info[x].key == b_key and info[x].muon == info[c].muon
                          and info[x].offset == info[c].offset), None)  # the same optimizer and start
            d = paired_by_seed(runs, c, other, L0) if other else None
            if d is not None:
                nulls.append(f"| {c} − {other} (equal by construction, up to rounding) | {stats.measured_null(*d).text()} |")
    for muon, axes in zip(optimizers, axes_grid):
        ax_l, ax_a, ax_t, ax_s = axes
        opt = "Muon" if muon else "AdamW"
        if any(r.diverged and r.muon == muon for r in runs):  # only then does the initial loss enter
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
    where = ", ".join(a.logs)
    run_set = (f"the full grid in {where}, at least {MIN_SEEDS} seeds with every lr per condition" if not slice_only else
               f"a slice in {where}: {n_seeds} seed(s) with every lr for some condition, below the {MIN_SEEDS} a "
               "verdict rests on, so no verdict is printed")
    if partial:
        run_set += f"; {partial} runs of seeds that lack a learning rate are left out of the statistics"
    drifts = drift_rows(runs, conds, info)
    table = ["| condition | LR sensitivity, mean over seeds [95 % t-interval] | minus its reference's (A's; N's for the "
             "projections; same optimizer and start), paired by seed [95 % t], sign-flip p | verdict | best val loss at lr "
             "| stopped (non-finite loss, non-finite gradient only) | lr at 50 % stopped, logistic fit [95 %] "
             "| largest surviving lr | max attention logit | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|", *rows, "",
             "Measured null of the same grid (differences that are zero by construction):", "",
             "| pair | difference [95 % t], sign-flip p |", "|---|---|",
             *(nulls or ["| (no such pair in these runs) | — |"]), "",
             f"LR sensitivity per seed: mean over the grid's learning rates of (that seed's final validation loss − its "
             f"minimum over the learning rates), diverged runs at the initial loss {L0:.3f} (Wortsman et al. §3.1, per "
             f"seed so that conditions pair by seed). Verdict rule: {stats.rule_text(margin=a.margin).rstrip('.')}. "
             f"Run set: {run_set} ({n} runs).",
             *(["", "Q/K drift at the end of training, over each condition's completed runs (every lr and seed), beside "
                "seed 000's Table 1 (GPT-2 124M, 20 000 bf16 steps; here the grid's model and length, so a comparison "
                "of size, not a verdict):", "",
                "| condition | final drift max_h \\|log(s_Q/s_K)\\| (seed 000 eq. 3), median [min, max] | final "
                "effective-map imbalance max_h \\|log(‖W_Q,eff‖/‖W_K,eff‖)\\|, median [min, max] | seed 000's drift, "
                "mean ± std (3 seeds) | the seed's mean / our largest | runs |", "|---|---|---|---|---|---|", *drifts]
               if drifts else [])]
    figstyle.save_table("table_lr_sensitivity", "\n".join(table))


if __name__ == "__main__":
    figstyle.run(main, sys.argv[1:])
