#!/usr/bin/env python3
"""Seed 003 §4: shared decoupled shrink damps the absolute Gram imbalance, not the relative one.

Input: the log of `gaugelab toy wd-gram` (/series per step: the pure-shrink, GD and GD + decay
trajectories from the same imbalanced factor pair).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import figstyle
import gaugelab_log as gl
import claim_rules as cr
from figure_decl import Claim, Figure, from_summary, summaries


def _decide(paths):
    s = summaries(paths)[0]
    return cr.combine([
        cr.within(float(s["shrink_rel_final_mean"]) / float(s["rel_start_mean"]) - 1, 1e-6,
                  "shared shrink: relative imbalance end / start − 1"),
        cr.within(float(s["shrink_abs_final_mean"]) / float(s["abs_start_mean"]), 0.1,
                  "shared shrink: absolute imbalance end / start")])


FIGURE = Figure(
    seed="003", label="§4 weight decay and Grams", what="shared shrink damps absolute, not relative, Gram imbalance",
    inputs=("toy_wd_gram",), status="regenerated", paper="relative imbalance unchanged",
    ours=from_summary(lambda s: f"shrink only: relative {s[0]['rel_start_mean']:.3f} → {s[0]['shrink_rel_final_mean']:.3f}"),
    claim=Claim(says="a shared weight-decay shrink damps the absolute Gram imbalance but leaves the relative one",
                rule="under shrink alone the relative imbalance ends within 1e-6 of its start and the absolute one "
                     "below a tenth of its start", decide=_decide))


def main(path: str) -> None:
    gl.require(path, made_by="gaugelab toy wd-gram --out " + path)
    with gl.open_log(path) as f:
        s = gl.series(f)
        runs = gl.table(f, "runs")
        cfg = gl.provenance(f)["config"]
    import matplotlib.pyplot as plt

    t = s["step"]
    rho = float(runs["rho"][0])
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax0.semilogy(t, s["shrink_abs_closed"], "-", color="k", lw=1, label=r"closed form $\rho^{2t}\|D_0\|_F$")
    ax0.semilogy(t[::10], s["shrink_abs"][::10], "o", color="C0", ms=3, label="shrink only (U = 0), simulated")
    ax0.semilogy(t, s["gd_abs"], "-", color="C1", label="GD, no decay")
    ax0.semilogy(t, s["gdwd_abs"], "--", color="C2", label="GD + shared shrink")
    ax0.set_xlabel("step")
    ax0.set_ylabel(r"absolute imbalance $\|H_A-H_B\|_F$")
    ax0.legend(fontsize=7)
    ax0.set_title(rf"$\rho = 1-\eta\lambda = {rho:g}$")
    ax1.plot(t, s["shrink_rel_closed"], "-", color="k", lw=1, label="closed form (constant)")
    ax1.plot(t[::10], s["shrink_rel"][::10], "o", color="C0", ms=3, label="shrink only, simulated")
    ax1.plot(t, s["gd_rel"], "-", color="C1", label="GD, no decay")
    ax1.plot(t, s["gdwd_rel"], "--", color="C2", label="GD + shared shrink")
    ax1.set_xlabel("step")
    ax1.set_ylabel(r"relative imbalance $\|H_A-H_B\|_F/\|H_A\|_F$")
    ax1.set_ylim(bottom=0)
    ax1.legend(fontsize=7)
    caption = f"""
Seed 003 §4 ("Decoupled Weight Decay"). A random {cfg['m']}×{cfg['r']} / {cfg['n']}×{cfg['r']} factor pair moved by a gauge
with singular values over [1/K, K] (K = {cfg['K']:g}), then {cfg['steps']} steps of three updates with the same shared
shrink ρ = 1 − ηλ = {rho:g} (η = {cfg['eta']:g}, λ = {cfg['lambda']:g}), all run by the core's SGD rule with decoupled decay.
Shrink only (U = 0): the seed's closed form D_t = ρ^(2t)·D_0 (black) and the simulation agree to
{float(runs['max_rel_err_shrink'][0]):.1e}; the absolute imbalance decays, the relative one does not move
(it started at {float(runs['rel_start'][0]):.3g}, it ends at {float(runs['shrink_rel_final'][0]):.3g}).
GD without decay on ½‖ABᵀ − Y‖² (random rank-{cfg['r']} target) keeps D almost fixed (the first-order cross terms of
the seed's Full Gram Evolution cancel for gradient increments; drift ≤ {float(runs['gd_abs_max_drift'][0]):.1e}).
GD with the shrink: every step matches the Full Gram Evolution (core::gram_after_step) to
{float(runs['max_rel_err_gram_step'][0]):.1e}; D decays like the pure shrink, and since the loss holds the Grams'
scale the relative imbalance falls too (to {float(runs['gdwd_rel_final'][0]):.3g}): the shrink controls the
representative, the increment decides the relative balance. The seed has no figure; setting and sizes are ours.
"""
    fig.tight_layout()
    figstyle.save(fig, "fig_seed003_wd_gram", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/toy_wd_gram.h5").log)
