#!/usr/bin/env python3
"""Seed 004 Fig. 4: the learning-rate stress test, validation MSE against lr for baseline (λ = 0) and
gauge-fixed (λ = 0.2) training, with each configuration's stability label; the paper's Table II beside.

Input: the log of the seed-004 sweep (/tables/points and /tables/runs).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import seed004_relu as s4
import table_seed004_lr
from figure_decl import Figure

MARK = {"stable": "o", "marginal": "D", "unstable": "X"}


FIGURE = Figure(seed="004", label="Fig. 4", what="learning-rate stress test (figure)", inputs=("relu_tables", "relu_tables_dense"),
                status="regenerated", paper="gauge fixing expands the stable lr range", claim=table_seed004_lr.CLAIM)


def main(path: str) -> None:
    pts, cfg = s4.sweep_points(path, made_by="make figures (experiment relu_tables)")
    runs = s4.sweep_runs(path)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for lam, color in ((0.0, "C0"), (0.2, "C1")):
        idx = [i for i in range(len(pts["point"])) if abs(float(pts["lambda"][i]) - lam) < 1e-12]
        idx.sort(key=lambda i: float(pts["lr"][i]))
        lrs = [float(pts["lr"][i]) for i in idx]
        stats = [s4.finite_stats(runs, "final_val_mse", lr=lr, **{"lambda": lam}) for lr in lrs]
        m = np.array([s[0] for s in stats])
        ax.errorbar(lrs, m, yerr=figstyle.nonneg_yerr(m, [s[1] for s in stats]), color=color, capsize=3, zorder=2,
                    label=f"ours, {'baseline' if lam == 0 else f'gauge-fixed λ = {lam:g}'}")
        for lr, i, y in zip(lrs, idx, m):
            ax.plot(lr, y, MARK[str(pts["stability"][i])], color=color, ms=7, zorder=3)
        pl = sorted(lr for (l, lr) in s4.PAPER_TABLE2 if l == lam)
        ax.plot(pl, [s4.PAPER_TABLE2[(lam, lr)][0] for lr in pl], "--", color=color, alpha=0.5,
                label=f"paper, {'baseline' if lam == 0 else 'λ = 0.2'}")
        for lr in pl:
            # the paper's labels drawn over ours (hollow, larger), so a disagreement shows
            ax.plot(lr, s4.PAPER_TABLE2[(lam, lr)][0], MARK[s4.PAPER_TABLE2[(lam, lr)][1]], color=color, alpha=0.9,
                    ms=13, mfc="none", mew=1.6, zorder=4)
    for label, mk in MARK.items():
        ax.plot([], [], mk, color="k", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel("validation MSE (seeds that did not diverge)")
    ax.set_title("seed 004 Fig. 4: learning-rate stress test")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    caption = f"""
Seed 004 Fig. 4 regenerated: validation MSE against the learning rate for baseline (λ = 0) and gauge-fixed (λ = 0.2)
training, mean ± population std over the seeds that did not diverge (lower bar stopped at 0); marker = the configuration's stability label
(filled: ours by the stated rule; hollow: the paper's Table II labels, dashed its values). {s4.protocol(cfg['settings'], cfg['seeds'])}
{s4.differences()}{s4.penalty_note(pts)}
"""
    figstyle.save(fig, "fig_seed004_lr", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/relu_tables.h5", null="runs/relu_tables_dense.h5").log)
