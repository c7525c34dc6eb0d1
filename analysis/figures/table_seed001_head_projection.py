#!/usr/bin/env python3
"""Seed 001's Alg. 2 (approximate gauge-orthogonal projection) against the exact projection (Remark 51) on trained
heads, and how much of AdamW's update direction moves along the gauge orbits, per layer and head of the first merge
model's last checkpoint (analysis/head_projection_error.py measures; this renders it).

Input: the log of the merge experiment's first model (experiment manifest.HEAD_PROJECTION_MODEL); its checkpoints
are read beside it. Needs the gaugelab Python module (<build>/python). Writes table_seed001_head_projection.md.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

from pathlib import Path

import numpy as np

import figstyle
import gaugelab_log as gl
import head_projection_error as hpe
import manifest
from figure_decl import Figure

NEEDS_PYTHON_MODULE = True  # the gaugelab module of <build>/python (pybind11, optional in a build): tests skip without it

FIGURE = Figure(
    seed="001", label="App. H.2, Alg. 2 vs Remark 51",
    what="Alg. 2's error against the exact projection on trained heads; AdamW's vertical share",
    inputs=(manifest.HEAD_PROJECTION_MODEL,), status="small-scale proxy",
    paper="Alg. 2 avoids the Sylvester solves \"at the cost of a small approximation error\" (no number)",
    full_scale="analysis/head_projection_error.py on a training checkpoint of a larger model without attention biases "
               "(the protocol's; it reads the heads' weights and the optimizer's m and v)")


def _measure(log: str) -> tuple[dict, Path]:
    gl.require(log, made_by=f"make figures (experiment {manifest.HEAD_PROJECTION_MODEL})")
    try:
        ck = hpe.last_checkpoint(Path(log).parent)
    except FileNotFoundError as e:
        raise gl.LogError(str(e)) from None
    try:
        return hpe.measure(ck), ck
    except ImportError as e:
        raise gl.LogError(f"the gaugelab Python module is not built here ({e}); build it (make) first") from None


def main(log: str) -> None:
    m, ck = _measure(log)
    lines = ["| layer | head | AdamW direction: vertical share | Alg. 2 error on it | Alg. 2 error, random directions "
             "(median) |", "|---|---|---|---|---|"]
    for layer, h, v, ea, er in zip(m["layer"], m["head"], m["vertical"], m["err_adam"], m["err_random"]):
        lines.append(f"| {layer} | {h} | {v:.3g} | {ea:.3g} | {er:.3g} |")
    v, ea, er = (np.asarray(m[k]) for k in ("vertical", "err_adam", "err_random"))
    caption = f"""
Seed 001, App. H.2: per head of {ck.parent.parent.name} at {ck.name} ({m['n_layer']} layers × {m['n_head']} heads; the
effective Q, K, V, O with the multipliers folded in), AdamW's update direction m/(√v + 1e-8) of its stored state:
its vertical share |u − Pu|/|u| (the part along the gauge orbits, which changes no function; P the exact projection of
Remark 51), Alg. 2's relative error |P₂u − Pu|/|Pu| on it, and the median of that error over {hpe.RANDOM_DIRECTIONS} Gaussian
directions per head. Over the {len(v)} heads: vertical share median {np.median(v):.3g} (max {v.max():.3g}); Alg. 2's
error median {np.median(ea):.3g} on AdamW's direction and {np.median(er):.3g} on random ones. The seed calls the error
"small" without a number or a rule; no claim is tested here. Measured by analysis/head_projection_error.py.
"""
    figstyle.save_table("table_seed001_head_projection", "\n".join(lines) + "\n\n" + caption.strip())


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default=f"runs/{manifest.HEAD_PROJECTION_MODEL}/log.h5").log)
