"""Reading the logs of `gaugelab merge-models` (seed 001 §7.4, Algorithm 3) for the merge-barrier figure and table:
one record per log (a pair of checkpoints under one canonical slice), each alignment level's path and barrier."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import gaugelab_log as gl
import manifest

LEVELS = ("none", "residual", "attention", "full")
LEVEL_LABEL = {"none": "naive", "residual": "+ residual perm.", "attention": "+ attention (Alg. 3)",
               "full": "+ MLP units"}


def load(paths: list[str]) -> list[dict]:
    """[{pair, slice, levels: {level: {t, loss, excess, barrier, distance, logit_rel_err}}, loss_a, loss_b}]."""
    out = []
    for p in paths:
        gl.require(p, made_by="make figures (the merge-barrier experiment, analysis/manifest.py)")
        with gl.open_log(p) as f:
            cfg = gl.provenance(f)["config"]
            path = gl.table(f, "path")
            align = gl.table(f, "alignment")
            keep = gl.table(f, "preservation")
        rec = {"pair": f"{Path(cfg['model-a']).parts[-3]} / {Path(cfg['model-b']).parts[-3]}"
               if len(Path(cfg["model-a"]).parts) >= 3 else f"{cfg['model-a']} / {cfg['model-b']}",
               # the measured null's merges (manifest._merge_null): B moved along its orbit before the merge
               "moved": len(Path(cfg["model-b"]).parts) >= 3 and manifest.MERGE_CANON_TAG in Path(cfg["model-b"]).parts[-3],
               "slice": cfg["slice"], "levels": {}, "path_points": cfg.get("path-points"), "batches": cfg.get("batches"),
               "batch_size": cfg.get("batch-size")}
        for lv in LEVELS:
            m = path["level"] == lv
            if not m.any():
                continue
            t, loss = path["t"][m].astype(float), path["loss"][m].astype(float)
            chord = (1 - t) * loss[0] + t * loss[-1]
            am = align["level"] == lv
            km = keep["level"] == lv
            rec["levels"][lv] = {"t": t, "loss": loss, "excess": loss - chord, "barrier": float(np.max(loss - chord)),
                                 "distance": float(align["distance"][am][-1]),
                                 "distance_folded": float(align["distance"][am][0]),
                                 "logit_rel_err": float(np.max(keep["logit_rel_err"][km]))}
            rec["loss_a"], rec["loss_b"] = float(loss[0]), float(loss[-1])
        out.append(rec)
    return out


def experiment(recs: list[dict]) -> list[dict]:
    """The experiment's own merges (without the measured null's)."""
    return [r for r in recs if not r["moved"]]


def moved_pairs(recs: list[dict], level: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The measured null at one alignment level: (barrier of A with B, barrier of A with B moved along its orbit, the
    pairs), QR slice, over the pairs both ran for."""
    key = lambda r: r["pair"].replace(manifest.MERGE_CANON_TAG, manifest.MERGE_TRAIN_TAG)  # noqa: E731  (manifest.merge_model)
    moved = {key(r): r for r in recs if r["moved"] and r["slice"] == "qr" and level in r["levels"]}
    own = {r["pair"]: r for r in recs if not r["moved"] and r["slice"] == "qr" and level in r["levels"]}
    pairs = sorted(set(moved) & set(own))
    return (np.array([own[p]["levels"][level]["barrier"] for p in pairs]),
            np.array([moved[p]["levels"][level]["barrier"] for p in pairs]), pairs)
