#!/usr/bin/env python3
"""Seed 004 Fig. 3: validation (and training) MSE against the gauge-fixing strength λ at lr = 1e-2,
mean ± std over seeds, ours beside the paper's Table I values.

Input: the log of the seed-004 sweep `gaugelab sweep relu --lr ... --lambda ...` (/tables/runs).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import seed004_relu as s4
import table_seed004_lambda
from figure_decl import Figure

LR = 1e-2


FIGURE = Figure(seed="004", label="Fig. 3", what="validation MSE vs λ (figure)", inputs=("relu_tables", "relu_tables_dense"),
                status="regenerated", paper="mild optimum near λ = 0.05", claim=table_seed004_lambda.CLAIM)


def main(path: str) -> None:
    pts, cfg = s4.sweep_points(path, made_by="make figures (experiment relu_tables)")
    runs = s4.sweep_runs(path)
    lams = sorted({float(v) for v, lr in zip(pts["lambda"], pts["lr"]) if abs(float(lr) - LR) < 1e-12})
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    notes = []
    for ax, metric, col in ((axes[0], "final_val_mse", 2), (axes[1], "final_train_mse", 0)):
        stats = [s4.finite_stats(runs, metric, lr=LR, **{"lambda": lam}) for lam in lams]
        m = np.array([s[0] for s in stats])
        sd = np.array([s[1] for s in stats])
        ax.errorbar(lams, m, yerr=figstyle.nonneg_yerr(m, sd), fmt="o-", capsize=3, label="ours (seeds that did not diverge)")
        pl = sorted(s4.PAPER_TABLE1)
        pm = [s4.PAPER_TABLE1[k][col] for k in pl]
        ax.errorbar(pl, pm, yerr=figstyle.nonneg_yerr(pm, [s4.PAPER_TABLE1[k][col + 1] for k in pl]),
                    fmt="s--", capsize=3, color="grey", label="paper, Table I")
        for lam, s in zip(lams, stats):
            if s[3]:
                ax.annotate(f"{s[3]} diverged", (lam, m[lams.index(lam)] if np.isfinite(m[lams.index(lam)]) else 0.5),
                            fontsize=7, color="C3", textcoords="offset points", xytext=(4, 6))
                if metric == "final_val_mse":
                    notes.append(f"λ = {lam:g}: {s[3]} of {s[2] + s[3]} seeds diverged")
        ax.set_xlabel("gauge-fixing strength λ")
        ax.set_ylabel(("validation" if col == 2 else "training") + " MSE")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    axes[0].set_title(f"seed 004 Fig. 3 (lr = {LR:g})")
    axes[1].set_title("training MSE (Table I)")
    div = (" Diverged seeds are left out of the means and marked: " + "; ".join(notes) + ".") if notes else ""
    caption = f"""
Seed 004 Fig. 3 regenerated: validation MSE (left) and training MSE (right) against λ at lr = {LR:g}, mean ± population
std over seeds (the lower bar stops at 0: an MSE is not negative), beside the paper's Table I (grey). {s4.protocol(cfg['settings'], cfg['seeds'])}{div} {s4.differences()}
{s4.penalty_note(pts)}
"""
    figstyle.save(fig, "fig_seed004_lambda", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/relu_tables.h5", null="runs/relu_tables_dense.h5").log)
