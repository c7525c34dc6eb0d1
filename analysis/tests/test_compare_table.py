"""`gaugelab compare` on logs written by pure h5py (tests/plot_logs.py): a sweep is one column per grid
point with mean ± sd over its seeds (--per-run: a column per run), cells stay short, and a value never
measured (a run interrupted before its first evaluation) shows as '—', not 'nan'."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys

import run_set
from conftest import ANALYSIS
from plot_logs import toy_log, train_log


def compare(*argv, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "GAUGELAB_PROG": "gaugelab compare"}
    return subprocess.run([sys.executable, str(ANALYSIS / "compare_runs.py"), *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def table(stdout: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in stdout.splitlines()
            if line.startswith("|") and not line.startswith("|-")]


def test_a_sweep_is_a_column_per_grid_point_with_mean_and_sd_over_seeds(tmp_path):
    sweep = toy_log(tmp_path / "sweep.h5", seeds=8, kind="sweep/relu", grid={"lr": [0.01, 0.03, 0.1]})
    r = compare(sweep, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout)
    assert rows[0][1:] == ["lr=0.01, seeds 0–7", "lr=0.03, seeds 0–7", "lr=0.1, seeds 0–7"]
    cells = {row[0]: row[1:] for row in rows[1:]}
    assert cells["seeds"] == ["0–7"] * 3
    finals = [r.summary["final_val_mse"] for r in run_set.load_all(sweep) if r.settings["lr"] == 0.1]
    mean, sd = statistics.mean(finals), statistics.stdev(finals)
    assert cells["final_val_mse"][2] == f"{mean:.4g} ± {sd:.2g}"
    assert "mean ± sd over a group's seeds" in r.stdout
    assert max(len(c) for row in rows for c in row) <= 30


def test_per_run_keeps_a_column_per_run(tmp_path):
    sweep = toy_log(tmp_path / "sweep.h5", seeds=2, kind="sweep/relu", grid={"lr": [0.01, 0.03]})
    r = compare(sweep, "--per-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(table(r.stdout)[0]) == 1 + 4


def test_a_run_interrupted_before_its_first_evaluation_shows_no_nan(tmp_path):
    early = train_log(tmp_path / "early.h5", condition="B", steps=5, summary={"final_val_loss": float("nan"), "steps": 5})
    done = train_log(tmp_path / "done.h5", condition="C")
    r = compare(early, done, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cells = {row[0]: row[1:] for row in table(r.stdout)}
    assert cells["final_val_loss"][0] == "—" and "nan" not in r.stdout
    assert "—: not measured" in r.stdout


def test_a_group_of_training_seeds_lists_its_seeds_and_never_averages_them(tmp_path):
    """A training log records its seed in /summary too: a column of seeds lists them once, in 'seeds',
    and has no 'seed' row of mean ± sd."""
    logs = [train_log(tmp_path / f"{c}{s}.h5", condition=c, seed=s, summary={"final_val_loss": 7.0 + s / 1000, "seed": s})
            for c in "BC" for s in (42, 123)]
    r = compare(*logs, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cells = {row[0]: row[1:] for row in table(r.stdout)}
    assert cells["seeds"] == ["42, 123", "42, 123"] and "seed" not in cells
    finals = [7.042, 7.123]
    assert cells["final_val_loss"][0] == f"{statistics.mean(finals):.4g} ± {statistics.stdev(finals):.2g}"
