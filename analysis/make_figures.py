#!/usr/bin/env python3
"""Rebuild every figure from declared inputs, showyourwork-style.

Two declarations drive it:
  EXPERIMENTS (analysis/manifest.py): name -> (command, output log, inputs it depends on)  [expensive; cached
               under runs/]
  FIGURE = Figure(...) at the top of each analysis/figures/ script: the experiment logs it reads, the paper's
               value and the claim rule  [cheap; always re-drawn]

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
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "analysis"))

import manifest  # noqa: E402


def stale(output: Path, deps: list[Path]) -> bool:
    if not output.exists():
        return True
    t = output.stat().st_mtime
    return any(d.exists() and d.stat().st_mtime > t for d in deps)


def run_one(binary: Path, name: str, exp: dict) -> tuple[str, float, subprocess.CompletedProcess]:
    out = ROOT / exp["out"]
    # "out_arg": what --out takes when the verb writes a directory (train: DIR, log at DIR/log.h5)
    args = manifest.resolve(exp["args"], lambda n: ROOT / manifest.EXPERIMENTS[n].get("out_arg", manifest.EXPERIMENTS[n]["out"]))
    cmd = [str(binary)] + args + ["--out", str(ROOT / exp.get("out_arg", exp["out"])), "--force"]
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    return name, time.time() - t0, r


def run_experiments(build: Path, only: set[str] | None, force: bool, jobs: int) -> None:
    """Runs the stale experiments, up to `jobs` at a time; one whose deps include another's log waits
    for it. Each experiment's output is printed when it ends; a failure stops everything after it."""
    binary = build / "gaugelab"
    todo = {}
    for name, exp in manifest.EXPERIMENTS.items():
        if only and name not in only:
            continue
        deps = [binary] + [ROOT / d for d in exp.get("deps", [])]
        if not force and not stale(ROOT / exp["out"], deps):
            print(f"[figures] {name}: up to date ({exp['out']})")
            continue
        todo[name] = exp
    outputs = {str(ROOT / e["out"]): n for n, e in todo.items()}
    waits = {n: {outputs[str(ROOT / d)] for d in e.get("deps", []) if str(ROOT / d) in outputs} for n, e in todo.items()}
    running: dict = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        while todo or running:
            for name in [n for n in todo if not (waits[n] & (set(todo) | set(running.values())))]:
                if len(running) >= max(1, jobs):
                    break
                exp = todo.pop(name)
                print(f"[figures] {name}: gaugelab {' '.join(exp['args'])}", flush=True)
                running[pool.submit(run_one, binary, name, exp)] = name
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                running.pop(fut)
                name, seconds, r = fut.result()
                if r.returncode != 0:
                    sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
                    raise SystemExit(f"[figures] {name} failed (exit {r.returncode}): "
                                     f"gaugelab {' '.join(manifest.EXPERIMENTS[name]['args'])}")
                print(f"[figures] {name}: done in {seconds:.1f} s", flush=True)


def draw(only: set[str] | None, outdir: Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GAUGELAB_FIGURES=str(outdir), MPLBACKEND="Agg")
    for script, fig in manifest.figures().items():
        if only and script not in only:
            continue
        inputs = [str(ROOT / manifest.EXPERIMENTS[e]["out"]) for e in fig.inputs]
        print(f"[figures] draw {script}", flush=True)
        subprocess.run([sys.executable, str(ROOT / "analysis" / "figures" / f"{script}.py"), *inputs],
                       check=True, cwd=ROOT, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="build directory holding the gaugelab binary")
    ap.add_argument("--only", nargs="*", help="experiment names and figure scripts to restrict to")
    ap.add_argument("--force", action="store_true", help="re-run experiments even when their logs are fresh")
    ap.add_argument("--no-run", action="store_true", help="draw only; never run an experiment")
    ap.add_argument("--out", "--figures", dest="figures", metavar="DIR", default="figures",
                    help="output folder for PNG/PDF/Markdown")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="experiments run at once (each sets its own threads; default: the cores)")
    a = ap.parse_args()
    only = set(a.only) if a.only else None
    if not a.no_run:
        run_experiments(ROOT / a.build, only, a.force, a.jobs)
    draw(only, ROOT / a.figures)
    if not only:
        import figure_index
        (ROOT / "analysis" / "FIGURES.md").write_text(figure_index.render())
        print("[figures] wrote analysis/FIGURES.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
