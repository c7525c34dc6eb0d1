"""Small trainer logs of a learning-rate grid, written in pure h5py with the writer's layout (conftest.write_root;
names as in gpt2/train/log.hpp), laid out as make_figures.py --grid lays out a grid (<root>/<run>/log.h5), so the
grid analysis and the results ledger are tested without a build."""
from __future__ import annotations

import json
import math
from pathlib import Path

import h5py
import numpy as np

from conftest import _extendable, write_root

TITLES = {"A": "A: WD on Q/K", "B": "B: GaugeFix", "C": "C: no control", "Q": "QK-norm (C + RMSNorm)"}
INDEX = {"A": 0, "B": 1, "C": 2, "Q": 6}


def run_log(run_dir: Path, key: str, lr: float, seed: int, final_val: float, drift: float = 1e-3,
            precision: str = "bf16", threads: int = 1, diverged: bool = False, stable: bool = True,
            signed_logit: float | None = None, first_loss: float = 9.9, steps: int = 20,
            bf16_mode: str | None = None, cpu_bf16: str = "", device: str = "cpu", processes: int = 1,
            peak: float | None = None, window: float | None = None, sqk: float = 1.0, every: int = 1,
            n_spikes: int | None = None) -> Path:
    """One finished run: its summary as the trainer writes it, a loss series and heads samples; a bf16 run's mode
    by default the CPU bf16 grids' declared "emulated". peak: the summary's max_drift_max (the largest drift over
    the heads samples); window: how far one head's log(s_Q/s_K) moves between the two heads samples (then at steps 1000 and
    1500, a window lr_grid.drift_window reads); sqk: s_Q·s_K at every head and sample; every: GaugeFix's N (the
    summary's gaugefix_every: 0 unless B); n_spikes: the detector's count (default 0 if stable, else 12)."""
    if bf16_mode is None:
        bf16_mode = "emulated" if precision == "bf16" else ""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "log.h5"
    cfg = {"lr": lr, "seed": seed, "precision": precision, "threads": threads, "condition": key, "device": device,
           "gaugefix-every": every}
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "gpt2/train", f"gaugelab train --lr {lr} --seed {seed} --condition {key}", cfg, seed, threads)
        f.attrs["git_sha"] = "abc1234"
        step = np.arange(1, steps + 1)
        s = f["series"]
        hs = np.array([1000, 1500]) if window is not None else np.array([steps // 2, steps])
        s.attrs["names"] = json.dumps(["loss"])
        _extendable(s, "step", step, np.int64)
        _extendable(s, "loss", np.linspace(first_loss, final_val if math.isfinite(final_val) else first_loss, steps),
                    np.float64)
        h = f["heads"]
        names = ["s_qk", "attn_logit_max"] + (["attn_logit_max_signed"] if signed_logit is not None else []) + (
            ["s_q", "s_k"] if window is not None else [])
        h.attrs["names"] = json.dumps(names)
        _extendable(h, "step", hs, np.int64)
        _extendable(h, "s_qk", np.full((2, 2, 2), sqk), np.float64)
        if window is not None:  # head (0, 1) moves by `window` in log(s_Q/s_K); the rest stay balanced
            sq = np.ones((2, 2, 2))
            sq[1, 0, 1] = math.exp(window)
            _extendable(h, "s_q", sq, np.float64)
            _extendable(h, "s_k", np.ones((2, 2, 2)), np.float64)
        _extendable(h, "attn_logit_max", np.full((2, 2, 2), 50.0), np.float64)
        if signed_logit is not None:
            _extendable(h, "attn_logit_max_signed", np.full((2, 2, 2), signed_logit), np.float64)
        summ = {"condition": key, "condition_label": key, "condition_title": TITLES.get(key, key),
                "condition_reference": "-" if key == "A" else "A", "condition_index": INDEX.get(key, 9),
                "optimizer": "adamw", "seed": seed, "final_val_loss": final_val, "best_val_loss": final_val,
                "final_drift_max": drift, "final_eff_imbalance_max": 0.3,
                "n_spikes": n_spikes if n_spikes is not None else 0 if stable else 12,
                "gaugefix_every": every if key == "B" else 0,
                "stable": int(stable and not diverged), "diverged": int(diverged), "completed": int(not diverged),
                "steps": steps, "precision": precision, "processes": processes}
        if peak is not None:  # the trainer's largest drift over the heads samples
            summ["max_drift_max"] = peak
        if bf16_mode:
            summ["bf16_mode"] = bf16_mode
        if cpu_bf16:
            summ["cpu_bf16"] = cpu_bf16
        if diverged:
            summ["stop_reason"] = "non-finite loss"
        for k, v in summ.items():
            f["summary"].attrs[k] = v
    return path


def quadratic_grid(root: Path, keys, lrs, seeds, best_lr: dict, curvature: float = 0.3, drift: dict | None = None,
                   precision: str = "bf16", noise: float = 0.01, threads: int | None = None,
                   arm: str = "", bf16_mode: str | None = None, cpu_bf16: str = "",
                   device: str = "cpu") -> list[Path]:
    """A grid whose final loss is 5 + curvature·(log10 lr − log10 best_lr[key])² + seed noise, one run per cell, named
    as manifest._lr_grid names them (<key>_lr<lr>_s<seed>[_t<threads>][_<arm>]); `arm` a manifest.PRECISION_ARMS
    word ("bf16-native" logs bf16_mode native); without one a bf16 run logs bf16_mode `bf16_mode`, by default the
    CPU bf16 grids' declared "emulated"."""
    if bf16_mode is None:
        bf16_mode = "emulated" if precision == "bf16" else ""
    rng = np.random.default_rng(0)
    out = []
    for seed in seeds:
        for lr in lrs:
            for k in keys:
                v = 5.0 + curvature * (math.log10(float(lr)) - math.log10(best_lr[k])) ** 2 + noise * rng.random()
                d = (drift or {}).get(k, 1e-3) * (1 + rng.random())
                name = f"{k}_lr{lr}_s{seed}" + (f"_t{threads}" if threads else "") + (f"_{arm}" if arm else "")
                out.append(run_log(root / name, k, float(lr), seed, v, drift=d, precision=precision,
                                   threads=threads or 1, bf16_mode=arm.removeprefix("bf16-") if arm else bf16_mode,
                                   cpu_bf16=cpu_bf16, device=device))
    return out
