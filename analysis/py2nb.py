#!/usr/bin/env python3
"""Turns a plain-text notebook (`# %%` code cells, `# %% [markdown]` cells whose lines start with
`# `) into an .ipynb, so `jupyter nbconvert --execute` can run it and export HTML. The plain-text
form is the source of truth: readable, diffable, and runnable as a script with /usr/bin/python3.
Usage: py2nb.py NOTEBOOK.py OUT.ipynb"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import nbformat

CELL = re.compile(r"^# %%(.*)$")


def cells(text: str) -> list[tuple[str, str]]:
    """[(kind, source)] with kind 'code' or 'markdown'; text before the first marker is a code cell."""
    out: list[tuple[str, list[str]]] = [("code", [])]
    for line in text.splitlines():
        m = CELL.match(line)
        if m:
            out.append(("markdown" if "[markdown]" in m.group(1) else "code", []))
            continue
        kind, body = out[-1]
        if kind == "markdown":
            line = line[2:] if line.startswith("# ") else line.lstrip("#")
        body.append(line)
    return [(k, "\n".join(b).strip("\n")) for k, b in out if "\n".join(b).strip()]


ROOT = Path(__file__).resolve().parent.parent  # the repository this converter lives in


def preamble(root: Path, figures: Path) -> str:
    """A first cell that finds the repository wherever Jupyter opens the notebook (report/ included):
    the notebooks read GAUGELAB_ROOT and GAUGELAB_FIGURES, relative to the working directory otherwise."""
    return ("import os  # where this notebook's repository and figures are (written by analysis/py2nb.py)\n"
            f"os.environ.setdefault(\"GAUGELAB_ROOT\", {str(root)!r})\n"
            f"os.environ.setdefault(\"GAUGELAB_FIGURES\", {str(figures)!r})")


def convert(src: Path, dst: Path, root: Path = ROOT, figures: Path | None = None) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    figures = figures or Path(os.environ.get("GAUGELAB_FIGURES", root / "figures")).resolve()
    nb.cells.append(nbformat.v4.new_code_cell(preamble(root, figures)))
    for kind, body in cells(src.read_text()):
        nb.cells.append(nbformat.v4.new_markdown_cell(body) if kind == "markdown" else nbformat.v4.new_code_cell(body))
    dst.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dst)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebook", type=Path, help="plain-text notebook (# %%%% cells)")
    ap.add_argument("out", type=Path, help="the .ipynb to write")
    a = ap.parse_args()
    if not a.notebook.is_file():
        ap.exit(1, f"py2nb.py: error: {a.notebook}: no such notebook\n")
    convert(a.notebook, a.out)
