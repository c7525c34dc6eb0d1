#!/usr/bin/env python3
"""The results ledger: a grid's per-run results kept in the repository (analysis/results/<grid>.csv), because
experiments span sessions and machines and run logs are never committed. One row per finished run (lr_grid.Run's
scalar fields), a header of '#' lines naming the grid, its run set (how many of the declared runs it holds, and
where their logs were), the commits of the binaries that made them and the date it was written.

The analysis reads a grid's runs through load_grid(): each run from its log when that is here, else from the
ledger, and says which it used (GridRuns.source). `results_ledger.py write GRID` writes the ledger from the logs (make_figures.py
--grid does it by itself when a grid's last run finishes); `results_ledger.py show GRID` prints where the runs
would be read from.
"""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import io
import math
import os
import tempfile
import sys
from collections import Counter
from dataclasses import dataclass, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "analysis"))

import lr_grid  # noqa: E402
import manifest  # noqa: E402

RESULTS = ROOT / "analysis" / "results"

# The ledger's columns: lr_grid.Run's scalar fields (the per-step arrays stay in the logs), in this order. New columns
# go at the end: a ledger written before one was added has a prefix of these and still reads.
COLUMNS = ("run", "cond", "key", "title", "reference", "index", "muon", "offset", "lr", "seed", "precision", "threads",
           "steps", "diverged", "stop", "stable", "n_spikes", "first_loss", "final_val", "best_val", "drift",
           "eff_imbalance", "attn_max", "attn_signed_max", "sqk_max", "git_sha", "bf16_mode", "cpu_bf16", "device",
           "processes", "drift_peak", "drift_window", "sqk_final", "gaugefix_every")
_TYPES = {f.name: f.type for f in fields(lr_grid.Run)}


def ledger_path(name: str, results: Path = RESULTS) -> Path:
    return results / f"{name}.csv"


def grid_root(name: str, root: Path = ROOT) -> Path:
    return root / manifest.GRIDS[name][0]["root"]


def declared_runs(name: str, overrides: dict | None = None) -> list[str]:
    """The run directory names (inside the grid's root) the grid declares, in run order."""
    return [Path(d).name for d in manifest.grid(name, overrides)]


def _cell(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    return str(v)


def _parse(name: str, text: str):
    t = _TYPES[name]
    if t in ("bool", bool):
        return text == "1"
    if t in ("int", int):
        return int(text)
    if t in ("float", float):
        return float(text)
    return text


def dumps(name: str, runs: list[lr_grid.Run], where: str, written: str | None = None) -> str:
    """The ledger's text for the finished runs of grid `name` whose logs were under `where`."""
    order = {n: i for i, n in enumerate(declared_runs(name))}
    declared = set(order)
    mine = sorted((r for r in runs if r.run in declared), key=lambda r: order[r.run])
    shas = sorted({r.git_sha for r in mine if r.git_sha}) or ["unknown"]
    written = written or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    out = io.StringIO()
    out.write(f"# grid {name} (analysis/manifest.py GRIDS): {len(mine)} of its {len(declared)} declared runs finished, "
              f"read from {where}\n")
    out.write(f"# commit of the binaries that made them: {', '.join(shas)}\n")
    out.write(f"# written {written} by analysis/results_ledger.py; the analysis reads this file when the logs are absent\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in mine:
        w.writerow([_cell(getattr(r, c)) for c in COLUMNS])
    return out.getvalue()


def recorded(name: str, results: Path = RESULTS) -> set[str]:
    """The names of the runs grid `name`'s ledger holds (empty when it has none) under the declared arithmetic: the
    grid runner skips them when their logs are not here, so that a grid resumed on another machine does not run them
    again."""
    path = ledger_path(name, results)
    if not path.exists():
        return set()
    runs = loads(path.read_text()).runs
    off = {r.run for r, _ in off_declaration(name, runs)}  # run again here, as declared
    return {r.run for r in runs if r.run not in off}


@dataclass
class Ledger:
    runs: list
    header: list[str]   # the '#' lines, without the '#'

    @property
    def grid(self) -> str | None:
        """The grid of the manifest its first header line names (dumps writes "grid NAME (...)"), or None."""
        words = self.header[0].split() if self.header else []
        return words[1] if len(words) > 1 and words[0] == "grid" and words[1] in manifest.GRIDS else None


def loads(text: str) -> Ledger:
    header = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("#")]
    body = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    rows = list(csv.reader(body))
    if not rows or tuple(rows[0]) != COLUMNS[: len(rows[0])] or not set(rows[0]) >= {"run", "cond", "lr", "seed"}:
        raise ValueError(f"not a results ledger: its columns are {rows[0] if rows else 'none'}")
    cols = rows[0]
    runs = [lr_grid.Run(**{c: _parse(c, v) for c, v in zip(cols, row)}) for row in rows[1:]]
    return Ledger(runs, header)


def write(name: str, root: Path = ROOT, results: Path = RESULTS) -> Path:
    """Writes analysis/results/<name>.csv from the grid's logs here, keeping the runs the ledger already holds whose
    logs are elsewhere (another machine's); refuses when no finished run is here."""
    g = load_grid(name, root, results, as_declared=False)  # every finished run, as it ran
    if g is None:
        raise SystemExit(f"results_ledger: no finished run of grid {name} under {grid_root(name, root)}")
    path = ledger_path(name, results)
    path.parent.mkdir(parents=True, exist_ok=True)
    # whole or not at all: a machine lost mid-write keeps the last ledger, and two writers never share a temp file
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(dumps(name, g.runs, g.source.rsplit(":", 1)[0]))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # as a file written plainly (mkstemp's is 0600)
        os.replace(tmp, path)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)  # the rename itself on disk
        finally:
            os.close(dfd)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@dataclass
