#!/usr/bin/env python3
"""Rebuild every figure from declared inputs, showyourwork-style.

Two tables drive it (analysis/manifest.py):
  EXPERIMENTS: name -> (command, output log, inputs it depends on)   [expensive; cached under runs/]
  FIGURES:     script -> the experiment logs it reads                [cheap; always re-drawn]

An experiment re-runs only when its log is missing or older than what made it (the gaugelab
binary, its config file). Plotting never re-runs an experiment by itself: a figure whose log is
missing fails with the command that makes it. Interpreter: Debian's /usr/bin/python3 (h5py,
matplotlib, numpy from apt) — the project's one analysis Python.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "analysis"))

import manifest  # noqa: E402


def stale(output: Path, deps: list[Path]) -> bool:
    if not output.exists():
        return True
    t = output.stat().st_mtime
    return any(d.exists() and d.stat().st_mtime > t for d in deps)


def run_experiments(build: Path, only: set[str] | None, force: bool) -> None:
    binary = build / "gaugelab"
    for name, exp in manifest.EXPERIMENTS.items():
        if only and name not in only:
            continue
        out = ROOT / exp["out"]
        deps = [binary] + [ROOT / d for d in exp.get("deps", [])]
        if not force and not stale(out, deps):
            print(f"[figures] {name}: up to date ({exp['out']})")
            continue
        # "out_arg": what --out takes when the verb writes a directory (train: DIR, log at DIR/log.h5)
        cmd = [str(binary)] + exp["args"] + ["--out", str(ROOT / exp.get("out_arg", exp["out"])), "--force"]
        print(f"[figures] {name}: {' '.join(cmd[1:])}", flush=True)
        t0 = time.time()
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(cmd, check=True, cwd=ROOT)
        print(f"[figures] {name}: done in {time.time() - t0:.1f} s", flush=True)


def draw(only: set[str] | None, outdir: Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GAUGELAB_FIGURES=str(outdir), MPLBACKEND="Agg")
    for script, fig in manifest.FIGURES.items():
        if only and script not in only:
            continue
        inputs = [str(ROOT / manifest.EXPERIMENTS[e]["out"]) for e in fig["inputs"]]
        print(f"[figures] draw {script}", flush=True)
        subprocess.run([sys.executable, str(ROOT / "analysis" / f"{script}.py"), *inputs],
                       check=True, cwd=ROOT, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="build directory holding the gaugelab binary")
    ap.add_argument("--only", nargs="*", help="experiment names and figure scripts to restrict to")
    ap.add_argument("--force", action="store_true", help="re-run experiments even when their logs are fresh")
    ap.add_argument("--no-run", action="store_true", help="draw only; never run an experiment")
    ap.add_argument("--figures", default="figures", help="output folder for PNG/PDF/Markdown")
    a = ap.parse_args()
    only = set(a.only) if a.only else None
    if not a.no_run:
        run_experiments(ROOT / a.build, only, a.force)
    draw(only, ROOT / a.figures)
    if not only:
        import figure_index
        (ROOT / "analysis" / "FIGURES.md").write_text(figure_index.render())
        print("[figures] wrote analysis/FIGURES.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
