#!/usr/bin/env python3
"""Seed 003 §5: a fixed Frobenius radius (Hyperball) does not balance the factor Grams.

Input: the log of `gaugelab toy hyperball` (/series per step).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import figstyle
import gaugelab_log as gl
import claim_rules as cr
from figure_decl import Claim, Figure, from_summary, summaries


def _decide(paths):
    s = summaries(paths)[0]
    return cr.combine([cr.at_least(float(s["rel_imbalance_final_mean"]) / float(s["rel_imbalance_start_mean"]), 0.5,
                                   "relative imbalance end / start")])


FIGURE = Figure(
    seed="003", label="§5 hyperball", what="fixed Frobenius radius does not balance the Grams", inputs=("toy_hyperball",),
    status="regenerated", paper="imbalance persists",
    ours=from_summary(lambda s: f"relative imbalance {s[0]['rel_imbalance_start_mean']:.2f} → "
                                f"{s[0]['rel_imbalance_final_mean']:.2f}"),
    claim=Claim(says="a fixed Frobenius radius (hyperball) does not balance the Grams",
                rule="the relative Gram imbalance at the end is at least half of its start", decide=_decide))


def main(path: str) -> None:
    gl.require(path, made_by="gaugelab toy hyperball --out " + path)
    with gl.open_log(path) as f:
        s = gl.series(f)
        runs = gl.table(f, "runs")
        cfg = gl.provenance(f)["config"]
    import matplotlib.pyplot as plt

    t = s["step"]
    fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(12, 3.6))
    ax0.plot(t, s["radius_A"], "-", color="k", lw=1, label=r"closed form $R_A = R_B$")
    ax0.plot(t[::10], s["norm_A"][::10], "o", ms=3, color="C0", label=r"$\|A_t\|_F$ simulated")
    ax0.plot(t[::10], s["norm_B"][::10], "x", ms=3, color="C1", label=r"$\|B_t\|_F$ simulated")
    ax0.set_xlabel("step")
    ax0.set_title("radii fixed: tr(H_A) = R_A², tr(H_B) = R_B²")
    ax0.set_ylabel("Frobenius norm of the factor")
    ax0.legend(fontsize=7)
    ax1.plot(t, s["rel_imbalance"], color="C3", label="start: equal radii, unbalanced Grams")
    ax1.plot(t, s["rel_imbalance_balanced_start"], color="C2", label="start: Gram-balanced pair")
    ax1.plot(t, s["col_rms_log_ratio"], ":", color="C3", label=r"max$_j$ |log(‖A_:j‖/‖B_:j‖)|")
    ax1.set_xlabel("step")
    ax1.set_ylabel(r"$\|H_A-H_B\|_F/\|H_A\|_F$")
    ax1.set_ylim(bottom=0)
    ax1.legend(fontsize=7)
    ax1.set_title("Gram imbalance under Hyperball")
    ax2.semilogy(t, s["loss"], color="C3", label="unbalanced start")
    ax2.semilogy(t, s["loss_balanced_start"], color="C2", label="balanced start")
    ax2.set_xlabel("step")
    ax2.set_ylabel(r"$\frac{1}{2}\|AB^\top-Y\|_F^2$")
    ax2.legend(fontsize=7)
    ax2.set_title("the fit still progresses")
    caption = f"""
Seed 003 §5 ("Hard Radial Control"). Both factors of a random {cfg['m']}×{cfg['r']} / {cfg['n']}×{cfg['r']} pair trained by
Hyperball on ½‖ABᵀ − Y‖² (η = {cfg['eta']:g}, {cfg['steps']} steps, radii R = ‖W₀‖_F, direction from plain SGD), started
from a gauge image with singular values over [1/K, K] (K = {cfg['K']:g}) rescaled by the scalar gauge that equalises
‖A₀‖_F = ‖B₀‖_F, and for reference from the Gram-balanced pair of the same product. The norms stay on the spheres
(closed form ‖A_t‖_F = R_A vs simulation: {float(runs['max_rel_err_norm'][0]):.1e}; traces
{float(runs['max_rel_err_trace'][0]):.1e}; the seed's retraction written out vs the core's step:
{float(runs['rel_err_retraction'][0]):.1e}; ‖P_T(λW)‖/‖λW‖ = {float(runs['decay_tangent_rel'][0]):.1e}), yet the
relative Gram imbalance goes from {float(runs['rel_imbalance_start'][0]):.3g} to {float(runs['rel_imbalance_final'][0]):.3g}
and the per-column RMS ratios stay unequal: fixing ‖A‖_F and ‖B‖_F fixes only tr(AᵀA) and tr(BᵀB). Even the
balanced start drifts away from balance (to {float(runs['rel_imbalance_balanced_start_final'][0]):.3g}): nothing in the
radial constraint pulls it back. The seed states this without a figure; the setting is ours.
"""
    fig.tight_layout()
    figstyle.save(fig, "fig_seed003_hyperball", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/toy_hyperball.h5").log)
