"""What the narrative notebooks (notebooks_export/*.py) share: the repository root, the logs of
analysis/manifest.py, and showing a figure or a Markdown table made by `make figures`. Works in a
Jupyter kernel (rich display, images embedded in the exported HTML) and as a plain script."""
from __future__ import annotations

import os
from pathlib import Path

import gaugelab_log as gl
import manifest

ROOT = Path(__file__).resolve().parent.parent
FIGURES = Path(os.environ.get("GAUGELAB_FIGURES", ROOT / "figures"))

try:  # inside a kernel: rich output; as a script: text
    from IPython import get_ipython
    from IPython.display import Image, Markdown, display
    RICH = get_ipython() is not None
except ImportError:  # pragma: no cover - IPython ships with python3-ipykernel
    RICH = False


def log_path(experiment: str) -> Path:
    """The log an experiment of analysis/manifest.py writes (relative paths are from the root)."""
    return ROOT / manifest.EXPERIMENTS[experiment]["out"]


def summary(experiment: str) -> dict:
    """/summary of an experiment's log; a missing log raises naming the command that makes it."""
    exp = manifest.EXPERIMENTS[experiment]
    path = gl.require(log_path(experiment), made_by="gaugelab " + " ".join(exp["args"]))
    with gl.open_log(path) as f:
        return gl.summary(f)


def show_markdown(text: str) -> None:
    if RICH:
        display(Markdown(text))
    else:
        print(text)


def fmt(v) -> str:
    """A summary value for reading: 4 significant digits for floats (not a 17-digit repr), others as they are."""
    if isinstance(v, float) or (hasattr(v, "dtype") and getattr(v, "dtype").kind == "f"):
        return f"{float(v):.4g}"
    return str(v)


def show_summary(s: dict) -> None:
    """A /summary as a list, numbers rounded for reading (the log keeps them exact)."""
    show_markdown("\n".join(f"- `{k}`: {fmt(v)}" for k, v in s.items()))


def show_figure(name: str) -> None:
    """Shows figures/NAME.png and its caption (written by figstyle.save)."""
    png, cap = FIGURES / f"{name}.png", FIGURES / f"{name}.caption.md"
    if not png.exists():
        show_markdown(f"*{name}.png is missing: run `make figures` first.*")
        return
    if RICH:
        display(Image(filename=str(png)))
    else:
        print(f"[figure] {png}")
    if cap.exists():
        show_markdown("*" + cap.read_text().strip() + "*")


def show_table(name: str) -> None:
    """Shows figures/NAME.md (a table written by figstyle.save_table or a table script)."""
    md = FIGURES / f"{name}.md"
    show_markdown(md.read_text() if md.exists() else f"*{name}.md is missing: run `make figures` first.*")


# --- numbers rendered from the logs, never typed into the prose --------------------------------------------------

def _figure_row(script: str):
    import figure_index

    figs = manifest.figures()
    if script not in figs:
        raise KeyError(f"no figure script {script!r} under analysis/figures/")
    return figs[script], figure_index.row_of(figs[script])


def headline(script: str) -> str:
    """The figure's own headline ('ours' of its declaration) computed from its logs, or why there is none."""
    fig, row = _figure_row(script)
    return row.ours if row.state == "made" else f"{fig.label}: {row.state}"


def show_headline(script: str) -> None:
    fig, _ = _figure_row(script)
    show_markdown(f"**Ours ({fig.label}, computed from its logs):** {headline(script)}")


def show_verdict(script: str) -> None:
    """The claim's verdict as the figure index computes it (its declared rule on its logs), and for seed 000 its
    claims judged in the seed's regime (from the grids' logs or results ledgers)."""
    import figure_index

    fig, row = _figure_row(script)
    lines = [f"**Verdict ({fig.label}, computed):** {row.verdict if row.state == 'made' else row.state}"]
    for gc in fig.regime:
        where, verdict = figure_index.regime_row(gc)
        lines.append(f"- *{gc.label}* ({where}): {verdict}" + (f" — {gc.power}" if gc.power else ""))
    show_markdown("\n".join(lines))
