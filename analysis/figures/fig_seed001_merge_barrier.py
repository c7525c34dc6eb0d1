#!/usr/bin/env python3
"""Loss barriers between independently trained GPT-2 models, naive and gauge-aligned (seed 001 §5.3, §7.4, Prop. 47,
Algorithm 3). (a) The validation loss along the linear path θ(t) = (1−t)θ_A + tθ_B minus the chord between its ends,
per alignment level (mean over pairs, band: min–max), QR slice; (b) the barrier max_t of that excess per level and
slice, every pair as a point, bar at the mean, error bar min–max over pairs.

Inputs: the merge-models logs of the experiment (analysis/manifest.py, merge*_s*_s*_{qr,gram}). Writes
fig_seed001_merge_barrier.png/.pdf.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import seed001_merge as sm
from figstyle import plt
import manifest
import table_seed001_merge_barrier
from figure_decl import Figure


def _barriers(paths) -> str:
    """Mean barrier per alignment level over the QR-slice merge logs."""
    recs = [r for r in sm.experiment(sm.load([str(p) for p in paths])) if r["slice"] == "qr"]
    if not recs:
        return "—"
    return ", ".join(f"{sm.LEVEL_LABEL[lv]} {sum(r['levels'][lv]['barrier'] for r in recs) / len(recs):.2f}"
                     for lv in sm.LEVELS if all(lv in r["levels"] for r in recs)) + f" nats ({len(recs)} pairs)"


FIGURE = Figure(seed="001", label="§7.4, Prop. 47, Alg. 3 (figure)",
                what="loss barrier between independently trained models, naive vs aligned", inputs=manifest.MERGE_RUNS + manifest.MERGE_NULL_RUNS,
                status="small-scale proxy", paper="no number: \"naive averaging fails\", alignment should help",
                ours=_barriers, claim=table_seed001_merge_barrier.CLAIM,
                full_scale="gaugelab merge-models on any two checkpoints; make figures MERGE=full for 6 pairs of "
                           "2000-step models")


def main(paths: list[str]) -> None:
    recs = sm.experiment(sm.load(paths))  # the measured null's merges are the table's
    slices = [s for s in ("qr", "gram", "none") if any(r["slice"] == s for r in recs)]
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(10, 3.8))
    ref = slices[0]
    for j, lv in enumerate(sm.LEVELS):
        curves = [r["levels"][lv] for r in recs if r["slice"] == ref and lv in r["levels"]]
        if not curves:
            continue
        t = curves[0]["t"]
        ex = np.array([c["excess"] for c in curves])
        a0.plot(t, ex.mean(0), marker="o", ms=3, color=f"C{j}", label=sm.LEVEL_LABEL[lv])
        if len(curves) > 1:
            a0.fill_between(t, ex.min(0), ex.max(0), color=f"C{j}", alpha=0.15, lw=0)
    a0.axhline(0, color="0.6", lw=0.8)
    a0.set_xlabel("t  (θ = (1−t)·θ_A + t·θ_B)")
    a0.set_ylabel("val. loss − chord (nats)")
    a0.set_title(f"(a) loss along the path, {ref} slice", fontsize=9)
    a0.legend(fontsize=7, frameon=True, framealpha=0.9)

    width = 0.8 / max(1, len(slices))
    summary = []
    for k, sl in enumerate(slices):
        for j, lv in enumerate(sm.LEVELS):
            b = np.array([r["levels"][lv]["barrier"] for r in recs if r["slice"] == sl and lv in r["levels"]])
            if b.size == 0:
                continue
            x = j + (k - (len(slices) - 1) / 2) * width
            a1.bar(x, b.mean(), width * 0.9, color=f"C{j}", alpha=(0.8, 0.45, 0.25)[k],
                   hatch=(None, "//", "..")[k], label=(f"{sl} slice" if sl != "none" else "no slice") if j == 0 else None,
                   edgecolor="0.3", lw=0.5)
            a1.errorbar(x, b.mean(), yerr=[[b.mean() - b.min()], [b.max() - b.mean()]], color="0.2", capsize=3, lw=1)
            a1.plot(np.full(b.size, x), b, "k.", ms=4)
            if k == 0:
                summary.append(f"{sm.LEVEL_LABEL[lv]} {b.mean():.3f} [{b.min():.3f}, {b.max():.3f}]")
    a1.set_xticks(range(len(sm.LEVELS)), [sm.LEVEL_LABEL[lv] for lv in sm.LEVELS], fontsize=7, rotation=15)
    a1.set_ylabel("loss barrier (nats)")
    a1.set_ylim(bottom=0)
    a1.set_title("(b) barrier per alignment level", fontsize=9)
    a1.legend(fontsize=7, frameon=True, framealpha=0.9)
    fig.tight_layout()
    n_pairs = len({r["pair"] for r in recs})
    la = np.mean([r["loss_a"] for r in recs] + [r["loss_b"] for r in recs])
    caption = f"""
Linear mode connectivity of independently trained models before and after gauge alignment (seed 001 §5.3, §7.4,
Prop. 47, Algorithm 3), {n_pairs} pair(s) of the LR-sensitivity grid's CPU model (2 layers, 4 heads, d 64, condition
A, lr 2.68e-3, different seeds; mean end-point validation loss {la:.3f}) on the Shakespeare corpus. B is aligned to A
cumulatively: the residual-stream permutation (weight matching on the embeddings), then Algorithm 3 (both models to
the canonical slice, heads paired by the Hungarian algorithm on the Procrustes distance, each pair's residual
O(d_k)×O(d_v) by Procrustes), then the MLP's hidden units (weight matching); multipliers folded first. Every
alignment preserves each model's logits to ≤ {max(r['levels'][lv]['logit_rel_err'] for r in recs for lv in r['levels']):.1e}
(relative). Barrier = max over 11 points of L(θ(t)) − [(1−t)L(θ_A) + tL(θ_B)]; error bars min–max over pairs (pairs
share seeds, so they are not independent). The seed predicts that naive averaging fails and alignment helps; it
gives no number. Measured ({slices[0]} slice, mean [min, max] nats): {'; '.join(summary)}; every slice and each step's
own contribution: table_seed001_merge_barrier.md.
"""
    figstyle.save(fig, "fig_seed001_merge_barrier", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, many=True).logs)
