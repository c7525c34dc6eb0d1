#!/usr/bin/env python3
"""A table of run logs side by side (`gaugelab compare`): one column per run (a sweep log: one per
grid point and seed); rows are the settings that differ between the runs, then the /summary values (a
run still going or killed has none: the last values of its series are shown too, marked 'last').
Settings shared by all runs are counted (--all lists them).

Example: gaugelab compare runs/train_A runs/train_B"""
from __future__ import annotations

import argparse
import os

import run_set


def options(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=os.environ.get("GAUGELAB_PROG"), description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run log (.h5) or run directory holding log.h5")
    ap.add_argument("--all", action="store_true", help="also list the settings every run shares")
    return ap.parse_args(argv)


def cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def rows(runs: list[run_set.Run]) -> tuple[list[str], list[list[str]]]:
    """Header (one column per run) and one row per differing setting, then per summary key (union,
    first-seen order), then 'last <series>' rows when some run has not finished."""
    keys = run_set.differing(runs)
    summary_keys: list[str] = []
    for r in runs:
        summary_keys += [k for k in r.summary if k not in summary_keys]
    last_keys = [] if all(r.finished for r in runs) else run_set.series_names(runs)[:4]
    body = [[f"{k} (differs)", *(run_set.value(r, k) for r in runs)] for k in keys]
    body += [[k, *(cell(r.summary.get(k, "")) for r in runs)] for k in summary_keys]
    for k in last_keys:
        body.append([f"last {k}", *(cell(r.series[k][-1]) if len(r.series.get(k, ())) else "" for r in runs)])
    return ["", *(r.name for r in runs)], body


def markdown(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, body)])


def main(argv: list[str] | None = None) -> int:
    a = options(argv)
    runs = [run for r in a.runs for run in run_set.load_all(r)]
    keys = run_set.differing(runs)
    print(f"{len(runs)} run(s) of {', '.join(sorted({r.kind for r in runs}))}; "
          f"differing settings: {', '.join(keys) if keys else 'none'}")
    print(markdown(*rows(runs)))
    shared = sorted({k for r in runs for k in r.settings} - set(keys) - run_set.IGNORED)
    if a.all:
        print("shared settings: " + ", ".join(f"{k}={run_set.value(runs[0], k)}" for k in shared))
    else:
        print(f"{len(shared)} settings shared by all runs (--all lists them)")
    return 0


if __name__ == "__main__":
    run_set.cli_main(main, "compare_runs.py")
