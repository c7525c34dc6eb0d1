#!/usr/bin/env python3
"""Beyond seed 004: how many GD steps? Training MSE against steps at the paper's point (λ = 0, lr = 1e-2,
our small initialisation), every seed and their median, with the step count our criterion picks — the
first T after which doubling the steps gains less than 1 % of the training MSE (seed004_relu.PLATEAU_GAIN),
blind to validation and to Fig. 5 — beside the 300 steps of our paper-matching protocol.

Input: the log of `gaugelab sweep relu --lambda 0 --lr 0.01 --steps 131072 --log-every 256 ...` (experiment
relu_plateau): /tables/runs and /tables/run_series.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import seed004_relu as s4
from figure_decl import Figure


FIGURE = Figure(seed="004", label="step count, principled", what="training MSE vs steps; the plateau criterion's T*",
                inputs=("relu_plateau",), status="regenerated", paper="(unstated in the paper)")


def main(path: str) -> None:
    pts, cfg = s4.sweep_points(path, made_by="make figures (experiment relu_plateau)")
    runs, series = s4.sweep_runs(path), s4.run_series(path)
    steps, med = s4.median_curve(series, runs["row"], "train_mse")
    _, med_val = s4.median_curve(series, runs["row"], "val_mse")
    t_star = s4.plateau_step(steps, med)
    import matplotlib.pyplot as plt

    fig, (a0, a1) = plt.subplots(1, 2, figsize=(11.5, 4.0))
    fig.subplots_adjust(wspace=0.32)
    for r in runs["row"]:
        m = series["run"] == r
        s = series["step"][m].astype(float)
        a0.plot(np.maximum(s, 1), series["train_mse"][m], color="0.7", lw=0.7)
        a1.plot(np.maximum(s, 1), series["val_mse"][m], color="0.7", lw=0.7)
    a0.plot(np.maximum(steps, 1), med, color="C0", lw=2, label="median over seeds")
    a1.plot(np.maximum(steps, 1), med_val, color="C0", lw=2, label="median over seeds")
    a0.plot([], [], color="0.7", lw=0.7, label="one seed")
    paper_train, paper_val = s4.PAPER_TABLE1[0.0][0], s4.PAPER_TABLE1[0.0][2]
    for ax, paper in ((a0, paper_train), (a1, paper_val)):
        ax.axvline(300, color="C3", ls=":", label="300 steps (our paper-matching protocol)")
        if t_star:
            ax.axvline(t_star, color="C2", ls="--", label=f"T* = {t_star} (doubling gains < {s4.PLATEAU_GAIN:.0%})")
        ax.axhline(paper, color="k", ls="-.", lw=1, label="paper, Table I (λ = 0)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("GD step")
    a0.set_ylabel("training MSE")
    a1.set_ylabel("validation MSE on [−3, 3]")
    a0.set_title("training MSE: where it stops improving")
    a1.set_title("validation MSE (not used by the criterion)")
    a0.legend(fontsize=7, loc="lower left", frameon=False)
    at = dict(zip(steps.astype(int), med))
    atv = dict(zip(steps.astype(int), med_val))
    near300 = min(at, key=lambda s: abs(s - 300))
    late = ""
    if t_star:  # seeds that still fall by > 10 % after T* (a later second phase the median's plateau hides)
        last = int(steps[-1])
        drops = sum(1 for r in runs["row"]
                    if (lambda m: series["train_mse"][m & (series["step"] == last)][0]
                        < 0.9 * series["train_mse"][m & (series["step"] == t_star)][0])(series["run"] == r))
        late = (f" {drops} of {len(runs['row'])} seeds fall again by more than 10 % between T* and step {last} (a later "
                "phase the median's plateau hides; the criterion is about the typical run).")
    star = (f"T* = {t_star}: median training MSE {at[t_star]:.4f}, validation {atv[t_star]:.3f}" if t_star
            else "the criterion is not met within this log's steps")
    caption = f"""
How many steps? Training (left) and validation (right) MSE against GD steps at the paper's Table I point (λ = 0,
lr = {float(cfg['settings']['lr']):g}), {len(runs['row'])} seeds (grey) and their median (blue). Our criterion, chosen without
looking at Fig. 5 or at validation: train until doubling the steps gains less than {s4.PLATEAU_GAIN:.0%} of the training MSE.
{star}; at step {near300} (our paper-matching protocol's 300) the median is {at[near300]:.4f} / {atv[near300]:.3f}, the
paper's Table I λ = 0 row {paper_train} / {paper_val}: the paper's numbers are those of nets that have not left the
constant predictor, not of trained ones (the validation grid extends to [−3, 3], where a net that fits [−2, 2]
extrapolates linearly and its MSE rises to ≈ 2.6).{late} The principled stability study (fig_seed004_boundary) trains for T*.
{s4.protocol(cfg['settings'], cfg['seeds'])}
"""
    figstyle.save(fig, "fig_seed004_plateau", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/relu_plateau.h5").log)