class GridRuns:
    name: str
    runs: list            # lr_grid.Run, finished runs of the declared run set only
    source: str           # where they were read from, for printing beside a verdict
    declared: int         # how many runs the grid declares

    def have(self, names: list[str]) -> list[str]:
        """The names among `names` that are not here (an empty list: every one is)."""
        got = {r.run for r in self.runs}
        return [n for n in names if n not in got]


def declared_bf16_modes(name: str) -> dict[str, str]:
    """{run: the bf16 mode its arguments declare} for the runs of grid `name` that declare one (--bf16-mode)."""
    modes = {Path(d).name: manifest.flag_value(e["args"], "--bf16-mode") for d, e in manifest.grid(name).items()
             if manifest.flag_value(e["args"], "--precision") == "bf16"}  # a float32 run has no bf16 mode to keep
    return {k: v for k, v in modes.items() if v is not None}


def off_declaration(name: str, runs: list) -> list[tuple]:
    """(run, why) for the runs among `runs` not made as their grid declares: a bf16 mode other than the declared one (a
    run paired with another under a different arithmetic would put that difference into the comparison), or, for a
    grid that requires a CPU with bf16 matmul (manifest.GRID_REQUIRES), a run that does not show it ran on one."""
    modes = declared_bf16_modes(name)
    needs_cpu_bf16 = manifest.GRID_REQUIRES.get(name) == "cpu-bf16"
    out = []
    for r in runs:
        if r.run in modes and r.bf16_mode != modes[r.run]:
            out.append((r, f"bf16 {r.bf16_mode or 'unknown'}"))
        elif needs_cpu_bf16 and (r.cpu_bf16 in ("", "-") or not r.device.startswith("cpu")):
            out.append((r, f"not on a CPU with bf16 matmul: cpu_bf16 {r.cpu_bf16 or 'not logged'}, "
                           f"device {r.device or 'not logged'}"))
        elif needs_cpu_bf16 and r.processes != 1:  # the CPU and device are its last process's: one process only
            out.append((r, f"made in {r.processes or 'an unknown number of'} processes, of which only the last "
                           "logged its CPU"))
    return out


def load_grid(name: str, root: Path = ROOT, results: Path = RESULTS, as_declared: bool = True) -> GridRuns | None:
    """The grid's finished runs: those whose logs are here, and from its ledger those whose logs are not (a run in
    both is read from its log); None when neither is here. The source names both counts. as_declared: without the
    runs whose arithmetic is not the declared one (off_declaration; the source says how many were left out)."""
    declared = declared_runs(name)
    where = grid_root(name, root)
    logs = [r for r in (lr_grid.load(p) for p in lr_grid.find_logs([str(where)])) if r is not None] \
        if where.is_dir() else []
    logs = [r for r in logs if r.run in set(declared)]
    path = ledger_path(name, results)
    led = loads(path.read_text()) if path.exists() else None
    have = {r.run for r in logs}
    extra = [r for r in led.runs if r.run in set(declared) and r.run not in have] if led else []
    off = off_declaration(name, logs + extra) if as_declared else []
    if off:
        bad = {id(r) for r, _ in off}
        logs, extra = [r for r in logs if id(r) not in bad], [r for r in extra if id(r) not in bad]
    if not logs and not extra:
        return None
    rel = where.relative_to(root) if where.is_relative_to(root) else where
    parts = [f"the logs under {rel} ({len(logs)} runs)"] if logs else []
    if extra:
        stamp = "; ".join(led.header[1:3]) if len(led.header) >= 3 else ""
        parts.append(f"the ledger analysis/results/{path.name} ({len(extra)} runs{'; ' + stamp if stamp else ''})")
    n = len(logs) + len(extra)
    left_out = (f"; left out, not made as declared: {', '.join(f'{r.run} ({why})' for r, why in off)}" if off else "")
    # a run set made on more than one kind of device (a CPU's runs and a card's, each as declared) says how many on
    # each: the same arithmetic declared, but not the same kernels, so a verdict names the mix it came from
    kinds = Counter((r.device or "not logged").split(":")[0] for r in logs + extra)
    mix = f"; made on {', '.join(f'{k} {m}' for k, m in sorted(kinds.items()))}" if len(kinds) > 1 else ""
    return GridRuns(name, logs + extra, f"{' and '.join(parts)}: {n} of {len(declared)} runs{mix}{left_out}",
                    len(declared))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=("write", "show"))
    ap.add_argument("grid", choices=sorted(manifest.GRIDS))
    a = ap.parse_args(argv)
    if a.action == "write":
        print(f"wrote {write(a.grid)}")
        return 0
    g = load_grid(a.grid)
    print(f"{a.grid}: " + (g.source if g else "no logs and no ledger here"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
