"""Shared plotting conventions: where figures go, how they are saved, how captions are written, and
the command line every figure and table script shares (its log or logs, --out DIR, --help)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def out_dir() -> Path:
    d = Path(os.environ.get("GAUGELAB_FIGURES", "figures"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def nonneg_yerr(mean, sd):
    """Error bars of ± sd for a quantity that cannot be negative (an MSE, a loss): the lower bar stops at 0.
    Returns matplotlib's [lower, upper] yerr."""
    import numpy as np

    mean, sd = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
    return [np.minimum(sd, np.maximum(mean, 0.0)), sd]


def save(fig, name: str, caption: str) -> Path:
    """Writes NAME.png and NAME.pdf, and NAME.caption.md holding the caption (protocol, differences)."""
    d = out_dir()
    fig.savefig(d / f"{name}.png", dpi=130, bbox_inches="tight")
    fig.savefig(d / f"{name}.pdf", bbox_inches="tight")
    (d / f"{name}.caption.md").write_text(caption.strip() + "\n")
    plt.close(fig)
    print(f"wrote {d / name}.png")
    return d / f"{name}.png"


def save_table(name: str, markdown: str) -> Path:
    """Writes NAME.md (a Markdown table with its caption lines) in the figures folder."""
    path = out_dir() / f"{name}.md"
    path.write_text(markdown.rstrip() + "\n")
    print(f"wrote {path}")
    return path


def parse_args(doc: str, argv: list[str] | None = None, *, many: bool = False,
               default: str | None = None, null: str | None = None) -> argparse.Namespace:
    """The command line of a figure or table script: its docstring as --help, the input log (`.log`;
    optional when `default` is given) or logs (`.logs`, with many=True), with `null` the log of the row's
    measured null after it (`.null`, optional, default `null`: the Figure's second input), and --out DIR,
    the figures folder (default unchanged: $GAUGELAB_FIGURES, else figures/)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if many:
        ap.add_argument("logs", nargs="+", metavar="LOG", help="run logs (HDF5) to read")
    elif default is not None:
        ap.add_argument("log", nargs="?", default=default, help=f"run log (HDF5) to read (default: {default})")
    else:
        ap.add_argument("log", help="run log (HDF5) to read")
    if null is not None:
        ap.add_argument("null", nargs="?", default=null,
                        help=f"the log of the row's measured null, read by its claim rule (default: {null})")
    ap.add_argument("--out", metavar="DIR", help="figures folder to write to (default: $GAUGELAB_FIGURES or figures/)")
    a = ap.parse_args(argv)
    if a.out:
        os.environ["GAUGELAB_FIGURES"] = a.out
    return a


def run(main, *args) -> None:
    """Calls main(*args); a missing or malformed log ends the script with one line and exit status 1."""
    from gaugelab_log import LogError  # here, so importing figstyle alone needs no h5py

    try:
        main(*args)
    except (LogError, OSError) as e:
        sys.exit(f"{Path(sys.argv[0]).name}: error: {e}")
