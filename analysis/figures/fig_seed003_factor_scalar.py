#!/usr/bin/env python3
"""Seed 003 §2: one GD step on f = ½(ab − 1)² from representatives of the same product, over K.

Input: the log of `gaugelab toy factor-scalar` (its /series: the K sweep; /tables/runs: the
headline numbers at --K). Draws f_after/f_before against K for the imbalanced representative
a = 1/K, b = (1 − ε)K (closed form as a line, the simulated step as dots), the opposite-Gram
corrected step, and the threshold η(a² + b²) = 2.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import gaugelab_log as gl
import claim_rules as cr
from figure_decl import Claim, Figure, from_summary, summaries


# The paper's loss after one GD step from the imbalanced start (η = ε = 1e-3, K = 1e6), to its three digits.
PAPER_LOSS_AFTER = 4.98e11
CLOSED_FORM_TOL = 1e-9  # simulation against the closed form: float64 round-off with room


def _decide(paths):
    s = summaries(paths)[0]
    sim, closed = float(s["loss_after_imbalanced_sim"]), float(s["loss_after_imbalanced_closed"])
    return cr.combine([cr.within(sim / PAPER_LOSS_AFTER - 1, 0.005, "loss after / paper's 4.98e11 − 1", ".2g"),
                       cr.within(sim / closed - 1, CLOSED_FORM_TOL, "simulated / closed form − 1")])


FIGURE = Figure(
    seed="003", label="§2 scalar explosion", what="one GD step from balanced vs imbalanced factors, K sweep",
    inputs=("toy_factor_scalar",), status="regenerated", paper="η = ε = 1e-3, K = 1e6: loss 5e-7 → ≈ 4.98e11",
    ours=from_summary(lambda s: f"5e-7 → {s[0]['loss_after_imbalanced_sim']:.4g} (closed form "
                                f"{s[0]['loss_after_imbalanced_closed']:.4g})"),
    claim=Claim(says="one GD step from a gauge-imbalanced start (K = 1e6) explodes the loss to ≈ 4.98e11",
                rule="the simulated loss after the step within 0.5 % of 4.98e11 (the paper's three digits) and equal "
                     f"to the closed form to {CLOSED_FORM_TOL:g}", decide=_decide))


def main(path: str) -> None:
    gl.require(path, made_by="gaugelab toy factor-scalar --out " + path)
    with gl.open_log(path) as f:
        s = gl.series(f)
        runs = gl.table(f, "runs")
        cfg = gl.provenance(f)["config"]
    import matplotlib.pyplot as plt

    eta, eps = cfg["eta"], cfg["eps"]
    before = float(runs["loss_before"][0])
    kth = float(runs["K_threshold"][0])
    K = s["K"]
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    ax0.loglog(K, s["loss_after_closed"] / before, "-", color="C0", label="plain GD, closed form")
    ax0.loglog(K, s["loss_after_sim"] / before, ".", color="C0", ms=4, label="plain GD, simulated")
    ax0.loglog(K, s["loss_after_quotient_closed"] / before, "-", color="C2", label="opposite-Gram corrected, closed form")
    ax0.loglog(K, s["loss_after_quotient_sim"] / before, ".", color="C2", ms=4, label="corrected, simulated")
    ax0.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax0.axvline(kth, color="C3", lw=1, ls="--", label=rf"$\eta(a^2+b^2)=2$ at $K={kth:.1f}$")
    ax0.set_xlabel(r"$K$  (representative $a=1/K$, $b=(1-\epsilon)K$)")
    ax0.set_ylabel(r"$f_{\mathrm{after}}/f_{\mathrm{before}}$")
    ax0.set_title(rf"one GD step, $\eta={eta:g}$, $\epsilon={eps:g}$")
    ax0.legend(fontsize=7, loc="upper left")

    err_m = np.abs(s["m_after_sim"] - s["m_after_closed"]) / np.abs(s["m_after_closed"])
    err_l = np.abs(s["loss_after_sim"] - s["loss_after_closed"]) / np.maximum(s["loss_after_closed"], before)
    floor = np.finfo(float).eps / 2
    ax1.semilogx(K, np.maximum(err_m, floor), ".", ms=4, label=r"$|m_{sim}-m_{cf}|/m_{cf}$")
    ax1.semilogx(K, np.maximum(err_l, floor), ".", ms=4, label=r"$|f_{sim}-f_{cf}|/\max(f_{cf}, f_{before})$")
    ax1.set_yscale("log")
    ax1.axhline(1e-12, color="C3", lw=0.8, ls="--", label="1e-12")
    ax1.set_xlabel(r"$K$")
    ax1.set_title("closed form vs simulation")
    ax1.legend(fontsize=7)

    imb_cf = float(runs["loss_after_imbalanced_closed"][0])
    imb_sim = float(runs["loss_after_imbalanced_sim"][0])
    caption = f"""
Seed 003 §2 ("The Smallest Failure"), regenerated and extended to a K sweep. f(a, b) = ½(ab − 1)², every
representative has ab = 1 − ε, so f_before = ½ε² = {before:.3g}; one plain GD step with η = {eta:g},
ε = {eps:g} from a = 1/K, b = (1 − ε)K for {len(K)} log-spaced K in [{K[0]:g}, {K[-1]:g}]. Lines: the seed's
closed form f_after = ½ε²[−1 + η(a² + b²) + η²ε(1 − ε)]²; dots: the step simulated with the core's SGD rule.
The dashed line marks η(a² + b²) = 2 (K = {kth:.2f}); to its right the same product is made worse by the
step. Green: the opposite-Gram corrected step (Δa = ηε/b, Δb = ηε/a; seed 003 §3 applied to §2), identical
for every representative. At the seed's K = {cfg['K']:g}: f_after = {imb_cf:.6g} (closed) and {imb_sim:.6g}
(simulated); the seed says "order ½·10¹²". The corrected step's loss: {float(runs['loss_after_quotient_closed'][0]):.6g}
(closed), {float(runs['loss_after_quotient_balanced_sim'][0]):.6g} and {float(runs['loss_after_quotient_imbalanced_sim'][0]):.6g}
(simulated from the balanced and the seed's imbalanced pair). Right: agreement over the sweep and the seed's point,
m_after within {float(runs['max_rel_err_m'][0]):.2g} relative and f_after within {float(runs['max_rel_err_loss'][0]):.2g}; the loss is compared relative to
max(f_after, f_before) because near η(a² + b²) ≈ 1 the step lands on m ≈ 1 and f_after = ½(m − 1)² is
computed with cancellation by any formula. The seed has no figure here, only the example; the sweep, the
threshold marker and the corrected step are ours.
"""
    fig.tight_layout()
    figstyle.save(fig, "fig_seed003_factor_scalar", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/toy_factor_scalar.h5").log)
