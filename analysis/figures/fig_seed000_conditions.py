#!/usr/bin/env python3
"""Seed 000 Fig 2: (a) final validation loss per condition, mean ± population std over seeds, the
paper's values and its nanoGPT reference line beside ours; (b) final Q/K drift per condition.
Usage: fig_seed000_conditions.py LOG.h5...  (gpt2/train logs of conditions A, B, C)"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import matplotlib.pyplot as plt
import numpy as np

import figstyle
import seed000_runs as s0
import manifest
import table_seed000_main
from figure_decl import FULL_GPT2, Figure


FIGURE = Figure(seed="000", label="Fig. 2", what="val loss and drift per condition", inputs=manifest.SEED000_GRID,
                status="small-scale proxy", paper="all beat nanoGPT 3.12; B drift 0", ours=table_seed000_main._grid,
                claim=table_seed000_main.CLAIM, full_scale=FULL_GPT2)


def main(paths: list[str]) -> None:
    runs = s0.load_all(paths)
    conds = [c for c in ("A", "B", "C") if any(r.condition == c for r in runs)]
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(9, 3.6))
    x = np.arange(len(conds))
    for ax, key, paper_i, ylabel in ((ax_a, "final_val", 0, "final validation loss (nats)"),
                                     (ax_b, "final_drift", 2, "final Q/K drift  max |log(s_Q/s_K)|")):
        ours = [s0.mean_std(getattr(r, key) for r in runs if r.condition == c) for c in conds]
        for i, c in enumerate(conds):
            vals = [getattr(r, key) for r in runs if r.condition == c]
            ax.scatter(np.full(len(vals), x[i] - 0.15), vals, s=12, color="0.5", zorder=3)
        ax.errorbar(x - 0.15, [m for m, _ in ours], yerr=[s for _, s in ours], fmt="o", capsize=4,
                    color="C0", label="ours (mean ± std)")
        paper = [s0.mean_std(v[paper_i] for v in s0.PAPER_TABLE1[c].values()) for c in conds]
        twin = ax.twinx() if key == "final_val" else ax
        twin.errorbar(x + 0.15, [m for m, _ in paper], yerr=[s for _, s in paper], fmt="s", capsize=4,
                      color="C3", label="paper (124M, OWT)")
        if key == "final_val":
            twin.axhline(s0.PAPER_NANOGPT_BASELINE, color="C3", ls=":", lw=1, label="paper: nanoGPT 3.12")
            twin.set_ylabel("paper's loss (nats)", color="C3")
        ax.set_xticks(x, [s0.CONDITION_NAMES[c] for c in conds], fontsize=8)
        ax.set_ylabel(ylabel)
        if key == "final_val":
            legend = [a.get_legend_handles_labels() for a in (ax, twin)]
    ax_a.set_title("(a) final validation loss")
    ax_b.set_title("(b) Q/K drift")
    ax_b.set_yscale("symlog", linthresh=1e-6)
    ax_b.set_ylim(bottom=0)
    fig.legend(legend[0][0] + legend[1][0], legend[0][1] + legend[1][1], loc="lower center", ncol=3, fontsize=8,
               bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    figstyle.save(fig, "fig_seed000_conditions",
                  f"Seed 000 Fig 2 at our scale ({s0.scale_note(runs)}); grey dots are single seeds. "
                  "The paper's values (red, GPT-2 124M on OpenWebText) sit on their own loss axis in (a): absolute "
                  "losses differ with scale and corpus, the comparison is the ordering of conditions and the drift "
                  "(B ≈ 0 by construction).")


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, many=True).logs)
