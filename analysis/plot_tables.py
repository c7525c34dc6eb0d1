"""Figures of the run logs that keep tables instead of series, for `gaugelab plot` (plot_runs.py):

- merge-models (DIR/merge.h5): the validation loss along the linear path t = 0 (A) ... 1 (B aligned),
  one curve per alignment level, and the loss barrier of each level (max over t of the loss above the
  straight line between the ends, as merge-models computes it);
- hessian: the top eigenvalues of each space (full H, quotient PHP, the metric's), as trained and
  under each random gauge of the same function;
- diag heads (/tables/spread): the spread of the represented motion against the gauge's κ, per rule and
  wrapper (spread_figure.py, the drawing of figures/fig_seed003_head_spread.py).

Several logs of one kind share the figure: a colour per level or gauge, a line style per log."""
from __future__ import annotations

import numpy as np

import figstyle  # noqa: F401  (selects the Agg backend)
import gaugelab_log as gl
import run_set
import spread_figure

LEVELS = ("none", "residual", "attention", "full")  # merge-models' cumulative alignment levels
STYLES = ("-", "--", ":", "-.")


def figure_kind(run: run_set.Run) -> str | None:
    """'curves' (series), 'merge' (merge-models' path table), 'hessian' (a spectrum table), 'spread' (diag
    heads' spread table), or None."""
    if run.series:
        return "curves"
    if "path" in run.tables:
        return "merge"
    if "spectrum" in run.tables:
        return "hessian"
    if "spread" in run.tables:
        return "spread"
    return None


def barrier(t: np.ndarray, loss: np.ndarray) -> float:
    order = np.argsort(t)
    t, loss = t[order], loss[order]
    return float(np.max(loss - ((1 - t) * loss[0] + t * loss[-1])))


def _style(runs: list, i: int) -> str:
    return STYLES[i % len(STYLES)] if len(runs) > 1 else "-"


def draw_merge(runs: list[run_set.Run]):
    import matplotlib.pyplot as plt

    fig, (path_ax, bar_ax) = plt.subplots(1, 2, figsize=(10.0, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(runs)
    for i, r in enumerate(runs):
        p = r.tables["path"]
        held = [lv for lv in LEVELS if lv in set(p["level"])] + sorted(set(p["level"]) - set(LEVELS))
        bars = []
        for j, level in enumerate(held):
            pick = p["level"] == level
            tag = f"{r.name}: {level}" if len(runs) > 1 else level
            path_ax.plot(p["t"][pick], p["loss"][pick], marker="o", ms=3.5, lw=1.4, ls=_style(runs, i),
                         color=f"C{j}", label=tag)
            bars.append(r.summary.get(f"barrier_{level}", barrier(p["t"][pick], p["loss"][pick])))
        bar_ax.bar(np.arange(len(held)) + (i - (len(runs) - 1) / 2) * width, bars, width,
                   color=[f"C{j}" for j in range(len(held))], edgecolor="0.2", hatch=["", "//", "..", "xx"][i % 4],
                   label=r.name if len(runs) > 1 else None)
        bar_ax.set_xticks(np.arange(len(held)), held)
    path_ax.set(xlabel="t (0 = model A, 1 = model B aligned)", ylabel="validation loss",
                title="loss along the linear path")
    path_ax.legend(title="alignment level", fontsize=8, title_fontsize=8)
    bar_ax.set(xlabel="alignment level (cumulative)", ylabel="barrier: max over t of loss − linear",
               title="loss barrier per level")
    bar_ax.axhline(0, color="0.3", lw=0.8)
    if len(runs) > 1:
        bar_ax.legend(fontsize=8)
    for ax in (path_ax, bar_ax):
        ax.grid(alpha=0.3)
    fig.suptitle(f"merge-models: {', '.join(r.name for r in runs)}", fontsize=9)
    fig.tight_layout()
    return fig


def gauge_change(runs: list[run_set.Run], space: str) -> str:
    """How far a space's eigenvalues move under the random gauges: the largest relative change from
    'as trained' (gauge 0) at equal rank. A gauge-invariant quantity moves by round-off only."""
    worst = 0.0
    for r in runs:
        s = r.tables["spectrum"]
        base = {int(k): v for g, sp, k, v in zip(s["gauge"], s["space"], s["rank"], s["eigenvalue"]) if sp == space and g == 0}
        for g, sp, k, v in zip(s["gauge"], s["space"], s["rank"], s["eigenvalue"]):
            if sp == space and g != 0 and int(k) in base and base[int(k)] != 0:
                worst = max(worst, abs(v / base[int(k)] - 1))
    return f"under random gauges: changes by up to {worst:.2g} (relative)"


def draw_hessian(runs: list[run_set.Run]):
    import matplotlib.pyplot as plt

    spaces = []
    for r in runs:
        spaces += [s for s in dict.fromkeys(r.tables["spectrum"]["space"]) if s not in spaces]
    fig, axes = plt.subplots(1, len(spaces), figsize=(3.8 * len(spaces), 3.6), squeeze=False)
    for ax, space in zip(axes.flat, spaces):
        for i, r in enumerate(runs):
            s = r.tables["spectrum"]
            for g in sorted(set(s["gauge"][s["space"] == space].tolist())):
                pick = (s["space"] == space) & (s["gauge"] == g)
                order = np.argsort(s["rank"][pick])
                tag = "as trained" if g == 0 else f"random gauge {g}"
                ax.plot(s["rank"][pick][order], s["eigenvalue"][pick][order], marker="o", ms=4, lw=1.2,
                        ls=_style(runs, i), color="k" if g == 0 else f"C{g}",
                        label=f"{r.name}: {tag}" if len(runs) > 1 else tag)
        name = f"{space} Hessian spectrum" if space == "full" else f"{space} spectrum"
        ax.set(xlabel="rank (1 = largest)", ylabel="eigenvalue")
        ax.set_title(f"{name}\n{gauge_change(runs, space)}", fontsize=9)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"hessian: top eigenvalues per space, {', '.join(r.name for r in runs)}", fontsize=9)
    fig.tight_layout()
    return fig


def draw_spread(runs: list[run_set.Run]):
    if len(runs) > 1:
        raise gl.LogError("a diag log's spread figure holds one log: plot each diag log alone")
    r = runs[0]
    try:
        return spread_figure.draw(r.tables["spread"], title=f"{r.kind}: {r.name}")
    except (KeyError, ValueError) as e:
        raise gl.LogError(f"{r.path}: /tables/spread cannot be drawn ({e})") from None


def draw(kind: str, runs: list[run_set.Run]):
    if kind == "spread":
        return draw_spread(runs)
    if kind == "merge":
        return draw_merge(runs)
    if kind == "hessian":
        return draw_hessian(runs)
    raise gl.LogError(f"no figure for {kind} logs")
