#!/usr/bin/env python3
"""Loss barriers between independently trained models per alignment level and canonical slice (seed 001 §7.4,
Algorithm 3): barrier mean [min, max] over pairs, the paired difference from the naive barrier, how many pairs
alignment lowered, the parameter distance ‖θ_A − θ_B‖_F left, and how well each alignment kept the logits.

Inputs: the merge-models logs of the experiment (analysis/manifest.py). Writes table_seed001_merge_barrier.md.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import seed001_merge as sm
import claim_rules as cr
import manifest
from figure_decl import Claim, Figure


NAIVE_MIN = 0.05  # nats: a barrier below this counts as none (a tenth of the naive barriers the paper's text implies)
MARGIN = 0.05     # nats: the smallest change of the barrier that counts


def _decide(paths):
    loaded = sm.load([str(p) for p in paths])
    recs = [r for r in sm.experiment(loaded) if r["slice"] == "qr" and {"none", "residual", "attention"} <= set(r["levels"])]
    naive = np.array([r["levels"]["none"]["barrier"] for r in recs])
    before = np.array([r["levels"]["residual"]["barrier"] for r in recs])
    after = np.array([r["levels"]["attention"]["barrier"] for r in recs])
    barrier = cr.at_least(float(naive.min()) if len(naive) else float("nan"), NAIVE_MIN,
                          f"smallest naive barrier over {len(naive)} pair(s) (nats)")
    verdict = cr.combine([barrier, cr.unless(cr.premise(barrier, "a naive barrier"), lambda: cr.paired(
        after, before, MARGIN, "barrier after Alg. 3's attention alignment − before it (nats, QR slice, per pair"
                               + ("; the pairs share models, the interval treats them as independent)"
                                  if len({m for r in recs for m in r["pair"].split(" / ")}) < 2 * len(recs) else ")"),
        claimed="lower"))])
    own, moved, _ = sm.moved_pairs(loaded, "attention")
    return cr.beside_null(verdict, own, moved, MOVED_NULL)


# The measured null (manifest._merge_null): the barrier after Alg. 3 with B − with B moved along its gauge orbit
# first (the same function): zero when the alignment reads only B's orbit, as it is built to with the default head
# cost; it stands beside the step's "after" arm (the "before" arm depends on B's point on its orbit).
MOVED_NULL = ("barrier after Alg. 3, with B − with B moved along its orbit first (the Gram slice; the step's after "
              "arm, default head cost), nats")


CLAIM = Claim(says="naive averaging of independently trained models fails (a loss barrier); aligning the attention "
                   "gauges (Alg. 3) first lowers it",
              rule=f"QR slice, per pair: every naive barrier ≥ {NAIVE_MIN:g} nats; Alg. 3's own step (the barrier after "
                   "its attention alignment − the barrier before it, both after the residual-stream permutation), paired "
                   f"over pairs, claimed lower, margin and minimum effect ±{MARGIN:g} nats, not testable without a naive "
                   "barrier; MLP unit matching is not the paper's proposal and decides nothing (one pair cannot decide "
                   "it: make figures MERGE=full runs 6); beside it, not a part of it, the measured null: each pair's "
                   "barrier after Alg. 3 again with B moved along its gauge orbit first (zero by construction)",
              decide=_decide)

FIGURE = Figure(seed="001", label="§7.4 (table)", what="barrier per level and slice, each alignment step's own contribution",
                inputs=manifest.MERGE_RUNS + manifest.MERGE_NULL_RUNS, status="small-scale proxy", paper="no number", claim=CLAIM,
                full_scale="gaugelab merge-models on any two checkpoints; make figures MERGE=full")


def main(paths: list[str]) -> None:
    recs = sm.experiment(sm.load(paths))  # the measured null's merges enter through the verdict only
    lines = ["| slice | level | barrier (nats) mean [min, max] | − naive, mean [min, max] | − previous level (this step), "
             "mean [min, max] | pairs this step lowered | ‖θ_A − θ_B‖ after (folded: before) | logit error (rel., max) |",
             "|---|---|---|---|---|---|---|---|"]
    for sl in ("qr", "gram", "none"):
        rs = [r for r in recs if r["slice"] == sl]
        if not rs:
            continue
        for k, lv in enumerate(sm.LEVELS):
            rr = [r for r in rs if lv in r["levels"] and "none" in r["levels"]]
            if not rr:
                continue
            b = np.array([r["levels"][lv]["barrier"] for r in rr])
            d = b - np.array([r["levels"]["none"]["barrier"] for r in rr])
            prev = sm.LEVELS[k - 1] if k else None
            step = b - np.array([r["levels"][prev]["barrier"] for r in rr]) if prev else None
            dist = np.mean([r["levels"][lv]["distance"] for r in rr])
            dist0 = np.mean([r["levels"][lv]["distance_folded"] for r in rr])
            err = max(r["levels"][lv]["logit_rel_err"] for r in rr)
            diff = "—" if lv == "none" else f"{d.mean():+.3f} [{d.min():+.3f}, {d.max():+.3f}]"
            own = "—" if step is None else f"{step.mean():+.3f} [{step.min():+.3f}, {step.max():+.3f}]"
            below = "—" if step is None else f"{int((step < 0).sum())} of {step.size}"
            lines.append(f"| {sl} | {sm.LEVEL_LABEL[lv]} | {b.mean():.3f} [{b.min():.3f}, {b.max():.3f}] | {diff} | {own} | "
                         f"{below} | {dist:.1f} ({dist0:.1f}) | {err:.1e} |")
    n = len({r["pair"] for r in recs})
    npts, nb, bs = recs[0]["path_points"], recs[0]["batches"], recs[0]["batch_size"]
    md = "\n".join(lines) + f"""

{n} pair(s) of independently trained models (different seeds; `gaugelab merge-models`, {npts} path points, {nb} fixed
validation batches of {bs} sequences). Slice none: heads matched as trained (S_h and the orthogonal part only). Levels are cumulative (merge-models --align). "− naive" is the paired
difference from the same pair's naive barrier; min–max over pairs, which share seeds (no independence is claimed).
Seed 001 predicts that alignment makes averaging meaningful (§7.4); it reports no barrier. Verdict:
{_decide(paths)}.
"""
    figstyle.save_table("table_seed001_merge_barrier", md)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, many=True).logs)
