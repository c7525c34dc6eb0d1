#!/usr/bin/env python3
"""Seed 000 Fig 3: (a) best validation loss vs GaugeFix frequency N, condition A as a reference line;
(b) max drift vs N on a log axis; ours beside the paper's.
Usage: fig_seed000_frequency.py LOG.h5...  (condition B runs with several --gaugefix-every, and an A run)"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import matplotlib.pyplot as plt

import figstyle
import seed000_runs as s0
from table_seed000_frequency import rows
import manifest
import table_seed000_frequency
from figure_decl import FULL_GPT2, Figure


FIGURE = Figure(seed="000", label="Fig. 3", what="best val loss and drift vs N", inputs=manifest.SEED000_FREQUENCY,
                status="small-scale proxy", paper="(as Table 2)", claim=table_seed000_frequency.CLAIM,
                full_scale=FULL_GPT2)


def main(paths: list[str]) -> None:
    runs = s0.load_all(paths)
    table = rows(runs)
    fixed = [(n, r) for n, r in table if n > 0]
    base = dict(table).get(0)
    if not fixed:
        raise SystemExit("fig_seed000_frequency: no condition B runs among the logs")
    ns = [n for n, _ in fixed]
    pn = sorted(n for n in s0.PAPER_TABLE2 if n > 0)
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(9, 3.6))
    # One axis for both, as the difference to each one's condition A: the scales differ (tiny vs 124M), the
    # question (does N move the loss, by how much) does not; twin axes made 1e-4 nats look like a trend.
    if not base:
        raise SystemExit("fig_seed000_frequency: no condition A run among the logs ((a) is drawn relative to it)")
    ours_ref = base.best_val
    paper_ref = s0.PAPER_TABLE2[0][1]
    ax_a.plot(ns, [r.best_val - ours_ref for _, r in fixed], "o-", color="C0", label="ours")
    ax_a.plot(pn, [s0.PAPER_TABLE2[n][1] - paper_ref for n in pn], "s-", color="C3", label="paper")
    ax_a.axhline(0.0, color="0.4", ls="--", lw=1, label="condition A (each its own)")
    ax_a.ticklabel_format(axis="y", useOffset=False)
    ax_a.set_ylabel("best val loss − condition A's (nats)")
    ax_a.set_title("(a) best validation loss vs N")
    floor = 1e-9  # drift exactly 0 (a fix on the logged step) drawn at this floor on the log axis
    ax_b.plot(ns, [max(r.max_drift, floor) for _, r in fixed], "o-", color="C0", label="ours")
    ax_b.plot(pn, [s0.PAPER_TABLE2[n][2] for n in pn], "s-", color="C3", label="paper")
    ax_b.axhline(max(base.max_drift, floor), color="C0", ls="--", lw=1)
    ax_b.axhline(s0.PAPER_TABLE2[0][2], color="C3", ls="--", lw=1)
    ax_b.set_yscale("log")
    ax_b.set_ylabel("max Q/K drift")
    ax_b.set_title("(b) drift vs N (dashed: condition A)")
    for ax in (ax_a, ax_b):
        ax.set_xscale("log")
        ax.set_xlabel("GaugeFix every N steps")
    ax_a.legend(fontsize=7)
    fig.tight_layout()
    figstyle.save(fig, "fig_seed000_frequency",
                  f"Seed 000 Fig 3 at our scale ({s0.scale_note(runs)}), seed {fixed[0][1].seed}; paper: GPT-2 124M, "
                  f"seed 42 (red). (a) Each one's best validation loss minus its own condition A's, on one axis. Zero drift is drawn at {floor:g}.")


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, many=True).logs)
