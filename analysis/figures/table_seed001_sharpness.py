#!/usr/bin/env python3
"""Curvature along the attention gauge orbits and the quotient sharpness of a trained GPT-2 (seed 001 Prop. 9, §5.1,
§5.3), as loaded and under random elements of the gauge group (the same function). Two tables in one file: the top
eigenvalue of H, of the Euclidean quotient P·H·P and of H in the gauge-covariant metric (M^-1/2·H·M^-1/2) per gauge,
with their spread; and per-head Rayleigh quotients along a random Lie-algebra tangent (vertical), a random direction
of the head's blocks and its horizontal part, with Prop. 9's identity vᵀHv = −∇L·a.

Input: the log of `gaugelab hessian` (experiment hessian*_s*). Writes table_seed001_sharpness.md.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import gaugelab_log as gl
import claim_rules as cr
import manifest
from figure_decl import PRETRAINED, Claim, Figure, from_summary, summaries

SPACES = {"full": "H (full)", "quotient": "P·H·P (Euclidean quotient)", "metric": "M^-1/2·H·M^-1/2 (covariant metric)"}


CHANGE_TOL = 1e-3  # a sharpness is "gauge-invariant" when it moves by ≤ 0.1 % under the sampled gauges


# The row's measured null (manifest HESSIAN_NULL_RUN): the same checkpoint and batch under orthogonal S and C per head
# (κ = 1) and the heads' permutation, Euclidean isometries of the parameters that keep the loss, so no λ_max can
# move: what Lanczos and float32 alone move each by.
ORTHOGONAL_NULL = "the same under orthogonal gauges, κ = 1, which move no λ_max"


def _decide(paths):
    s, null = summaries(paths)
    verdict = cr.combine([cr.within(float(s["quotient_change_max"]), CHANGE_TOL,
                                    "Euclidean P·H·P λ_max change under gauges"),
                          cr.within(float(s["metric_change_max"]), CHANGE_TOL,
                                    "covariant-metric λ_max change under gauges")])
    return cr.beside(verdict, ORTHOGONAL_NULL, f"H {float(null['full_change_max']):.2g}, P·H·P "
                                               f"{float(null['quotient_change_max']):.2g}, covariant metric "
                                               f"{float(null['metric_change_max']):.2g}")


FIGURE = Figure(
    seed="001", label="Prop. 9, §5.1, §5.3", what="curvature along the orbits; full, quotient and gauge-covariant sharpness",
    inputs=(manifest.HESSIAN_RUN, manifest.HESSIAN_NULL_RUN), status="small-scale proxy",
    paper="vertical curvature 0 at a critical point; sharpness on the quotient",
    ours=from_summary(lambda s: f"λ_max moves {s[0]['full_change_max']:.0%} under gauges (P·H·P too: "
                                f"{s[0]['quotient_change_max']:.0%}); covariant metric {s[0]['metric_change_max']:.0e}"),
    full_scale="gaugelab hessian on any checkpoint",
    claim=Claim(says="the sharpness measured on the quotient (gauge directions removed) is gauge-invariant",
                rule=f"the top eigenvalue's largest relative change under the sampled gauges ≤ {CHANGE_TOL:g}, for the "
                     "Euclidean quotient P·H·P and for the gauge-covariant metric; yes needs both; beside it, not a "
                     "part of it, the measured null: the same changes under orthogonal gauges (κ = 1)", decide=_decide))


def main(path: str, null: str) -> None:
    gl.require(path, made_by="make figures (experiment hessian*, analysis/manifest.py)")
    with gl.open_log(path) as f:
        cfg = gl.provenance(f)["config"]
        spec = gl.table(f, "spectrum")
        curv = gl.table(f, "curvature")
        cost = gl.table(f, "cost")
        loss = gl.table(f, "loss")
        summ = gl.summary(f)
    gauges = sorted({int(g) for g in spec["gauge"]})
    head = "| space | " + " | ".join("as loaded" if g == 0 else f"gauge {g}" for g in gauges) + \
        " | largest relative change | Lanczos products (mean) |"
    lines = [head, "|" + "---|" * (len(gauges) + 3)]
    for sp, label in SPACES.items():
        m = (spec["space"] == sp) & (spec["rank"] == 1)
        if not m.any():
            continue
        lam = {int(g): float(v) for g, v in zip(spec["gauge"][m], spec["eigenvalue"][m])}
        ref = lam[0]
        change = max((abs(lam[g] - ref) / abs(ref) for g in gauges if g > 0), default=float("nan"))
        prods = np.mean(cost["products"][cost["space"] == sp])
        lines.append(f"| {label} | " + " | ".join(f"{lam[g]:.5g}" for g in gauges) + f" | {change:.1e} | {prods:.0f} |")
    losses = loss["loss"]
    lines += ["", "| kind (as loaded) | Rayleigh quotient vᵀHv/‖v‖², median [min, max] over heads | "
              "Prop. 9 identity |vᵀHv + ∇L·a| / (|vᵀHv| + |∇L·a|), max |", "|---|---|---|"]
    for kind in ("vertical", "random", "horizontal"):
        m = (curv["kind"] == kind) & (curv["gauge"] == 0)
        r = curv["rayleigh"][m]
        ident = f"{np.max(curv['identity_rel_err'][m]):.1e}" if kind == "vertical" else "—"
        lines.append(f"| {kind} | {np.median(r):.3g} [{r.min():.3g}, {r.max():.3g}] | {ident} |")
    md = "\n".join(lines) + f"""

`gaugelab hessian` on {cfg['checkpoint']} (multipliers folded; {int(summ['dim'])} parameters), one fixed batch of
{cfg['batch-size']} validation sequences, loss {summ['loss']:.4f} (the same to {np.ptp(losses):.1e} under every gauge:
each is an exact symmetry); gauges: per head S_i, C_i of condition number {cfg['gauge-kappa']} and a head permutation
per layer; top eigenvalues by Lanczos (Spectra, tolerance {cfg['lanczos-tol']}); one Hessian-vector product costs
{summ['seconds_per_hvp']:.2f} s here. Seed 001 (Prop. 9) predicts zero curvature along the orbits at a critical point
and asks for sharpness on the quotient. Measured: away from a critical point the orbit curvature is −∇L·a, as the identity
column shows; the top eigenvector is horizontal (P·H·P's top eigenvalue equals H's), so projecting out the orbits
does not change the sharpness — and with the Euclidean metric both move with the representative by the same factor.
Only a gauge-covariant metric (each head's factor measured through its partner: ‖δW_q W_kᵀ‖, ‖W_q δW_kᵀ‖, ...) makes
the top eigenvalue a property of the function: it changes by the float32 level. Verdict: {_decide([path, null])}.
"""
    figstyle.save_table("table_seed001_sharpness", md)


if __name__ == "__main__":
    a = figstyle.parse_args(__doc__, default="runs/hessian2000_s42.h5", null="runs/hessian2000_s42_k1.h5")
    figstyle.run(main, a.log, a.null)
