#!/usr/bin/env python3
"""Seed 001's Alg. 2 (approximate gauge-orthogonal projection) against the exact one (Remark 51) on the
heads of a training checkpoint, and how much of AdamW's update moves along the gauge orbit.

  head_projection_error.py CHECKPOINT_DIR [--random 20] [--seed 0]

For every layer and head: the effective W_q, W_k, W_v [d, d_h] and W_o [d_h, d] (learnable multipliers
folded in, W_eff = diag(r)·W̄·diag(c); no biases in the protocol), and two kinds of direction:
  adam    the optimizer's update direction m/(√v + 1e-8) of the stored weights (optimizer.safetensors),
          mapped to the effective ones as diag(r)·ΔW̄·diag(c) (the multipliers' own moves left out);
  random  --random Gaussian directions (median over them).
Printed per head: the vertical share of the adam direction, |u − P u| / |u| (the part that changes no
function), and Alg. 2's relative error |P₂ g − P g| / |P g| for both kinds (P exact, P₂ Alg. 2).
Needs the gaugelab Python module (<build>/python; GAUGELAB_BUILD_DIR, default build/).
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build")) / "python"))


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    b = path.read_bytes()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {info['dtype']}, only F32 is read here")
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(b[8 + n + lo:8 + n + hi], dtype="<f4").reshape(info["shape"]).astype(np.float64)
    return out


def scales(t: dict, prefix: str, rows: str, cols: str, n_rows: int, n_cols: int):
    r = t.get(f"{prefix}.{rows}", np.ones(n_rows))
    c = t.get(f"{prefix}.{cols}", np.ones(n_cols))
    return (r if r.size == n_rows else np.full(n_rows, float(r.reshape(-1)[0]))), \
           (c if c.size == n_cols else np.full(n_cols, float(c.reshape(-1)[0])))


def heads_of(t: dict, layer: int, n_head: int, direction: dict | None = None):
    """[(W_q, W_k, W_v, W_o)] per head of one layer, effective; from `direction` (same keys) when given,
    mapped with the point's multipliers."""
    src = direction if direction is not None else t
    pre = f"h.{layer}.attn"
    w = src[f"{pre}.c_attn.weight"]  # [3d, d]
    d = w.shape[1]
    dh = d // n_head
    parts = []
    for i, name in enumerate("qkv"):
        r, c = scales(t, f"{pre}.c_attn", f"r_{name}", f"c_{name}", d, d)
        parts.append(r[:, None] * w[i * d:(i + 1) * d] * c[None, :])  # [d_out, d_in]
    r, c = scales(t, f"{pre}.c_proj", "r", "c", d, d)
    p = r[:, None] * src[f"{pre}.c_proj.weight"] * c[None, :]  # [d_out, d_in]
    out = []
    for h in range(n_head):
        sl = slice(h * dh, (h + 1) * dh)
        out.append((parts[0][sl].T, parts[1][sl].T, parts[2][sl].T, p[:, sl].T))  # [d, dh] x3, [dh, d]
    return out


RANDOM_DIRECTIONS = 20  # random directions per head (the command line's default, and the rendered table's)
CHECKPOINT_FILES = ("config.json", "model.safetensors", "optimizer.safetensors")


def last_checkpoint(run_dir: Path) -> Path:
    """A training run's newest complete checkpoint directory (run_dir/checkpoints/step_* holding CHECKPOINT_FILES; an
    incomplete one, e.g. a write cut short, is passed over as the trainer's resume passes it over)."""
    steps = [d for d in sorted((run_dir / "checkpoints").glob("step_*")) if all((d / f).is_file() for f in CHECKPOINT_FILES)]
    if not steps:
        raise FileNotFoundError(f"{run_dir}: no complete checkpoints/step_* to measure")
    return steps[-1]


def measure(checkpoint: Path, random: int = RANDOM_DIRECTIONS, seed: int = 0) -> dict:
    """Per head of the checkpoint: {"layer", "head", "vertical" (AdamW's direction), "err_adam", "err_random"
    (median over `random` Gaussian directions)}, as lists, and "n_layer", "n_head"."""
    import gaugelab as g

    cfg = json.loads((checkpoint / "config.json").read_text())
    model_cfg = cfg.get("model", cfg)
    n_layer, n_head = int(model_cfg["n_layer"]), int(model_cfg["n_head"])
    point = read_safetensors(checkpoint / "model.safetensors")
    opt = read_safetensors(checkpoint / "optimizer.safetensors")
    adam = {k[2:]: opt[k] / (np.sqrt(opt["v/" + k[2:]]) + 1e-8) for k in opt if k.startswith("m/")}
    rng = np.random.default_rng(seed)

    def head(ws):
        wq, wk, wv, wo = ws
        z = np.zeros
        return g.AttentionHead(wq, wk, wv, wo, z(wq.shape[1]), z(wk.shape[1]), z(wv.shape[1]))

    def norm(x):
        return float(np.sqrt(g.head_inner(x, x)))

    def diff(x, y):
        return g.AttentionHead(x.W_q - y.W_q, x.W_k - y.W_k, x.W_v - y.W_v, x.W_o - y.W_o, x.b_q - y.b_q,
                               x.b_k - y.b_k, x.b_v - y.b_v)

    out = {"layer": [], "head": [], "vertical": [], "err_adam": [], "err_random": [], "n_layer": n_layer,
           "n_head": n_head}
    for layer in range(n_layer):
        pts = heads_of(point, layer, n_head)
        dirs = heads_of(point, layer, n_head, adam)
        for hi, (ws, us) in enumerate(zip(pts, dirs)):
            h, u = head(ws), head(us)
            pu = g.head_horizontal_projection(h, u)
            errs = []
            for _ in range(random):
                r = head(tuple(rng.standard_normal(x.shape) for x in ws))
                pr = g.head_horizontal_projection(h, r)
                errs.append(norm(diff(g.head_horizontal_projection_approx(h, r), pr)) / norm(pr))
            out["layer"].append(layer)
            out["head"].append(hi)
            out["vertical"].append(norm(diff(u, pu)) / norm(u))
            out["err_adam"].append(norm(diff(g.head_horizontal_projection_approx(h, u), pu)) / norm(pu))
            out["err_random"].append(float(np.median(errs)))
    return out


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--random", type=int, default=RANDOM_DIRECTIONS, help="random directions per head")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    m = measure(a.checkpoint, a.random, a.seed)
    print(f"{a.checkpoint}: {m['n_layer']} layers x {m['n_head']} heads")
    print(f"{'layer':>5} {'head':>4} {'adam vertical share':>20} {'Alg.2 err (adam)':>17} {'Alg.2 err (random, median)':>27}")
    for layer, hi, v, ea, er in zip(m["layer"], m["head"], m["vertical"], m["err_adam"], m["err_random"]):
        print(f"{layer:5d} {hi:4d} {v:20.3e} {ea:17.3e} {er:27.3e}")
    v, ea, er = (np.array(m[k]) for k in ("vertical", "err_adam", "err_random"))
    print(f"over {len(v)} heads: adam vertical share median {np.median(v):.3e} (max {v.max():.3e}); "
          f"Alg. 2 error median {np.median(ea):.3e} (adam), {np.median(er):.3e} (random)")


if __name__ == "__main__":
    main(sys.argv[1:])
