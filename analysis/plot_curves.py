"""Curves of run logs that hold series, for `gaugelab plot` (plot_runs.py): one panel per metric, one
curve per group of runs that differ only in their seed (run_set.groups): the mean over the seeds, with
the band from the lowest to the highest seed, so the band never leaves the quantity's range.

A sparse series (validation loss on eval steps, drift on sample steps: few finite points, NaN between)
is drawn with markers and never smoothed; curves that coincide exactly are said so in their panel
and on the terminal (the later one dashed, so both stay visible)."""
from __future__ import annotations

import math
import textwrap
import warnings
from dataclasses import dataclass

import numpy as np

import figstyle  # noqa: F401  (selects the Agg backend)
import gaugelab_log as gl
import run_set

KEY_RESULTS = ("loss", "val_loss", "train_mse", "val_mse", "drift_max", "balance_drift", "attn_logit_max")
BOOKKEEPING = frozenset({"lr", "tokens", "tokens_per_s", "spike", "after_fix", "K"})
DEFAULT_PANELS = 4
MAX_PANELS = 12
X_AXES = {"step": "step", "tokens": "training tokens", "time": "training time (s): tokens / tokens_per_s, summed"}
FEW_POINTS = 40  # a curve of at most this many finite points gets markers
MAX_LEGEND = 24


