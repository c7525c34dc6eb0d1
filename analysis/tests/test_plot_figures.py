"""`gaugelab plot` as a researcher reads it, on logs written by pure h5py (tests/plot_logs.py): seeds
grouped into a mean and a band, --x step|tokens|time, sparse series with markers and never smoothed, the
key results as default panels, a bounded image, a note where curves coincide, merge-models and hessian
logs drawn, and usage errors in one line with exit status 2 (never overwriting an --out)."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import plot_runs
import run_set
from conftest import ANALYSIS
from plot_logs import diag_log, hessian_log, merge_log, toy_log, train_log
from script_runner import Completed, run_script


def plot(*argv, cwd) -> Completed:
    """`gaugelab plot ARGV` as the front door runs it (plot_runs.py, its name for messages), in this process."""
    return run_script(ANALYSIS / "plot_runs.py", *map(str, argv), cwd=cwd, env={"GAUGELAB_PROG": "gaugelab plot"})


def png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def lines_of(fig, title_start: str):
    ax = next(a for a in fig.axes if a.get_visible() and a.get_title().startswith(title_start))
    return ax, [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]


def test_seeds_are_grouped_into_a_mean_and_a_band(tmp_path):
    runs = run_set.load_all(toy_log(tmp_path / "relu.h5", seeds=10))
    assert len(runs) == 10  # every seed of the toy, not only the first one its /series holds
    fig, labels = plot_runs.draw(runs, ["val_mse"])
    assert labels == ["relu, seeds 0–9"]
    ax, lines = lines_of(fig, "val_mse")
    assert len(lines) == 1 and len(ax.collections) == 1  # one mean line, one band
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    seeds = np.array([r.series["val_mse"] for r in runs])
    assert band.min() >= seeds.min() - 1e-12 and band.max() <= seeds.max() + 1e-12  # lowest to highest seed
    np.testing.assert_allclose(lines[0].get_ydata(), seeds.mean(axis=0))


def test_a_sweep_groups_by_grid_point(tmp_path):
    runs = run_set.load_all(toy_log(tmp_path / "sweep.h5", seeds=8, kind="sweep/relu", grid={"lr": [0.01, 0.03, 0.1]}))
    assert len(runs) == 24
    groups, keys = run_set.groups(runs)
    assert keys == ["lr"] and [g.label for g in groups] == [f"lr={v}, seeds 0–7" for v in ("0.01", "0.03", "0.1")]
    fig, labels = plot_runs.draw(runs, ["loss"])
    assert len(lines_of(fig, "loss")[1]) == 3


def test_a_seed_group_is_labelled_by_its_recorded_settings_not_a_directory_name(tmp_path):
    """Directories named after condition A hold condition B runs: the label says B and the seeds, from
    the logs' settings; the directory names appear nowhere in it."""
    paths = []
    for seed in (123, 42):
        (tmp_path / f"train_A_s{seed}").mkdir()
        paths.append(train_log(tmp_path / f"train_A_s{seed}" / "log.h5", condition="B", seed=seed))
    runs = [run_set.load(p.parent) for p in paths]
    groups, keys = run_set.groups(runs)
    assert keys == [] and [g.label for g in groups] == ["condition=B, seeds 42, 123"]
    other = [*runs, run_set.load(train_log(tmp_path / "c.h5", condition="C", seed=42)),
             run_set.load(train_log(tmp_path / "c2.h5", condition="C", seed=123))]
    assert [g.label for g in run_set.groups(other)[0]] == ["condition=B, seeds 42, 123", "condition=C, seeds 42, 123"]


def test_default_panels_are_the_key_results(tmp_path):
    runs = [run_set.load(train_log(tmp_path / "a.h5"))]
    assert plot_runs.choose_metrics(runs, []) == ["loss", "val_loss", "drift_max", "attn_logit_max"]


def test_a_sparse_series_gets_markers_and_no_smoothing(tmp_path):
    run = run_set.load(train_log(tmp_path / "one_eval.h5", steps=60, eval_every=60))  # one evaluation
    fig, _ = plot_runs.draw([run], ["loss", "val_loss"], smooth_n=10)
    ax, (line,) = lines_of(fig, "val_loss")
    assert line.get_marker() == "o" and list(line.get_ydata()) == [run.series["val_loss"][-1]]
    assert ax.get_title() == "val_loss"  # not "(centred mean of 11 points)"
    loss_ax = lines_of(fig, "loss")[0]
    assert loss_ax.get_title() == "loss (centred mean of 11 points)"
    assert loss_ax.get_ylabel() == "loss\ncentred mean of 11 points" and ax.get_ylabel() == "val_loss"


@pytest.mark.parametrize("axis, expect", [("step", lambda s: s), ("tokens", lambda s: 64.0 * s),
                                          ("time", lambda s: s / 50.0)])
def test_x_axis_step_tokens_or_time(tmp_path, axis, expect):
    run = run_set.load(train_log(tmp_path / "a.h5"))
    fig, _ = plot_runs.draw([run], ["loss"], x=axis)
    ax, (line,) = lines_of(fig, "loss")
    np.testing.assert_allclose(line.get_xdata(), expect(run.series["step"].astype(float)))
    assert ax.get_xlabel().startswith({"step": "step", "tokens": "training tokens", "time": "training time"}[axis])


