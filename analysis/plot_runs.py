#!/usr/bin/env python3
"""Curves of one or many run logs on shared axes (`gaugelab plot`): one panel per metric (a /series
name), one colour per run (a sweep log: one per grid point and seed), the settings that differ between
the runs in the legend. With --watch the figure is redrawn every --interval seconds from the live logs
(SWMR reads) until every log has finished; open FILE in an image viewer that reloads on change.

Example: gaugelab plot runs/train_A runs/train_B --metric loss,val_loss,drift_max --smooth 20 --out ab.png"""
from __future__ import annotations

import argparse
import math
import os
import signal
import threading
from pathlib import Path

import numpy as np

import figstyle  # noqa: F401  (selects the Agg backend)
import gaugelab_log as gl
import run_set

MAX_DEFAULT_PANELS = 6  # without --metric: the first six series, the rest listed on the terminal


def options(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=os.environ.get("GAUGELAB_PROG"), description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run log (.h5) or run directory holding log.h5")
    ap.add_argument("--metric", help="comma list of series to draw (default: the first six the runs hold)")
    ap.add_argument("--out", default="plot.png", metavar="FILE", help="image to write, PNG/PDF/SVG by suffix (default: plot.png)")
    ap.add_argument("--smooth", type=int, default=1, metavar="N",
                    help="trailing moving average over N points, raw curve drawn faintly behind (default: 1, none)")
    ap.add_argument("--logy", action="store_true", help="logarithmic y axes")
    ap.add_argument("--watch", action="store_true", help="redraw periodically until every run has finished")
    ap.add_argument("--interval", type=float, default=5.0, metavar="S", help="seconds between redraws with --watch (default: 5)")
    a = ap.parse_args(argv)
    if a.smooth < 1:
        ap.error(f"--smooth must be >= 1, got {a.smooth}")
    if not a.interval > 0:
        ap.error(f"--interval must be > 0, got {a.interval}")
    a.metrics = [m for m in (a.metric or "").split(",") if m]
    return a


def smooth(y: np.ndarray, n: int) -> np.ndarray:
    """Trailing mean over the last n finite values (NaN where y is NaN, e.g. steps without a val loss)."""
    if n <= 1:
        return y
    out = np.full_like(y, np.nan, dtype=float)
    ok = np.isfinite(y)
    v = y[ok].astype(float)
    c = np.concatenate([[0.0], np.cumsum(v)])
    i = np.arange(1, len(v) + 1)
    out[ok] = (c[i] - c[np.maximum(i - n, 0)]) / np.minimum(i, n)
    return out


def choose_metrics(runs: list[run_set.Run], asked: list[str]) -> list[str]:
    held = run_set.series_names(runs)
    if not held:
        raise gl.LogError("none of the runs holds a /series (sweep and diag logs keep tables: use gaugelab compare)")
    unknown = [m for m in asked if m not in held]
    if unknown:
        raise gl.LogError(f"no run holds the series {', '.join(unknown)}; they hold: {', '.join(held)}")
    if asked:
        return asked
    if len(held) > MAX_DEFAULT_PANELS:
        print(f"drawing {', '.join(held[:MAX_DEFAULT_PANELS])}; also held (--metric): {', '.join(held[MAX_DEFAULT_PANELS:])}")
    return held[:MAX_DEFAULT_PANELS]


def draw(runs: list[run_set.Run], metrics: list[str], smooth_n: int = 1, logy: bool = False):
    """The figure and the legend labels, one per run."""
    import matplotlib.pyplot as plt

    keys = run_set.differing(runs)
    labels = [run_set.label(r, keys) for r in runs]
    cols = min(len(metrics), 3)
    rows = math.ceil(len(metrics) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.2 * rows), sharex=True, squeeze=False)
    for ax, metric in zip(axes.flat, metrics):
        for i, (run, text) in enumerate(zip(runs, labels)):
            if metric not in run.series or len(run.series["step"]) == 0:
                continue
            x, y = run.series["step"], np.asarray(run.series[metric], dtype=float)
            ok = np.isfinite(y)
            if smooth_n > 1:
                ax.plot(x[ok], y[ok], color=f"C{i % 10}", alpha=0.25, lw=0.8)
            ax.plot(x[ok], smooth(y, smooth_n)[ok], color=f"C{i % 10}", lw=1.4, label=text)
        ax.set_title(metric + (f" (mean of {smooth_n})" if smooth_n > 1 else ""), fontsize=10)
        if logy:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    for i, ax in enumerate(axes.flat):
        if i >= len(metrics):
            ax.set_visible(False)
        elif i + cols >= len(metrics):  # lowest drawn panel of its column: it carries the x axis
            ax.tick_params(labelbottom=True)
            ax.set_xlabel("step")
    running = sum(not r.finished for r in runs)
    title = f"{len(runs)} run(s) of {', '.join(sorted({r.kind for r in runs}))}"
    title += f"; differing: {', '.join(keys)}" if keys else ""
    title += f"; {running} still running" if running else ""
    fig.suptitle(title, fontsize=10)
    handles, texts = axes.flat[0].get_legend_handles_labels()
    for ax in axes.flat[1:len(metrics)]:
        for h, t in zip(*ax.get_legend_handles_labels()):
            if t not in texts:
                handles.append(h)
                texts.append(t)
    if handles:
        fig.legend(handles, texts, loc="lower center", ncol=min(len(texts), 4), fontsize=8, frameon=False,
                   bbox_to_anchor=(0.5, -0.02 - 0.03 * math.ceil(len(texts) / 4)))
    fig.tight_layout()
    return fig, labels


def save(fig, out: Path) -> None:
    """Writes atomically (temporary file, then rename), so a viewer never reads half an image."""
    import matplotlib.pyplot as plt

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.tmp{out.suffix}")
    fig.savefig(tmp, dpi=120, bbox_inches="tight")
    plt.close(fig)
    os.replace(tmp, out)


def progress(run: run_set.Run) -> str:
    steps = run.series.get("step", ())
    last = f"step {int(steps[-1])}" if len(steps) else "no rows yet"
    return last if run.finished else last + ", running"


def once(a: argparse.Namespace, waiting: set | None = None) -> list[run_set.Run]:
    """Draws and saves once. With `waiting` (watch mode) a RUN that is not a readable log yet is
    skipped, named on the terminal the first time."""
    runs = []
    for r in a.runs:
        try:
            runs += run_set.load_all(r)
        except gl.LogError as e:
            if waiting is None:
                raise
            if r not in waiting:
                waiting.add(r)
                print(f"waiting for {r}: {e}", flush=True)
    if not runs:
        return runs
    fig, labels = draw(runs, choose_metrics(runs, a.metrics), a.smooth, a.logy)
    save(fig, Path(a.out))
    print(f"wrote {a.out}: " + "; ".join(f"{text} ({progress(r)})" for r, text in zip(runs, labels)), flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    a = options(argv)
    if not a.watch:
        once(a)
        return 0
    # Ctrl-C or SIGTERM ends the watch after the current redraw, never inside an HDF5 read or a savefig.
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    waiting: set = set()
    while not stop.is_set():
        runs = once(a, waiting)
        if len({r.path for r in runs}) == len(a.runs) and all(r.finished for r in runs):
            break
        stop.wait(a.interval)
    return 0


if __name__ == "__main__":
    run_set.cli_main(main, "plot_runs.py")
