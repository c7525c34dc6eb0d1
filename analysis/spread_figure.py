"""The spread-vs-κ figure of a `gaugelab diag heads` log (/tables/spread: one row per rule × transport ×
wrapper × κ × gauge family): the spread of the represented motion ‖ΔM(S) − ΔM(I)‖_F/‖ΔM(I)‖_F against the
gauge's condition number κ, log–log, one curve per update rule (solid: median over the gauges, dotted:
max; ×: the orthogonal family at κ = 1), one panel per quotient wrapper and gauge family. Drawn by
figures/fig_seed003_head_spread.py and by `gaugelab plot` of a diag log."""
from __future__ import annotations

import numpy as np

import figstyle  # noqa: F401  (selects the Agg backend)

FLOOR = 1e-17  # exact zeros (e.g. diagonal gauges that are exact in floating point) drawn here on a log axis
MARKERS = "osD^v<>pXh"


def rule_color(i: int):
    """A distinct colour per rule: the default 10-colour cycle repeats from the 11th rule on (with the literature's
    rules there are 11), so tab20's 20 colours are used: its 10 dark shades first, then the light ones."""
    from matplotlib import colormaps

    return colormaps["tab20"]((2 * i) % 20 + (2 * i // 20) % 2)


def curves(t: dict, family: str, wrapper: str, metric: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    sel = (t["family"] == family) & (t["wrapper"] == wrapper)
    for rule in dict.fromkeys(t["rule"][sel]):
        m = sel & (t["rule"] == rule)
        if len(set(t["transport"][m])) > 1:  # several transports of one rule: draw the covector one
            m &= t["transport"] == ("covector" if "covector" in set(t["transport"][m]) else t["transport"][m][0])
        k = t["kappa"][m]
        order = np.argsort(k)
        out[rule] = (k[order], np.maximum(t[metric][m][order], FLOOR))
    return out


def draw(t: dict, title: str | None = None):
    """The figure of one spread table: a panel per (gauge family, wrapper), a curve per rule, one legend below."""
    import matplotlib.pyplot as plt

    wrappers = list(dict.fromkeys(t["wrapper"]))
    families = [fam for fam in ("general", "diagonal") if fam in set(t["family"])]
    if not families or not wrappers:
        raise ValueError("the spread table holds no general or diagonal gauge family")
    fig, axes = plt.subplots(len(families), len(wrappers), figsize=(3.1 * len(wrappers), 2.9 * len(families)),
                             sharex=True, sharey=True, squeeze=False)
    rules = list(dict.fromkeys(t["rule"]))
    for i, fam in enumerate(families):
        for j, w in enumerate(wrappers):
            ax = axes[i][j]
            for rule, (k, med) in curves(t, fam, w, "first_order_spread_median").items():
                c = rule_color(rules.index(rule))
                ax.loglog(k, med, marker=MARKERS[rules.index(rule) % len(MARKERS)], ms=3, color=c, label=rule)
                _, mx = curves(t, fam, w, "first_order_spread_max")[rule]
                ax.loglog(k, mx, ls=":", lw=0.8, color=c)
            for rule, (_, med) in curves(t, "orthogonal", w, "first_order_spread_median").items():
                ax.plot([1.0], [med[0]], "x", color=rule_color(rules.index(rule)), ms=6)
            ax.set_title(f"{w} — {fam}", fontsize=9)
            if i == len(families) - 1:
                ax.set_xlabel("κ of the gauge")
            if j == 0:
                ax.set_ylabel(r"$\|\Delta M(S)-\Delta M(I)\|/\|\Delta M(I)\|$")
            ax.grid(True, which="major", lw=0.3)
    if title:
        fig.suptitle(title, fontsize=9)
    # one legend for all panels, below them (inside the first panel it covered the curves' start)
    h, lab = axes[0][0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(h, lab, loc="lower center", ncol=len(lab), fontsize=7, frameon=False)
    return fig