def test_x_tokens_of_a_toy_is_one_line_naming_the_flag(tmp_path):
    r = plot(toy_log(tmp_path / "relu.h5"), "--x", "tokens", "--out", tmp_path / "t.png", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.startswith("gaugelab plot: error: --x tokens:")
    assert len(r.stderr.strip().splitlines()) == 1


def test_curves_that_coincide_are_said_so(tmp_path):
    b = train_log(tmp_path / "B.h5", condition="B")
    c = train_log(tmp_path / "C.h5", condition="C")
    d = train_log(tmp_path / "D.h5", condition="D", loss_shift=0.5)
    r = plot(b, c, d, "--metric", "loss,val_loss", "--out", tmp_path / "bc.png", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert ("note: loss: condition=C coincides with condition=B (identical at every step): the settings that "
            "differ left this series unchanged") in r.stdout
    assert "condition=D coincides" not in r.stdout
    import plot_curves

    drawing = plot_curves.draw([run_set.load(p) for p in (b, c, d)], ["loss"])
    ax = drawing.fig.axes[0]
    assert "condition=C = condition=B: identical" in ax.get_title()
    assert [ln.get_linestyle() for ln in ax.get_lines()] == ["-", "--", "-"]  # the twin dashed, so both show


def test_a_train_log_beside_a_toy_log_gives_a_bounded_image(tmp_path):
    out = tmp_path / "mixed.png"
    r = plot(train_log(tmp_path / "train.h5"), toy_log(tmp_path / "relu.h5"), "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    w, h = png_size(out)
    assert w <= 1600 and h <= 1400, (w, h)


def test_a_diag_log_is_drawn_as_spread_against_kappa(tmp_path):
    diag = diag_log(tmp_path / "diag.h5")
    r = plot(diag, "--out", tmp_path / "diag.png", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert png_size(tmp_path / "diag.png")[0] > 400
    import plot_tables

    fig = plot_tables.draw("spread", run_set.load_all(diag))
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["none — general", "full — general"]
    assert all(ax.get_xscale() == ax.get_yscale() == "log" for ax in panels)
    sgd = next(ln for ln in panels[0].get_lines() if ln.get_label() == "sgd")
    np.testing.assert_allclose(sgd.get_xdata(), [1.0, 10.0, 100.0])
    np.testing.assert_allclose(sgd.get_ydata(), [1e-3, 1e-1, 10.0])  # the table's medians, against κ
    r = plot(diag, diag, "--out", tmp_path / "two.png", cwd=tmp_path)
    assert r.returncode == 1 and "plot each diag log alone" in r.stderr


def test_a_merge_log_and_a_hessian_log_are_drawn(tmp_path):
    merge_dir = tmp_path / "merged"
    merge_log(merge_dir)
    r = plot(merge_dir, "--out", tmp_path / "merge.png", cwd=tmp_path)  # the run directory, as merge-models names it
    assert r.returncode == 0, r.stderr
    assert png_size(tmp_path / "merge.png")[0] > 600
    runs = run_set.load_all(merge_dir)
    import plot_tables

    fig = plot_tables.draw("merge", runs)
    path_ax, bar_ax = fig.axes
    assert path_ax.get_xlabel().startswith("t (0 = model A") and path_ax.get_ylabel() == "validation loss"
    assert [ln.get_label() for ln in path_ax.get_lines()] == ["none", "residual", "attention", "full"]
    assert [round(p.get_height(), 3) for p in bar_ax.patches] == [0.45, 0.02, 0.01, 0.005]
    hess = hessian_log(tmp_path / "hess.h5")
    r = plot(hess, "--out", tmp_path / "hess.png", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fig = plot_tables.draw("hessian", run_set.load_all(hess))
    titles = [ax.get_title().split("\n") for ax in fig.axes]
    assert [t[0] for t in titles] == ["full Hessian spectrum", "quotient spectrum", "metric spectrum"]
    assert titles[0][1] == "under random gauges: changes by up to 1.1 (relative)"  # (7 + 8) / 7 - 1
    assert list(fig.axes[0].get_lines()[0].get_xdata()) == [1, 2, 3]


@pytest.mark.parametrize("argv, says", [
    (["--out", "a.xyz"], "--out a.xyz: an unknown image type .xyz"),
    (["--out", "noext"], "--out noext: no image suffix"),
    (["--out", "x.h5"], "--out x.h5: a run log, not an image"),
    (["--out", "EXISTS"], "exists; add --force to replace it"),
    (["--watch", "--interval", "inf"], "--interval must be a number of seconds"),
    (["--interval", "nan"], "--interval must be a number of seconds"),
    (["--x", "epoch"], "argument --x: invalid choice"),
    ([], "the following arguments are required: RUN"),
])
def test_usage_errors_are_one_line_with_status_2(tmp_path, argv, says):
    log = train_log(tmp_path / "a.h5")
    existing = tmp_path / "exists.png"
    existing.write_bytes(b"keep")
    run_args = [log] if argv else []
    r = plot(*run_args, *[existing if a == "EXISTS" else a for a in argv], cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("gaugelab plot: error: ") and says in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert existing.read_bytes() == b"keep"
    assert not (tmp_path / "a.xyz").exists() and not (tmp_path / "x.h5").exists()


def test_force_replaces_an_existing_out(tmp_path):
    out = tmp_path / "p.png"
    out.write_bytes(b"old")
    r = plot(train_log(tmp_path / "a.h5"), "--out", out, "--force", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert png_size(out)[0] > 100
