#!/usr/bin/env python3
"""Seed 004 Fig. 5: invariance error Δ_inv under random neuron rescalings of a trained ReLU net.

Input: the log of `gaugelab toy relu` (its /arrays/dinv and /series). Draws the Δ_inv box plot
next to the training curve of the same seed, and states the paper's numbers beside ours.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import gaugelab_log as gl
import claim_rules as cr
import seed004_relu as s4
from figure_decl import Claim, Figure, from_summary, summaries

PAPER = s4.PAPER_FIG5


# Round-off bound for Δ_inv: outputs are O(1) and float64's eps is 2.2e-16; 1e-12 leaves four orders of magnitude
# for accumulated rounding and would still catch any real (non-rounding) change of the function.
ROUNDOFF = 1e-12


def _decide(paths):
    s = summaries(paths)[0]
    return cr.combine([cr.within(float(s["dinv_max"]), ROUNDOFF, "max Δ_inv over the random rescalings")])


FIGURE = Figure(
    seed="004", label="Fig. 5", what="Δ_inv over 200 random neuron rescalings", inputs=("toy_relu",),
    status="regenerated", paper=f"min {PAPER['min']:g}, median {PAPER['median']:g}, max {PAPER['max']:g}",
    ours=from_summary(lambda s: f"min {s[0]['dinv_min']:.3g}, median {s[0]['dinv_median']:.3g}, max {s[0]['dinv_max']:.3g}"),
    claim=Claim(says="positive neuron rescalings leave the network's function unchanged (Δ_inv at round-off)",
                rule=f"max Δ_inv ≤ {ROUNDOFF:g} (float64 round-off of O(1) outputs with four orders to spare); the "
                     "paper's 1e-17 level itself is not tested: it depends on the output scale",
                decide=_decide))


def main(path: str) -> None:
    gl.require(path, made_by="gaugelab toy relu --out " + path)
    with gl.open_log(path) as f:
        dinv = gl.array(f, "dinv")
        s = gl.series(f)
        cfg = gl.provenance(f)["config"]
    import matplotlib.pyplot as plt

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.6))
    ax0.boxplot(dinv, vert=True, showfliers=True)
    ax0.set_yscale("log")
    ax0.set_ylabel(r"$\Delta_{\mathrm{inv}}$ (mean |f - f'| over the validation grid)")
    ax0.set_xticks([1], [f"{len(dinv)} random gauges"])
    for k, v in PAPER.items():
        ax0.axhline(v, ls=":", lw=0.8, color="grey")
        ax0.annotate(f"paper {k}", (1.0, v), xycoords=("axes fraction", "data"), ha="right", va="bottom",
                     fontsize=7, color="0.35")
    ax0.set_title("invariance under neuron rescaling")
    ax1.plot(s["step"], s["train_mse"], label="train MSE")
    ax1.plot(s["step"], s["val_mse"], label="val MSE")
    ax1.set_xlabel("GD step")
    # linear: the MSEs span 0.47-0.53, where log-scale minor labels (5.3e-1, ...) crowded into the left panel
    ax1.set_ylabel("MSE")
    ax1.legend()
    ax1.set_title(f"training (lr={cfg['lr']}, λ={cfg['lambda']}, seed {cfg['seed']})")
    fig.tight_layout()
    ours = {"min": float(np.min(dinv)), "median": float(np.median(dinv)), "max": float(np.max(dinv))}
    ratio = ours["median"] / PAPER["median"]
    spread = cfg.get("gauge-log-spread", cfg.get("gauge_log_spread"))
    caption = f"""
Seed 004 Fig. 5 (regenerated). {len(dinv)} random positive rescalings s_i = exp(U(−a, a)), a = {spread:.4g} (scales
over [{np.exp(-spread):.2g}, {np.exp(spread):.2g}]; the paper's range is unstated), applied to the trained H = {cfg['hidden']}
ReLU net of the first seed after {cfg['steps']} GD steps (lr = {cfg['lr']:g}, λ = {cfg['lambda']:g}, init {cfg['init']});
Δ_inv = mean |f_θ(x) − f_θ'(x)| over the {cfg['n-val']}-point validation grid, float64. Ours: min {ours['min']:.3g},
median {ours['median']:.3g}, max {ours['max']:.3g}. Paper: min {PAPER['min']:.3g}, median {PAPER['median']:.3g},
max {PAPER['max']:.3g} (dotted lines); our median is {ratio:.2g}× the paper's. Both are float64 round-off of the
hidden layer's contribution Σ w2_i relu(z_i), which scales with its size: a net trained to fit the data (outputs
O(1), e.g. --init torch --steps 5000) gives ≈ 3e-16. That the paper's values sit at 1e-17 is one of the reasons
our protocol keeps the net near its small initialisation (toys/README.md); the step count was chosen as the
round number whose median lands in the paper's [min, max] range, so this agreement is by construction, not a test.
"""
    figstyle.save(fig, "fig_seed004_invariance", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/toy_relu.h5").log)
