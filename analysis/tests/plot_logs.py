"""Small logs of the kinds `gaugelab plot` and `compare` meet, written in pure h5py with the writer's
layout (conftest.write_root; names as in gpt2/train/log.hpp, the toys, merge-models and hessian), so
the plot tests need no build."""
from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np

from conftest import _extendable, write_root

TRAIN_SETTINGS = {f"option-{i:02d}": i for i in range(60)}  # a trainer's many settings
TOY_SETTINGS = {f"toy-option-{i:02d}": 0.5 for i in range(40)}


def _series(f: h5py.File, columns: dict) -> None:
    s = f["series"]
    s.attrs["names"] = json.dumps([k for k in columns if k != "step"])
    for k, v in columns.items():
        _extendable(s, k, v, np.int64 if k == "step" else np.float64)


def train_log(path: Path, condition: str = "B", seed: int = 1, steps: int = 60, eval_every: int = 20,
              loss_shift: float = 0.0, summary: dict | None = None) -> Path:
    """A gpt2/train-like log: dense loss, lr, tokens; val_loss on eval steps only (NaN between), drift and
    attention-logit max every 10 steps."""
    step = np.arange(1, steps + 1)
    sampled = lambda v: np.where(step % 10 == 0, v, np.nan)  # noqa: E731
    cols = {"step": step, "loss": 10.0 - 0.05 * step + loss_shift + 0.01 * seed, "lr": np.full(steps, 6e-4),
            "grad_norm": np.full(steps, 1.2), "tokens_per_s": np.full(steps, 64.0 * 50), "tokens": 64.0 * step,
            "val_loss": np.where(step % eval_every == 0, 10.1 - 0.05 * step + loss_shift, np.nan),
            "drift_max": sampled(1e-3 * step), "attn_logit_max": sampled(0.05 + 1e-3 * step)}
    config = {"condition": condition, "seed": seed, "eval-every": eval_every, "out": str(path.parent), **TRAIN_SETTINGS}
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "gpt2/train", "gaugelab train", config, seed, 1)
        _series(f, cols)
        done = {"final_val_loss": float(cols["val_loss"][-1]), "steps": steps} if summary is None else summary
        for k, v in done.items():
            f["summary"].attrs[k] = v
    return path


def toy_log(path: Path, seeds: int = 10, kind: str = "toy/relu", grid: dict | None = None) -> Path:
    """A toy (or, with grid, a sweep) log: /tables/runs (one row per grid point and seed) and
    /tables/run_series (their curves); a toy's /series is its first seed's."""
    points = [dict(zip(grid, v)) for v in zip(*grid.values())] if grid else [{}]
    rows = [(p, s) for p in points for s in range(seeds)]
    step = np.arange(0, 110, 10)
    curves = {"run": [], "step": [], "train_mse": [], "val_mse": [], "loss": [], "balance_drift": []}
    for i, (p, s) in enumerate(rows):
        lr = p.get("lr", 0.01)
        mse = 0.5 - lr * step / 100 + 0.002 * s
        for k, v in (("run", np.full(len(step), i)), ("step", step), ("train_mse", mse), ("val_mse", mse + 0.02),
                     ("loss", mse), ("balance_drift", lr * 1e-3 * step * (1 + 0.1 * s))):
            curves[k].append(v)
    config = {"seeds": seeds, "seed": 0, **TOY_SETTINGS}
    if grid:
        config["grid"] = [{"name": k, "values": v} for k, v in grid.items()]
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, kind, f"gaugelab {kind.replace('/', ' ')}", config, 0, 1)
        if not grid:
            _series(f, {k: v[0] for k, v in curves.items() if k != "run"})
        t = f["tables"].create_group("run_series")
        t.attrs["columns"] = json.dumps(list(curves))
        for k, v in curves.items():
            _extendable(t, k, np.concatenate(v), np.int64 if k in ("run", "step") else np.float64)
        r = f["tables"].create_group("runs")
        cols = {"row": np.arange(len(rows)), **{k: [p[k] for p, _ in rows] for k in (grid or {})},
                "seed": [s for _, s in rows], "final_val_mse": [c[-1] for c in curves["val_mse"]]}
        r.attrs["columns"] = json.dumps(list(cols))
        for k, v in cols.items():
            _extendable(r, k, v, np.int64 if k in ("row", "seed") else np.float64)
        f["summary"].attrs["complete"] = 1
    return path


