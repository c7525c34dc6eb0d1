"""Shared plotting conventions: where figures go, how they are saved, how captions are written."""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def out_dir() -> Path:
    d = Path(os.environ.get("GAUGELAB_FIGURES", "figures"))
    d.mkdir(parents=True, exist_ok=True)
    return d


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
