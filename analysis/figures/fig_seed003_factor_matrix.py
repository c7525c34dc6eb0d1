#!/usr/bin/env python3
"""Seed 003 §3: one GD step on ½‖ABᵀ − Y‖² from gauge images (AS, BS⁻ᵀ) of growing condition number,
with and without the opposite-Gram correction.

Input: the log of `gaugelab toy factor-matrix` (/series: one row per K point, spread over the
random gauges of that K).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import claim_rules as cr
import figstyle
import gaugelab_log as gl
from figure_decl import Claim, Figure, from_summary


# Declared 2026-11-29: the corrected step is gauge-independent when its spread over gauges stays within this many units
# of the float64 round-off floor of the representative itself, u·‖A‖_F‖B‖_F relative to the motion (a pair with
# cond(S) = K² holds M = ABᵀ only to that, so an absolute threshold is below what double precision can show for K ≳ 10).
# Ten units: the step is a handful of products of inner dimension ≤ 6 and one r×r solve, each within a few u
# (Higham's γ_n = n·u), so a gauge-independent step stays within a few units and ten leaves room; a step that depends
# on the gauge spreads by the step's own size, far above the floor.
# Measured since: the K = 1 point read 2.94 units under one CPU's -march=native build and 12.3 under another's (the
# development machine's after 2026-11-30), where this rule said partly. The C++ test (tests/toys/test_factor_matrix.cpp,
# kFloorUnits 64) had recorded a measured maximum of ≈ 12 before this rule was declared, which its declaration missed.
# Amended 2026-12-01, after the 12.3 above had been seen (AMENDED below, printed with the rule); the ten units are
# unchanged, the statistic moved: it is now what the claim and this rule name, the spread over gauges, each gauge's
# corrected step against the corrected step simulated from the balanced representative, the reference plain GD's
# spread already used. Until then the toy logged under that name each gauge's distance from the closed form
# M − η(G·P_row + P_col·G) + η²·G·M⁺·G. That distance carries an offset common to every gauge, the balanced pair's own
# distance from the closed form (logged as motion_err_quotient_closed_balanced; whether the closed form's SVD or the
# simulation holds more of it the log does not say), which at K = 1, where the gauges are orthogonal and the step
# equivariant to them, was nearly all the 12.3 units. The log keeps the distance as motion_err_quotient_closed, drawn
# in the figure and not a part of the rule. The new statistic differences two simulated steps, each within a few units
# of its own representative's round-off, the gauge's ≥ the balanced pair's, so a gauge-independent step reads up to
# about twice a single step's few units; ten still leaves room, and a gauge-dependent step spreads by orders above it.
AMENDED = ("amended 2026-12-01, after the K = 1 point had been seen at 12.3 units with the distance from the closed form "
           "as the statistic, where the row said partly: the ten units kept, the statistic made the spread over gauges")
ROUNDOFF_UNITS = 10.0


def spread_floor(series: dict, cfg: dict) -> np.ndarray:
    """Per K point: the representative's round-off u·‖A‖‖B‖ (logged relative to ‖M‖) in units of the motion's size
    2ηε (‖ΔM‖ of one step from M = (1 − ε)Y with ‖Y‖ = 1), the scale of the spread."""
    return np.asarray(series["roundoff_floor_M"], dtype=float) / (2 * cfg["eta"] * cfg["eps"])


def _series(f) -> dict:
    """The log's series, refused when it was made before 2026-12-01 (motion_spread_quotient then meant the distance
    from the closed form)."""
    s = gl.series(f)
    if "motion_err_quotient_closed" not in s:
        raise gl.LogError("this factor-matrix log predates the spread over gauges (no motion_err_quotient_closed): "
                          "make it again with `gaugelab toy factor-matrix`")
    return s


def _decide(paths):
    with gl.open_log(paths[0]) as f:
        s, cfg = _series(f), gl.provenance(f)["config"]
        summ = gl.summary(f)
    units = np.asarray(s["motion_spread_quotient"], dtype=float) / spread_floor(s, cfg)
    # "at every K": a K whose spread is not finite (a failed Gram solve) leaves the part undecidable, never yes
    whole = bool(units.size) and bool(np.isfinite(units).all())
    worst = int(np.nanargmax(units)) if np.isfinite(units).any() else 0
    spread = (cr.within(float(units[worst]), ROUNDOFF_UNITS, f"corrected motion spread over gauges in units of the "
                        f"round-off floor (largest over K; at K = {float(s['K'][worst]):g})", ".3g") if whole else
              cr.Part("undecided", "corrected motion spread over gauges not finite at K = "
                      + ", ".join(f"{float(k):g}" for k in np.asarray(s["K"])[~np.isfinite(units)])
                      + " (a failed Gram solve): not read at every K"))
    verdict = cr.combine([spread,
                          cr.at_least(float(summ["motion_spread_plain_max"]), 1e-3, "plain GD's motion spread")])
    return cr.beside_value(verdict, ORTHOGONAL_NULL, plain_orthogonal_spread(s, cfg), ".3g")


# The row's measured null: at K = 1 the gauges are orthogonal (cond(S) = 1), which plain GD is equivariant to (A S and
# B S step to (A − η∇_A) S and (B − η∇_B) S), so its motion spread there (simulated from each gauge against the
# simulation from the base) is zero in exact arithmetic: round-off only, printed in the verdict's units. The corrected
# step is equivariant there too, so at K = 1 the rule's own statistic is such a null as well: this one is plain GD's.
ORTHOGONAL_NULL = ("plain GD's motion spread from orthogonal gauges, K = 1, to which it is equivariant, in units of "
                   "the round-off floor there")


def plain_orthogonal_spread(series: dict, cfg: dict) -> float:
    """Plain GD's motion spread at K = 1 in units of spread_floor there (NaN when the K grid does not start at 1)."""
    k = np.asarray(series["K"], dtype=float)
    at = np.flatnonzero(np.isclose(k, 1.0))
    if not at.size:
        return float("nan")
    return float(np.asarray(series["motion_spread_plain"], dtype=float)[at[0]] / spread_floor(series, cfg)[at[0]])


