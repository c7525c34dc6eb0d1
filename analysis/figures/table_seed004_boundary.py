#!/usr/bin/env python3
"""Beyond seed 004, the claim tested: does soft gauge fixing (λ > 0) widen GD's stable learning-rate range?
Per ε × initialisation scale × λ, over the whole lr grid: seeds diverged and oscillating, the number of the grid's
learning rates that end stable per seed minus λ = 0's, paired by seed (mean, 95 % t-interval, exact sign-flip p;
analysis/stats.py), the largest lr at which no seed diverged, and the median final lr·S of the runs that survived
lr ≥ 0.02 (S: the Hessian's top eigenvalue of the whole loss; ≈ 2 is GD's edge of stability). The verdict under the
table is the declared claim rule's (FIGURE below); a "partly" holds only after Holm's step-down over every (ε, σ, λ)
comparison (analysis/claim_rules.py).

Input: the log of experiment relu_boundary (as fig_seed004_boundary).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import seed004_relu as s4
import stats
import claim_rules as cr
from figure_decl import Claim, Figure


def _decide(paths):
    runs = s4.sweep_runs(str(paths[0]))
    col = {k: np.asarray(v) for k, v in runs.items()}
    lrs = sorted(set(col["lr"].astype(float)))
    settings = [(e, s) for e in sorted(set(col["eps"].astype(float))) for s in sorted(set(col["init-scale"].astype(float)))]
    lams = [lam for lam in sorted(set(col["lambda"].astype(float))) if lam > 0]
    parts = []
    for eps, init in settings:
        y = s4.stable_count_by_seed(col, lrs, eps=eps, **{"init-scale": init, "lambda": 0.0})
        for lam in lams:
            x = s4.stable_count_by_seed(col, lrs, eps=eps, **{"init-scale": init, "lambda": lam})
            name = f"ε {eps:g}, σ {init:g}, λ {lam:g}"
            parts.append((name, cr.paired(x, y, MARGIN, name, claimed="higher")))
    dense = {k: np.asarray(v) for k, v in s4.sweep_runs(str(paths[1])).items()}
    a, b = ([s4.stable_count_by_seed(c, lrs, eps=eps, **{"init-scale": init, "lambda": 0.0}) for eps, init in settings]
            for c in (col, dense))
    return cr.beside_null(cr.combine_many(parts), np.concatenate(a), np.concatenate(b),
                          s4.KERNEL_NULL.format(what=f"stable lr cells per seed, over the {len(settings)} (ε, σ) cells"))


# Declared margin: half a learning-rate cell per seed (one cell is the smallest change one seed can show).
MARGIN = 0.5
CLAIM = Claim(
    says="gauge fixing (λ > 0) widens gradient descent's stable learning-rate range",
    rule="per (ε, init σ, λ > 0): the number of the grid's learning rates that end stable (neither diverged nor "
         "oscillating) per seed, minus λ = 0's, paired by seed, claimed higher; margin ±0.5 cell; each comparison at "
         "alpha 0.05 (a yes over every one needs no correction), a partly only after Holm's step-down over all of them; "
         f"beside it, not a part of it, {s4.KERNEL_NULL_RULE}",
    decide=_decide)

FIGURE = Figure(seed="004", label="stability boundary (table)",
                what="the claim tested: stable learning-rate cells per seed vs λ = 0, paired by seed",
                inputs=("relu_boundary", "relu_boundary_dense"), status="regenerated", paper="gauge fixing widens the stable lr range",
                claim=CLAIM)


def main(path: str, null: str) -> None:
    pts, cfg = s4.sweep_points(path, made_by="make figures (experiment relu_boundary)")
    runs = s4.sweep_runs(path)
    settings = cfg["settings"]
    col = {k: np.asarray(runs[k]) for k in runs}
    n = len(col["row"])
    init_of = col["init-scale"].astype(float) if "init-scale" in col else np.full(n, float(settings["init-scale"]))
    eps_of = col["eps"].astype(float) if "eps" in col else np.full(n, float(settings["eps"]))
    lam_of, lr_of = col["lambda"].astype(float), col["lr"].astype(float)
    lrs, lams = sorted(set(lr_of)), sorted(set(lam_of))
    lines = ["| ε | init σ | λ | diverged | oscillating | stable lr cells per seed − λ = 0's, paired [95 % t] p n "
             "| largest lr, no seed diverged | final lr·S at lr ≥ 0.02 (median) |", "|---|---|---|---|---|---|---|---|"]
    for eps in sorted(set(eps_of)):
        for init in sorted(set(init_of)):
            base = np.isclose(eps_of, eps) & np.isclose(init_of, init)

            def max_ok(lam):
                cells = [np.nonzero(base & np.isclose(lam_of, lam) & np.isclose(lr_of, lr))[0] for lr in lrs]
                ok = [lr for lr, c in zip(lrs, cells) if len(c) and not (col["stability"][c] == "diverged").any()]
                return max(ok) if ok else float("nan")

            y = s4.stable_count_by_seed(col, lrs, eps=eps, **{"init-scale": init, "lambda": 0.0})
            for lam in lams:
                sel = np.nonzero(base & np.isclose(lam_of, lam))[0]
                nd = int((col["stability"][sel] == "diverged").sum())
                no = int((col["stability"][sel] == "oscillating").sum())
                diff = "—"
                if lam > 0:
                    x = s4.stable_count_by_seed(col, lrs, eps=eps, **{"init-scale": init, "lambda": lam})
                    diff = stats.paired_difference(x, y).text("+.2f")
                hi_lr = sel[(lr_of[sel] >= 0.02) & (col["stability"][sel] != "diverged")]
                sharp = (np.nanmedian(lr_of[hi_lr] * col["sharpness_final"][hi_lr].astype(float))
                         if "sharpness_final" in col and len(hi_lr) else float("nan"))
                lines.append(f"| {eps:g} | {init:g} | {lam:g} | {nd}/{len(sel)} | {no}/{len(sel)} | {diff} | "
                             f"{max_ok(lam):g} | {sharp:.2f} |")
    verdict = _decide([path, null])
    md = "\n".join(lines) + f"""

Seed 004's claim (gauge fixing widens the stable learning-rate range), tested over {len(lrs)} learning rates
({lrs[0]:g}–{lrs[-1]:g}) × {cfg['seeds']} seeds per cell, {settings['steps']} GD steps (the plateau count). Stable:
a seed's run at one lr neither diverged nor oscillating; the difference pairs λ with λ = 0 seed by seed.
Claim rule: {CLAIM.rule}. Verdict: {verdict}. {s4.protocol(settings, cfg['seeds'])}
"""
    figstyle.save_table("table_seed004_boundary", md)


if __name__ == "__main__":
    a = figstyle.parse_args(__doc__, default="runs/relu_boundary.h5", null="runs/relu_boundary_dense.h5")
    figstyle.run(main, a.log, a.null)
