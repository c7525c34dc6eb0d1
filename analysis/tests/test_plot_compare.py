"""`gaugelab plot` and `gaugelab compare` end to end: two tiny toy runs that differ in lr, drawn to a
PNG whose legend names the differing setting, compared in a table that names it; --watch follows a
live SWMR log and ends by itself once every run has finished; bad input gets one line and a non-zero
exit. Needs the build's gaugelab (GAUGELAB_BUILD_DIR, default build/); skipped with the reason otherwise."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import plot_runs
import run_set

ROOT = Path(__file__).resolve().parents[2]
ANALYSIS = ROOT / "analysis"
BINARY = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build")) / "gaugelab"
LRS = ("0.01", "0.03")
TINY = ["--seeds", "1", "--steps", "100", "--gauges", "2", "--threads", "1"]
WAIT_S = 60


ENV = {**os.environ, "GAUGELAB_ANALYSIS_DIR": str(ANALYSIS)}  # the binary runs this checkout's scripts


def gaugelab(*argv, cwd, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> list[Path]:
    if not BINARY.exists():
        pytest.skip(f"SKIPPED: no gaugelab binary at {BINARY} (build first)")
    d = tmp_path_factory.mktemp("runs")
    out = []
    for lr in LRS:
        r = gaugelab("toy", "relu", "--lr", lr, *TINY, "--out", d / f"relu_lr{lr}.h5", cwd=d)
        assert r.returncode == 0, r.stderr
        out.append(d / f"relu_lr{lr}.h5")
    return out


def test_plot_draws_both_runs_with_the_differing_setting_in_the_legend(two_runs, tmp_path):
    png = tmp_path / "curves.png"
    r = gaugelab("plot", *two_runs, "--metric", "loss,val_mse", "--smooth", "3", "--out", png, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    for lr in LRS:
        assert f"lr={float(lr):g}" in r.stdout
    runs = [run_set.load(p) for p in two_runs]
    assert run_set.differing(runs) == ["lr"]
    fig, labels = plot_runs.draw(runs, ["loss", "val_mse"])
    legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert legend == labels == [f"lr={float(lr):g}" for lr in LRS]
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == ["loss", "val_mse"]


def test_runs_of_identical_settings_are_labelled_by_name_and_a_run_dir_reads_its_log(two_runs, tmp_path):
    run_dir = tmp_path / "my_run"
    run_dir.mkdir()
    shutil.copy(two_runs[0], run_dir / "log.h5")
    runs = [run_set.load(two_runs[0]), run_set.load(run_dir)]
    assert run_set.differing(runs) == []  # only --out differs, and it is not a setting of the computation
    assert plot_runs.draw(runs, ["loss"])[1] == [two_runs[0].stem, "my_run"]


def test_a_sweep_log_stands_for_each_of_its_runs(two_runs, tmp_path):
    sweep = tmp_path / "sweep.h5"
    r = gaugelab("sweep", "relu", "--lr", ",".join(LRS), "--seeds", "2", "--steps", "50", "--gauges", "2", "--threads", "1",
                 "--out", sweep, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = run_set.load_all(sweep)
    assert len(runs) == 2 * len(LRS) and sorted(run_set.differing(runs)) == ["lr", "seed"]
    assert all(len(run.series["step"]) == len(runs[0].series["step"]) > 1 for run in runs)
    r = gaugelab("plot", sweep, "--metric", "val_mse", "--out", tmp_path / "sweep.png", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    seeds = run_set.seed_list(sorted({run.settings["seed"] for run in runs}))
    for lr in LRS:  # a curve per grid point: the mean over its seeds, labelled by its setting and seeds
        assert f"lr={float(lr):g}, seeds {seeds}" in r.stdout
    r = gaugelab("compare", sweep, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    header = r.stdout.splitlines()[1]
    assert [c.strip() for c in header.strip("|").split("|")][1:] == [f"lr={float(lr):g}, seeds {seeds}" for lr in LRS]


def test_compare_prints_the_differing_setting_and_summaries(two_runs, tmp_path):
    r = gaugelab("compare", *two_runs, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "differing settings: lr" in r.stdout
    row = next(line for line in r.stdout.splitlines() if line.startswith("| lr (differs)"))
    assert [c.strip() for c in row.strip("|").split("|")][1:] == [f"{float(lr):g}" for lr in LRS]
    assert "final_val_mse_mean" in r.stdout  # a summary key of the toy


def test_watch_ends_when_every_run_has_finished(two_runs, tmp_path):
    r = gaugelab("plot", *two_runs, "--watch", "--interval", "0.2", "--out", tmp_path / "w.png", cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("wrote") == 1 and "running" not in r.stdout


def test_watch_redraws_a_live_log(tmp_path):
    if not BINARY.exists():
        pytest.skip(f"SKIPPED: no gaugelab binary at {BINARY} (build first)")
    live = tmp_path / "live.h5"
    code = f"import sys; sys.path.insert(0, {str(ANALYSIS)!r}); import conftest; conftest.live_writer({str(live)!r}, max_seconds=40)"
    writer = subprocess.Popen([sys.executable, "-c", code])
    plotter = None
    try:
        t0 = time.monotonic()
        while not live.exists() and time.monotonic() - t0 < WAIT_S:
            time.sleep(0.1)
        plotter = subprocess.Popen([str(BINARY), "plot", str(live), "--watch", "--interval", "0.5", "--out",
                                    str(tmp_path / "live.png")], stdout=subprocess.PIPE, text=True, env=ENV)
        steps = []
        while len(steps) < 2 and time.monotonic() - t0 < WAIT_S:
            line = plotter.stdout.readline()
            if "step" in line and "running" in line:
                steps.append(int(line.split("(step ")[1].split(",")[0]))
        assert len(steps) == 2 and steps[1] > steps[0], f"watch did not follow the live log: {steps}"
        assert (tmp_path / "live.png").exists()
        plotter.send_signal(signal.SIGINT)  # ends the watch after the redraw in progress
        assert plotter.wait(timeout=WAIT_S) == 0
    finally:
        for p in (plotter, writer):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


@pytest.mark.parametrize("argv, status, says", [
    (["plot"], 2, "the following arguments are required: RUN"),
    (["compare", "no_such_run.h5"], 1, "no_such_run.h5"),
    (["plot", "no_such_run.h5"], 1, "no_such_run.h5"),
    (["plot", "RUN0", "--metric", "no_such_series"], 1, "no_such_series"),
    (["plot", "RUN0", "--smooth", "0"], 2, "--smooth"),
])
def test_bad_input_gets_one_line_and_a_nonzero_exit(two_runs, tmp_path, argv, status, says):
    argv = [str(two_runs[0]) if a == "RUN0" else a for a in argv]
    r = gaugelab(*argv, cwd=tmp_path)
    assert r.returncode == status
    lines = r.stderr.strip().splitlines()
    assert says in r.stderr and "Traceback" not in r.stderr
    assert lines[-1].startswith(f"gaugelab {argv[0]}: error: "), r.stderr
    assert len(lines) == 1, r.stderr  # a usage error (status 2) too: --help prints the usage


def test_smooth_is_a_centred_mean_over_finite_values():
    y = np.array([1.0, 3.0, np.nan, 5.0, 7.0, 2.0])
    s = plot_runs.smooth(y, 2)  # 3 points centred, narrowed at the ends
    np.testing.assert_allclose(s[[0, 1, 3, 4, 5]], [1.0, 3.0, 5.0, 14 / 3, 2.0])
    assert np.isnan(s[2])


def test_smooth_does_not_lag_a_trend():
    """A trailing mean of a falling line sits above it by (n - 1) / 2 steps' fall; the centred one is on it."""
    y = 10.0 - 0.05 * np.arange(200)
    np.testing.assert_allclose(plot_runs.smooth(y, 20), y, atol=1e-12)
