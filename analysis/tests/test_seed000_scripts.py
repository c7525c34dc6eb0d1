"""The seed-000 table and figure scripts on small trainer logs written in pure h5py to the trainer's
log contract (gpt2/README.md, "Training"): each script must run and write a non-trivial output."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import _extendable, write_root

ANALYSIS = Path(__file__).resolve().parent.parent


def write_train_log(path: Path, condition: str, seed: int, every: int, steps: int = 40, drift_top: float = 0.05) -> Path:
    rng = np.random.default_rng(seed + 7 * every)
    cfg = {"condition": condition, "gaugefix_every": every, "n_layer": 2, "n_head": 2, "n_embd": 32,
           "block_size": 16, "max_iters": steps}
    step = np.arange(steps)
    loss = 5.0 * np.exp(-step / 20) + 2 + 0.01 * rng.standard_normal(steps)
    val = np.full(steps, np.nan)
    val[::10] = loss[::10] + 0.05
    drift = np.full(steps, np.nan)
    drift[::5] = 0.0 if condition == "B" and every == 1 else np.linspace(0, drift_top, steps)[::5] * (1 + seed / 1e3)
    s_qk = 1 + np.linspace(0, 1, steps // 5)[:, None, None] * np.ones((1, 2, 2))
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "gpt2/train", "gaugelab train", cfg, seed, 1)
        series = {"loss": loss, "lr": np.full(steps, 1e-3), "grad_norm": 0.5 + rng.random(steps),
                  "tokens_per_s": np.full(steps, 1e3), "val_loss": val, "drift_max": drift,
                  "drift_mean": drift / 2, "spike": (step == 30).astype(float), "after_fix": np.zeros(steps)}
        s = f["series"]
        s.attrs["names"] = json.dumps(list(series))
        _extendable(s, "step", step, np.int64)
        for k, v in series.items():
            _extendable(s, k, v, np.float64)
        h = f["heads"]
        h.attrs["names"] = json.dumps(["s_q", "s_k", "s_qk"])
        _extendable(h, "step", step[::5], np.int64)
        for k in ("s_q", "s_k", "s_qk"):
            _extendable(h, k, s_qk, np.float64)
        fin = np.nanmin(val)
        for k, v in {"condition": condition, "seed": seed, "best_val_loss": fin, "final_val_loss": val[-10],
                     "final_drift_max": drift[-5], "final_drift_mean": drift[-5] / 2,
                     "max_drift_max": np.nanmax(drift), "n_spikes": 1, "stable": 1, "diverged": 0}.items():
            f["summary"].attrs[k] = v
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, list[str]]:
    d = tmp_path_factory.mktemp("seed000")
    grid = [write_train_log(d / f"{c}_{s}.h5", c, s, 1 if c == "B" else 0) for c in "ABC" for s in (42, 123, 456)]
    freq = [write_train_log(d / f"B_N{n}.h5", "B", 42, n) for n in (1, 10, 100, 1000)]
    freq.append(write_train_log(d / "A_freq.h5", "A", 42, 0))
    return {"grid": [str(p) for p in grid], "freq": [str(p) for p in freq]}


@pytest.mark.parametrize("script,which,out", [
    ("table_seed000_main", "grid", "table_seed000_main.md"),
    ("fig_seed000_conditions", "grid", "fig_seed000_conditions.png"),
    ("fig_seed000_series", "grid", "fig_seed000_series.png"),
    ("table_seed000_frequency", "freq", "table_seed000_frequency.md"),
    ("fig_seed000_frequency", "freq", "fig_seed000_frequency.png"),
])
def test_script_writes_its_output(script, which, out, logs, tmp_path):
    env = dict(os.environ, GAUGELAB_FIGURES=str(tmp_path), MPLBACKEND="Agg")
    subprocess.run([sys.executable, str(ANALYSIS / "figures" / f"{script}.py"), *logs[which]], check=True, env=env,
                   cwd=ANALYSIS, timeout=120)
    path = tmp_path / out
    assert path.exists() and path.stat().st_size > 500
    if out.endswith(".md"):
        text = path.read_text()
        assert "paper" in text and text.count("\n|") >= 4


def test_main_table_uses_population_std(logs, tmp_path):
    import seed000_runs as s0
    m, s = s0.mean_std([1.0, 2.0, 3.0])
    assert m == 2.0 and abs(s - np.sqrt(2.0 / 3.0)) < 1e-15


def test_wrong_kind_is_refused(tmp_path):
    import conftest
    p = conftest.write_example(tmp_path / "toy.h5")
    r = subprocess.run([sys.executable, str(ANALYSIS / "figures" / "table_seed000_main.py"), str(p)], capture_output=True,
                       text=True, env=dict(os.environ, GAUGELAB_FIGURES=str(tmp_path)), cwd=ANALYSIS)
    assert r.returncode != 0 and "gpt2/train" in r.stderr


@pytest.mark.parametrize("script", ["table_seed000_main", "table_seed000_frequency", "fig_seed000_series"])
def test_a_proxy_without_drift_is_not_testable_and_one_with_drift_is_decided(script, tmp_path):
    """float32 proxy-like drift (~1e-7 in every condition): every part of seed 000's claims is "not testable here",
    never "no"; the same logs with a drift of 0.05 in A and C give the rule's own yes / no / undecided."""
    import importlib

    mod = importlib.import_module(script)
    for top, testable in ((1e-7, False), (0.05, True)):
        d = tmp_path / f"top{top:g}"
        d.mkdir()
        grid = [write_train_log(d / f"{c}_{s}.h5", c, s, 1 if c == "B" else 0, drift_top=top) for c in "ABC"
                for s in (42, 123, 456)]
        freq = [write_train_log(d / f"B_N{n}.h5", "B", 42, n, drift_top=top) for n in (1, 10, 100, 1000)]
        freq.append(write_train_log(d / "A_freq.h5", "A", 42, 0, drift_top=top))
        v = mod.FIGURE.claim.decide(freq if "frequency" in script else grid)
        if testable:
            assert v.word != "not testable here" and "not testable here" not in v.detail, v
        else:
            assert v.word == "not testable here" and "≤ floor 1e-05" in v.detail, v
