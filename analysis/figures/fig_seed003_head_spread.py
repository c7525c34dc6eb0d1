#!/usr/bin/env python3
"""Seed 003 §3, §6, §7, §9: the one-step attention-head diagnostic. Spread of the represented motion
‖ΔM(S) − ΔM(I)‖_F/‖ΔM(I)‖_F versus the gauge's condition number κ, log–log, one curve per update
rule, one panel per quotient wrapper.

Input: the log of `gaugelab diag heads` (/tables/spread: one row per rule × transport × wrapper × κ ×
gauge family). Warmed-up rules are drawn with the covector transport (the buffer holds raw gradients).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import figstyle
import gaugelab_log as gl
import claim_rules as cr
from figure_decl import Claim, Figure, from_summary, summaries
from spread_figure import FLOOR, draw  # the drawing, shared with `gaugelab plot` of a diag log


# The row's measured null: plain SGD from orthogonal gauges (the table's family "orthogonal", κ = 1), to which it is
# equivariant (W_Q S and W_K S step to (W_Q − η∇_Q) S and (W_K − η∇_K) S), so its spread there is round-off only.
ORTHOGONAL_NULL = "plain SGD's first-order spread from orthogonal gauges, κ = 1, to which it is equivariant"


def plain_orthogonal_spread(path) -> float:
    """The largest first-order spread of plain SGD (no wrapper) over the log's orthogonal gauges (NaN if none ran)."""
    import numpy as np

    with gl.open_log(path) as f:
        t = gl.table(f, "spread")
    m = (t["rule"] == "sgd") & (t["wrapper"] == "none") & (t["family"] == "orthogonal")
    return float(np.max(t["first_order_spread_max"][m])) if m.any() else float("nan")


def _decide(paths):
    s = summaries(paths)[0]
    verdict = cr.combine([cr.within(float(s["sgd_full_first_order_max_kappa_le_100"]), 1e-9,
                                    "SGD + full correction: first-order spread, κ ≤ 100"),
                          cr.at_least(float(s["sgd_none_first_order_max"]), 1e-3,
                                      "plain SGD's largest first-order spread")])
    return cr.beside_value(verdict, ORTHOGONAL_NULL, plain_orthogonal_spread(paths[0]))


CLAIM = Claim(says="the opposite-Gram corrected SGD step is gauge-independent; plain SGD's represented motion spreads "
                   "with the gauge's condition number",
              rule="SGD + full correction's first-order spread ≤ 1e-9 for κ ≤ 100 (round-off; above it κ²·eps grows) and "
                   "plain SGD's largest ≥ 1e-3; other rules' spreads are measured, not claimed; beside it, not a part of "
                   "it, the measured null: plain SGD's spread from orthogonal gauges (κ = 1)",
              decide=_decide)

FIGURE = Figure(
    seed="003", label="§7/§9 head diagnostic", what="one-step represented-motion spread vs κ per rule and wrapper",
    inputs=("diag_heads",), status="regenerated", paper="opposite-Gram SGD at round-off; plain SGD grows with κ",
    ours=from_summary(lambda s: f"SGD+full ≤ {s[0]['sgd_full_first_order_max_kappa_le_100']:.1g} (κ ≤ 100); plain SGD up "
                                f"to {s[0]['sgd_none_first_order_max']:.2g}; Muon orthogonal "
                                f"{s[0]['muon_none_first_order_max_orthogonal']:.1g}"),
    claim=CLAIM)


def main(path: str) -> None:
    gl.require(path, made_by="gaugelab diag heads --out " + path)
    with gl.open_log(path) as f:
        t = gl.table(f, "spread")
        cfg = gl.provenance(f)["config"]
        summ = gl.summary(f)
    fig = draw(t)

    grid = "the --quick demo grid" if cfg.get("quick") else "the default grid"
    head = summ.get("head_source", "random")
    caption = f"""
One-step gauge-sensitivity diagnostic (seed 003 §9) on one attention head ({head}; d = {cfg['d-model']},
d_h = {cfg['d-head']} for a random head, biases {'on' if cfg['biases'] else 'off'}, loss '{cfg['loss']}' on
{cfg['tokens']} tokens against a teacher head), run on {grid}: {cfg['gauges']} gauges per (family, κ) cell.
From the reference representative and from each gauge image (W_Q S, W_K S⁻ᵀ, W_V T, T⁻¹W_O) one step of each
rule (learning rate set so the reference step moves M by {cfg['step-size']:g}·‖M‖), wrapped as labelled:
opposite-Gram 'full' (λ = {cfg['damping']:g}, {cfg['solve']} solve), its 'diagonal' form, 'periodic' (the
expected increment over a random phase of a k = {cfg['period']} schedule, between steps {cfg['between']}),
random 'smooth'ing over N = {cfg['smooth']} gauges of the cell's own family and κ. Solid: median over gauges
of the first-order spread ‖ΔM(S) − ΔM(I)‖_F/‖ΔM(I)‖_F (both sectors); dotted: max; ×: the orthogonal family
(κ = 1). Warm-state rules: momentum with its {cfg.get('momentum-transport', 'covector')} transport, adamw-warm with
the covector one. Values below {FLOOR:g} are drawn
at {FLOOR:g}. Seed 003 states the expectations (undamped full correction + SGD is quotient-compatible; Muon
equivariant only under orthogonal gauges; smoothing cannot cover GL(d_h)) without numbers; every number
here is ours. Forward error of the gauge images (logits, head output): ≤ {summ.get('forward_error_max', float('nan')):.1e}.
"""
    figstyle.save(fig, "fig_seed003_head_spread", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/diag_heads.h5").log)