FIGURE = Figure(
    seed="003", label="§3 matrix factors", what="GD over gauges of growing κ, with and without opposite-Gram correction",
    inputs=("toy_factor_matrix",), status="regenerated", paper="corrected step gauge-independent",
    ours=from_summary(lambda s: f"motion spread plain {s[0]['motion_spread_plain_max']:.3g}, corrected "
                                f"{s[0]['motion_spread_quotient_max']:.2g}"),
    claim=Claim(says="the opposite-Gram corrected step moves the represented product identically from every gauge; "
                     "plain GD does not",
                rule=f"the corrected step's spread of represented motion over gauges (each gauge's simulated step against the "
                     f"balanced representative's, as plain GD's) ≤ {ROUNDOFF_UNITS:g} units of the "
                     "float64 round-off floor u·‖A‖‖B‖ per K (the representative's own) at every K, and plain GD's ≥ 1e-3; "
                     "beside it, not a part of it, the measured null: plain GD's spread at K = 1 (orthogonal gauges) in the same "
                     f"units ({AMENDED})",
                decide=_decide))


def main(path: str) -> None:
    gl.require(path, made_by="gaugelab toy factor-matrix --out " + path)
    with gl.open_log(path) as f:
        s = _series(f)
        runs = gl.table(f, "runs")
        cfg = gl.provenance(f)["config"]
    import matplotlib.pyplot as plt

    before = float(runs["loss_before"][0])
    cond = s["cond_S"]
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax0.fill_between(cond, s["loss_plain_min"] / before, s["loss_plain_max"] / before, color="C0", alpha=0.25,
                     label="plain GD, min–max over gauges")
    ax0.loglog(cond, s["loss_plain_median"] / before, "o-", color="C0", ms=3, label="plain GD, median (simulated)")
    ax0.loglog(cond, s["loss_plain_closed_max"] / before, "x", color="C0", label="plain GD, max (closed form)")
    ax0.loglog(cond, s["loss_quotient_max"] / before, "s-", color="C2", ms=3, label="opposite-Gram corrected (simulated, max)")
    ax0.loglog(cond, s["loss_quotient_closed"] / before, ":", color="k", lw=1, label="corrected, closed form (from M alone)")
    ax0.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax0.set_xlabel(r"condition number of the gauge $S$ ($K^2$)")
    ax0.set_ylabel(r"$\ell_{\mathrm{after}}/\ell_{\mathrm{before}}$")
    ax0.set_title(f"one step, m={cfg['m']}, n={cfg['n']}, r={cfg['r']}, η={cfg['eta']:g}, ε={cfg['eps']:g}")
    ax0.legend(fontsize=7, loc="upper left")

    ax1.loglog(cond, s["motion_spread_plain"], "o-", color="C0", ms=3, label="plain GD")
    ax1.loglog(cond, s["motion_spread_quotient"], "s-", color="C2", ms=3, label="opposite-Gram corrected")
    ax1.loglog(cond, s["motion_err_quotient_closed"], "^:", color="C2", ms=3, mfc="none",
               label="corrected, distance from its closed form")
    ax1.loglog(cond, spread_floor(s, cfg), "--", color="grey", lw=1,
               label=r"round-off of $AB^\top$: $u\|A\|\|B\|$ / motion")
    ax1.set_xlabel(r"condition number of the gauge $S$ ($K^2$)")
    ax1.set_ylabel("max over gauges of\n" + r"$\|\Delta M(S)-\Delta M(\mathrm{balanced})\|\,/\,\|\Delta M\|$")
    ax1.set_title("spread of the represented motion")
    ax1.legend(fontsize=7)

    small = cond <= 1e4 * (1 + 1e-9)  # grid K = 100 may land a hair above 100
    err_small = max(float(s["rel_err_M_plain"][small].max()), float(s["rel_err_M_quotient"][small].max()))
    caption = f"""
Seed 003 §3 ("Matrix Quotient Updates"). Random rank-{cfg['r']} target Y ({cfg['m']}×{cfg['n']}, ‖Y‖_F = 1), start
M = (1 − ε)Y represented by the Gram-balanced pair and by {cfg['gauges']} gauge images (A₀S, B₀S⁻ᵀ) per point,
S random with singular values spread log-evenly over [1/K, K] (condition number K², K = {cfg['K-min']:g}..{cfg['K-max']:g});
one GD step with η = {cfg['eta']:g}, ε = {cfg['eps']:g}. Plain GD moves M by −η(G·BBᵀ + AAᵀ·G) + η²·G·BAᵀ·G, which
exposes the representative: its loss after the step and the spread of ΔM across gauges grow like K². With the
opposite-Gram correction (λ = 0, {cfg['solve']} solve) the step is M − η(G·P_row + P_col·G) + η²·G·M⁺·G,
which depends on M alone: one loss for every gauge, a spread at the round-off of the representative itself
(dashed: u‖A‖_F‖B‖_F relative to the motion 2ηε; a pair with cond(S) = K² holds M only to that). Both spreads
are each gauge's simulated step against the one from the balanced pair; open triangles: the corrected step's distance
from its closed form, which also carries an offset common to every gauge (the balanced pair's own distance from it).
Closed forms agree with the simulated core steps to ≤ {float(runs['max_rel_err_M_plain'][0]):.2g} (plain) and
{float(runs['max_rel_err_M_quotient'][0]):.2g} (corrected) relative in M over the whole sweep (≤ {err_small:.2g} for
cond(S) ≤ 1e4), and everywhere to ≤ {float(runs['max_err_over_roundoff'][0]):.3g} units of that round-off. The seed states the formulas
without a figure; the gauge family, sizes and sweep are ours.
"""
    fig.tight_layout()
    figstyle.save(fig, "fig_seed003_factor_matrix", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/toy_factor_matrix.h5").log)