def _table(f: h5py.File, name: str, cols: dict) -> None:
    t = f["tables"].create_group(name)
    t.attrs["columns"] = json.dumps(list(cols))
    for k, v in cols.items():
        v = np.asarray(v)
        if v.dtype.kind == "U":
            _extendable(t, k, np.char.encode(v), h5py.string_dtype("utf-8", 16))
        else:
            _extendable(t, k, v, v.dtype)


def merge_log(run_dir: Path) -> Path:
    """merge-models' DIR/merge.h5: /tables/path (level, t, loss) and barrier_<level> in /summary."""
    run_dir.mkdir(parents=True, exist_ok=True)
    t = np.linspace(0, 1, 5)
    levels = ["none", "residual", "attention", "full"]
    bumps = [0.45, 0.02, 0.01, 0.005]
    with h5py.File(run_dir / "merge.h5", "w", libver="latest") as f:
        write_root(f, "gpt2/merge-models", "gaugelab merge-models", {"align": "full"}, 0, 1)
        _table(f, "path", {"level": np.repeat(levels, len(t)), "t": np.tile(t, len(levels)),
                           "loss": np.concatenate([10.06 - 0.03 * t + 4 * b * t * (1 - t) for b in bumps])})
        for level, b in zip(levels, bumps):
            f["summary"].attrs[f"barrier_{level}"] = b
    return run_dir / "merge.h5"


def hessian_log(path: Path) -> Path:
    """hessian's log: /tables/spectrum (gauge, space, rank, eigenvalue) for gauge 0 (as trained) and 1."""
    spaces = ["full", "quotient", "metric"]
    rows = [(g, s, k) for g in (0, 1) for s in spaces for k in (1, 2, 3)]
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "gpt2/hessian", "gaugelab hessian", {"top-k": 3}, 0, 1)
        _table(f, "spectrum", {"gauge": np.array([g for g, _, _ in rows]), "space": np.array([s for _, s, _ in rows]),
                               "rank": np.array([k for _, _, k in rows]),
                               "eigenvalue": np.array([(7.0 + 8 * g) / k * (60 if s == "metric" else 1)
                                                       for g, s, k in rows])})
        f["summary"].attrs["lambda_full"] = 7.0
    return path


def diag_log(path: Path) -> Path:
    """diag heads' log: /tables/spread, one row per rule × wrapper × κ × family (transport 'covector'), the
    plain rule's spread growing like κ², the corrected one's at round-off."""
    rows = [(rule, w, fam, k) for rule in ("sgd", "adamw") for w in ("none", "full") for fam in ("general", "orthogonal")
            for k in ((1.0,) if fam == "orthogonal" else (1.0, 10.0, 100.0))]
    spread = [(1e-16 if w == "full" else 1e-3 * k * k * (2 if rule == "adamw" else 1)) for rule, w, _, k in rows]
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "diag/heads", "gaugelab diag heads", {"gauges": 4}, 0, 1)
        _table(f, "spread", {"rule": np.array([r[0] for r in rows]), "transport": np.array(["covector"] * len(rows)),
                             "wrapper": np.array([r[1] for r in rows]), "family": np.array([r[2] for r in rows]),
                             "kappa": np.array([r[3] for r in rows]), "first_order_spread_median": np.array(spread),
                             "first_order_spread_max": 2 * np.array(spread)})
    return path
