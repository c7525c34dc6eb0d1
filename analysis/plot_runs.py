#!/usr/bin/env python3
"""Curves of one or many run logs on shared axes (`gaugelab plot`): one panel per metric (a /series
name), one curve per group of runs that differ only in their seed (the mean over the seeds and the band
from the lowest to the highest; a sweep's or a multi-seed toy's runs group by grid point), the settings
that differ in the legend. Without --metric the panels are the runs' key results (loss, validation loss,
drift, attention-logit max; a toy's MSEs). A merge-models log (DIR/merge.h5) is drawn as its loss along
the path and its barrier per alignment level, a hessian log as its spectra, a diag heads log as the
spread of the represented motion against the gauge's κ. With --watch the figure is
redrawn every --interval seconds from the live logs (SWMR reads) until every log has finished; open FILE
in an image viewer that reloads on change.

Example: gaugelab plot runs/train_A runs/train_B --metric loss,val_loss,drift_max --smooth 20 --out ab.png"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import figstyle  # noqa: F401  (selects the Agg backend)
import gaugelab_log as gl
import plot_curves
import plot_tables
import run_set
import watch
from plot_curves import smooth  # noqa: F401  (the centred mean, kept importable from here)

IMAGE_TYPES = (".png", ".pdf", ".svg")
MAX_INTERVAL_S = 86400.0


def options(argv: list[str] | None = None) -> argparse.Namespace:
    ap = run_set.Parser(__doc__)
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run log (.h5) or run directory holding log.h5")
    ap.add_argument("--metric", help="comma list of series to draw (default: the runs' key results)")
    ap.add_argument("--x", default="step", choices=("step", "tokens", "time"),
                    help="x axis: optimizer step, training tokens, or training seconds (default: step)")
    ap.add_argument("--out", default="plot.png", metavar="FILE", help="image to write, PNG/PDF/SVG by suffix (default: plot.png)")
    ap.add_argument("--force", action="store_true", help="replace an existing --out (default: refuse)")
    ap.add_argument("--smooth", type=int, default=1, metavar="N",
                    help="centred moving average over N points (an even N: N + 1) of dense series, named in each "
                         "panel's title; a single run's raw curve drawn faintly behind; "
                         "sparse series (eval, samples) are never smoothed (default: 1, none)")
    ap.add_argument("--logy", action="store_true", help="logarithmic y axes")
    ap.add_argument("--watch", action="store_true", help="redraw periodically until every run has finished")
    ap.add_argument("--interval", type=float, default=5.0, metavar="S", help="seconds between redraws with --watch (default: 5)")
    a = ap.parse_args(argv)
    if a.smooth < 1:
        ap.error(f"--smooth must be >= 1, got {a.smooth}")
    if not 0 < a.interval <= MAX_INTERVAL_S:  # also refuses nan and inf (an OverflowError in the wait)
        ap.error(f"--interval must be a number of seconds in (0, {MAX_INTERVAL_S:g}], got {a.interval:g}")
    out = Path(a.out)
    if out.suffix.lower() not in IMAGE_TYPES:
        kind = "a run log, not an image" if out.suffix.lower() in (".h5", ".hdf5") else \
            (f"an unknown image type {out.suffix}" if out.suffix else "no image suffix")
        ap.error(f"--out {a.out}: {kind}; name a .png, .pdf or .svg file")
    if out.is_dir():
        ap.error(f"--out {a.out}: is a directory; name an image file in it")
    if out.exists() and not a.force:
        ap.error(f"--out {a.out}: exists; add --force to replace it")
    a.metrics = [m for m in (a.metric or "").split(",") if m]
    return a


def choose_metrics(runs: list[run_set.Run], asked: list[str]) -> list[str]:
    held = run_set.series_names(runs)
    if not held:
        raise gl.LogError("none of the runs holds a /series or a table plot draws (merge-models, hessian, diag heads): "
                          "use gaugelab compare")
    unknown = [m for m in asked if m not in held]
    if unknown:
        raise gl.LogError(f"--metric: no run holds the series {', '.join(unknown)}; they hold: {', '.join(held)}")
    if asked:
        return asked
    chosen, rest = plot_curves.default_metrics(runs)
    if rest:
        print(f"drawing {', '.join(chosen)}; also held (--metric): {', '.join(rest)}")
    return chosen


def draw(runs: list[run_set.Run], metrics: list[str], smooth_n: int = 1, logy: bool = False, x: str = "step"):
    """The figure and the legend labels, one per curve (a group of seeds, or a run)."""
    d = plot_curves.draw(runs, metrics, smooth_n, logy, x)
    return d.fig, d.labels


def figure(runs: list[run_set.Run], a: argparse.Namespace):
    """The figure of these runs, its labels, and notes for the terminal."""
    kinds = {plot_tables.figure_kind(r) for r in runs}
    if kinds == {"curves"}:
        d = plot_curves.draw(runs, choose_metrics(runs, a.metrics), a.smooth, a.logy, a.x)
        return d.fig, d.labels, d.notes
    if None in kinds:
        choose_metrics([r for r in runs if plot_tables.figure_kind(r) is None], [])  # raises its message
    if len(kinds) > 1:
        raise gl.LogError("cannot draw series logs, merge-models, hessian and diag logs in one figure; plot each kind alone")
    kind = kinds.pop()
    if a.metrics or a.x != "step":
        raise gl.LogError(f"--metric/--x: a {kind} log holds no series; its figure is fixed (drop the flag)")
    return plot_tables.draw(kind, runs), [r.name for r in runs], []


def save(fig, out: Path) -> None:
    """Writes atomically (temporary file, then rename), so a viewer never reads half an image."""
    import matplotlib.pyplot as plt

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.tmp{out.suffix}")
    fig.savefig(tmp, dpi=120, bbox_inches="tight", format=out.suffix[1:].lower())
    plt.close(fig)
    os.replace(tmp, out)


def progress(run: run_set.Run) -> str:
    if not run.series:  # a log of tables (merge-models, hessian): written whole
        return "finished" if run.finished else "running"
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
    fig, labels, notes = figure(runs, a)
    save(fig, Path(a.out))
    groups = run_set.groups(runs)[0] if len(labels) != len(runs) else [run_set.Group(t, [r]) for r, t in zip(runs, labels)]
    print(f"wrote {a.out}: " + "; ".join(f"{g.label} ({progress(g.runs[-1])})" for g in groups), flush=True)
    for note in notes:
        print(f"note: {note}", flush=True)
    return runs


def main(argv: list[str] | None = None) -> int:
    a = options(argv)
    if not a.watch:
        once(a)
        return 0
    waiting: set = set()

    def draw_once() -> bool:
        runs = once(a, waiting)
        return len({r.path for r in runs}) == len(a.runs) and all(r.finished for r in runs)

    watch.watch(draw_once, a.interval)  # Ctrl-C or SIGTERM ends it after the redraw in progress
    return 0


if __name__ == "__main__":
    run_set.cli_main(main, "plot_runs.py")