def smooth_points(n: int) -> int:
    """The window `smooth` averages over: n points centred on each, an even n widened to n + 1."""
    return 2 * (n // 2) + 1


def smooth_name(n: int) -> str:
    """How a smoothed curve is named in its panel's title and y label."""
    return f"centred mean of {smooth_points(n)} points"


def smooth(y: np.ndarray, n: int) -> np.ndarray:
    """Centred moving mean over the finite values (NaN where y is NaN, e.g. steps without a val loss):
    each value is the mean of itself and the n // 2 finite values on either side, the window narrowed
    symmetrically near the ends (the end points stay raw), so the smoothed curve does not lag the raw one
    (a straight line is left unchanged)."""
    if n <= 1:
        return y
    out = np.full_like(y, np.nan, dtype=float)
    ok = np.isfinite(y)
    v = y[ok].astype(float)
    c = np.concatenate([[0.0], np.cumsum(v)])
    i = np.arange(len(v))
    half = np.minimum(n // 2, np.minimum(i, len(v) - 1 - i))
    out[ok] = (c[i + half + 1] - c[i - half]) / (2 * half + 1)
    return out


def default_metrics(runs: list[run_set.Run]) -> tuple[list[str], list[str]]:
    """The runs' key results (loss, validation loss, drift, attention-logit max; a toy's MSEs) that some
    run holds with a finite value, else the first series that are not bookkeeping (lr, tokens, ...);
    and the other series held."""
    held = run_set.series_names(runs)
    finite = [m for m in held if any(np.isfinite(np.asarray(r.series.get(m, []), float)).any() for r in runs)]
    chosen = [m for m in KEY_RESULTS if m in finite][:DEFAULT_PANELS]
    if not chosen:
        chosen = [m for m in finite if m not in BOOKKEEPING][:DEFAULT_PANELS] or held[:DEFAULT_PANELS]
    return chosen, [m for m in held if m not in chosen]


def x_values(run: run_set.Run, axis: str) -> np.ndarray:
    s = run.series
    if axis == "step":
        return np.asarray(s["step"], float)
    if "tokens" not in s or (axis == "time" and "tokens_per_s" not in s):
        need = "tokens" if axis == "tokens" else "tokens and tokens_per_s"
        raise gl.LogError(f"--x {axis}: {run.name} ({run.kind}) has no {need} series; use --x step")
    tokens = np.asarray(s["tokens"], float)
    if axis == "tokens":
        return tokens
    per_step = np.diff(tokens, prepend=tokens[0] - (tokens[1] - tokens[0] if len(tokens) > 1 else tokens[0]))
    return np.cumsum(per_step / np.asarray(s["tokens_per_s"], float))


@dataclass
class Curve:
    steps: np.ndarray
    x: np.ndarray
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    runs: int
    sparse: bool  # finite on under half its rows (NaN between samples): never smoothed
    few: bool  # at most FEW_POINTS finite points: markers


def group_curve(group: run_set.Group, metric: str, axis: str, smooth_n: int) -> Curve | None:
    """The group's runs aligned by step: mean, min and max over the runs holding a finite value."""
    rows = [(np.asarray(r.series["step"]), np.asarray(r.series[metric], float), x_values(r, axis))
            for r in group.runs if metric in r.series and len(r.series["step"])]
    if not rows:
        return None
    points = max(int(np.isfinite(y).sum()) for _, y, _ in rows)
    sparse = sum(np.isfinite(y).sum() for _, y, _ in rows) < 0.5 * sum(len(y) for _, y, _ in rows)
    steps = np.unique(np.concatenate([s for s, _, _ in rows]))
    Y = np.full((len(rows), len(steps)), np.nan)
    X = np.full((len(rows), len(steps)), np.nan)
    for i, (s, y, xv) in enumerate(rows):
        at = np.searchsorted(steps, s)
        Y[i, at] = y if sparse else smooth(y, smooth_n)
        X[i, at] = xv
    keep = np.isfinite(Y).any(axis=0)
    if not keep.any():
        return None
    Y, X = Y[:, keep], X[:, keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return Curve(steps[keep], np.nanmean(X, 0), np.nanmean(Y, 0), np.nanmin(Y, 0), np.nanmax(Y, 0), len(rows), sparse,
                     sparse or points <= FEW_POINTS)


COINCIDE = 1e-3  # curves closer than this fraction of the panel's y range look like one line


def overlap(a: Curve, b: Curve, span: float) -> str | None:
    """'identical' where the curves are equal to the last bit at every step (runs that computed the
    same numbers), '≤ D apart' where they differ by at most COINCIDE of the panel's range (drawn, they
    are one line), else None."""
    if len(a.steps) != len(b.steps) or not np.array_equal(a.steps, b.steps):
        return None
    pairs = ((a.mean, b.mean), (a.lo, b.lo), (a.hi, b.hi))
    if all(np.array_equal(u, v, equal_nan=True) for u, v in pairs):
        return "identical"
    if not all(np.array_equal(np.isfinite(u), np.isfinite(v)) for u, v in pairs):
        return None
    d = max(float(np.max(np.abs(u - v)[np.isfinite(u)], initial=0.0)) for u, v in pairs)
    return f"≤ {d:.2g} apart" if d <= COINCIDE * span else None


def span(curves: list) -> float:
    lo = [np.nanmin(c.lo) for c in curves if c is not None]
    hi = [np.nanmax(c.hi) for c in curves if c is not None]
    return float(max(hi) - min(lo)) if lo and max(hi) > min(lo) else 1.0


@dataclass
class Drawing:
    fig: object
    labels: list  # one per curve group, in legend order
    notes: list  # lines for the terminal: curves that coincide (what the panels say)


def colours(n: int) -> list:
    import matplotlib.pyplot as plt

    return [f"C{i}" for i in range(n)] if n <= 10 else list(plt.cm.viridis(np.linspace(0, 0.92, n)))


def title(runs: list[run_set.Run], keys: list[str], banded: bool, width: int) -> str:
    text = f"{len(runs)} run(s) of {', '.join(sorted({r.kind for r in runs}))}"
    if keys:
        shown = keys if len(keys) <= 6 else keys[:5] + [f"and {len(keys) - 5} more (gaugelab compare lists them)"]
        text += f"; differing: {', '.join(shown)}"
    running = sum(not r.finished for r in runs)
    text += f"; {running} still running" if running else ""
    text += "; line: mean over seeds, band: lowest to highest seed" if banded else ""
    return "\n".join(textwrap.wrap(text, width))


def twins(groups: list[run_set.Group], curves: list) -> list:
    """For each curve, (label, how) of an earlier curve it coincides with, else None."""
    width = span(curves)
    return [None if c is None else next(((groups[j].label, how) for j in range(i) if curves[j] is not None
                                         for how in [overlap(curves[j], c, width)] if how), None)
            for i, c in enumerate(curves)]


def panel(ax, metric: str, groups: list[run_set.Group], colour: list, smooth_n: int, logy: bool, x: str) -> list[str]:
    """Draws one metric's curves; returns the terminal notes on curves that coincide."""
    curves = [group_curve(g, metric, x, smooth_n) for g in groups]
    smoothed, said, notes = False, [], []
    for i, (g, c, twin) in enumerate(zip(groups, curves, twins(groups, curves))):
        if c is None:
            continue
        if twin:
            said.append(f"{g.label} = {twin[0]}: {twin[1]}")
            why = ": the settings that differ left this series unchanged" if twin[1] == "identical" else ""
            notes.append(f"{metric}: {g.label} coincides with {twin[0]} ({twin[1]} at every step){why}")
        style = dict(color=colour[i], lw=1.4, ls=(0, (4, 3)) if twin else "-", label=g.label)
        if c.few:
            style.update(marker="o", ms=3.5)
        if smooth_n > 1 and not c.sparse:
            smoothed = True
            if c.runs == 1:  # the raw curve faintly behind its mean
                r = g.runs[0]
                ax.plot(x_values(r, x), r.series[metric], color=colour[i], alpha=0.25, lw=0.8)
        mean, lo, hi = ((np.where(v > 0, v, np.nan) if logy else v) for v in (c.mean, c.lo, c.hi))  # log: > 0 only
        if c.runs > 1:
            ax.fill_between(c.x, lo, hi, color=colour[i], alpha=0.18, lw=0)
        ax.plot(c.x, mean, **style)
    head = metric + (f" ({smooth_name(smooth_n)})" if smoothed else "")
    lines = [textwrap.shorten(t, 72, placeholder="…") for t in said[:2]] + (["…"] if len(said) > 2 else [])
    ax.set_title("\n".join([head, *lines]), fontsize=10 if not said else 8.5)
    ax.set_ylabel(metric + (f"\n{smooth_name(smooth_n)}" if smoothed else ""), fontsize=9)
    ax.set_xlabel(X_AXES[x] if x != "time" else "training time (s)", fontsize=9)
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    return notes


def draw(runs: list[run_set.Run], metrics: list[str], smooth_n: int = 1, logy: bool = False, x: str = "step") -> Drawing:
    import matplotlib.pyplot as plt

    if len(metrics) > MAX_PANELS:
        raise gl.LogError(f"--metric: {len(metrics)} series asked, at most {MAX_PANELS} panels fit one image")
    groups, keys = run_set.groups(runs)
    labels = [g.label for g in groups]
    colour = colours(len(groups))
    cols = 1 if len(metrics) == 1 else 2 if len(metrics) in (2, 4) else 3
    rows = math.ceil(len(metrics) / cols)
    legend_rows = math.ceil(min(len(groups), MAX_LEGEND) / min(cols + 1, 3)) if len(groups) > 1 else 0
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 3.3 * rows + 0.3 + 0.22 * legend_rows), squeeze=False)
    notes = []
    for ax, metric in zip(axes.flat, metrics):
        notes += panel(ax, metric, groups, colour, smooth_n, logy, x)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    banded = any(len(g.runs) > 1 for g in groups)
    fig.suptitle(title(runs, keys, banded, 48 * cols), fontsize=9)
    handles, texts = [], []
    for ax in axes.flat[: len(metrics)]:
        for h, t in zip(*ax.get_legend_handles_labels()):
            if t not in texts:
                handles.append(h)
                texts.append(t)
    if len(texts) > MAX_LEGEND:
        handles, texts = handles[: MAX_LEGEND - 1], texts[: MAX_LEGEND - 1] + [f"… {len(texts) - MAX_LEGEND + 1} more"]
        handles.append(plt.Line2D([], [], color="none"))
    bottom = 0.0
    if len(texts) > 1 or (texts and len(groups) == 1 and banded):
        legend = fig.legend(handles, texts, loc="lower center", ncol=min(len(texts), min(cols + 1, 3)), fontsize=8,
                            frameon=False, bbox_to_anchor=(0.5, 0.0))
        fig.canvas.draw()
        bottom = legend.get_window_extent().height / fig.bbox.height
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return Drawing(fig, labels, notes)
