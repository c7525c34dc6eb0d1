"""Several run logs side by side, for `gaugelab plot` (plot_runs.py) and `gaugelab compare`
(compare_runs.py): where each log is, its settings (the resolved config, flattened), which settings
differ between the runs, its series and its summary.

A RUN argument is a log file or a run directory holding log.h5 (what `gaugelab train --out DIR` writes) or
one .h5 file (merge-models: DIR/merge.h5);
a sweep log stands for all its runs (load_all).
Settings that say where or how a run was written rather than what it computed (IGNORED) never count
as differing."""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

import gaugelab_log as gl

IGNORED = frozenset({"out", "force", "threads", "config", "resume", "flush-seconds", "flush_seconds"})
MISSING = "—"  # a setting one run has and another lacks


@dataclass
class Run:
    path: Path
    name: str  # the file's stem, or its directory's name for <dir>/log.h5
    kind: str
    settings: dict = field(default_factory=dict)  # flattened config, plus the root seed
    series: dict = field(default_factory=dict)  # name -> 1-D array, 'step' included
    summary: dict = field(default_factory=dict)  # empty while running or after a kill
    tables: dict = field(default_factory=dict)  # name -> columns, for logs without series (merge-models, hessian)

    @property
    def finished(self) -> bool:
        return bool(self.summary)


log_path = gl.log_path  # a file as given; a run directory's log.h5 (or its one .h5)


def flatten(config: dict, prefix: str = "") -> dict:
    """Nested config -> {"a.b": value}; lists become their text."""
    out = {}
    for k, v in config.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = ",".join(map(str, v)) if isinstance(v, list) else v
    return out


def load(arg) -> Run:
    """One run log read through the SWMR reader (a log still being written opens too)."""
    return load_all(arg, expand=False)[0]


def load_all(arg, expand: bool = True) -> list[Run]:
    """The runs of one RUN argument: the log itself, or, for a log with one curve per grid point and
    seed in /tables/run_series (a sweep log; a toy log of several seeds, whose /series is its first
    seed's; a toy of one seed stays as it is), one Run per row of /tables/runs, its grid values and seed added to the settings and, once
    the log has finished, its row's results as its summary. A log without series and without those
    tables (merge-models, hessian) keeps its tables."""
    path = log_path(arg)
    with gl.open_log(path) as f:
        prov = gl.provenance(f)
        settings = flatten(prov["config"])
        settings.setdefault("seed", prov.get("seed"))
        name = path.parent.name if path.name == "log.h5" or Path(arg).is_dir() else path.stem
        run = Run(path, name or os.fspath(path), str(prov.get("kind", "?")), settings, gl.series(f), gl.summary(f))
        tables = gl.table_names(f)
        if not expand or not {"runs", "run_series"} <= set(tables):
            if not run.series:
                run.tables = {t: gl.table(f, t) for t in tables}
            return [run]
        rows = gl.table(f, "runs")
        if run.series and len(rows.get("row", ())) <= 1:  # a toy of one seed: its /series is that seed
            return [run]
        curves = gl.table(f, "run_series")
    grid = prov["config"].get("grid", [])
    axes = [a["name"] for a in (grid if isinstance(grid, list) else [grid]) if isinstance(a, dict)] + ["seed"]
    out = []
    for i, row in enumerate(rows["row"]):
        pick = curves["run"] == row
        point = {k: rows[k][i].item() for k in axes if k in rows}
        results = {k: v[i].item() for k, v in rows.items() if k != "row" and k not in point} if run.finished else {}
        out.append(Run(path, f"{run.name}[{int(row)}]", run.kind, {**settings, **point},
                       {k: v[pick] for k, v in curves.items() if k != "run"}, results))
    return out


def differing(runs: list[Run]) -> list[str]:
    """Setting names whose values are not all equal across the runs ('kind' first when kinds differ)."""
    keys = ["kind"] if len({r.kind for r in runs}) > 1 else []
    seen: list[str] = []
    for r in runs:
        seen += [k for k in r.settings if k not in seen and k not in IGNORED]
    for k in seen:
        if len({repr(r.settings.get(k, MISSING)) for r in runs}) > 1:
            keys.append(k)
    return keys


@dataclass
class Group:
    """Runs that differ only in their seed (one curve: mean and band), or a run alone."""
    label: str
    runs: list


def groups(runs: list[Run]) -> tuple[list[Group], list[str]]:
    """The runs grouped by the differing settings other than the seed, in first-seen order, and those
    settings. Runs of the same settings and the same seed (two copies, or runs of settings that are not
    logged) are not seed replicates: they stay apart, labelled by name."""
    keys = [k for k in differing(runs) if k != "seed"]
    by: dict[tuple, list[Run]] = {}
    for r in runs:
        by.setdefault(tuple(value(r, k) for k in keys), []).append(r)
    out = []
    for members in by.values():
        seeds = [r.settings.get("seed") for r in members]
        parts = [members] if len(set(map(repr, seeds))) == len(members) else [[r] for r in members]
        for part in parts:
            out.append(Group(group_label(part, keys, len(runs)), part))
    return out, keys


IDENTITY = ("condition",)  # settings that say what a run is when no setting differs (a training condition)


def seed_list(seeds: list, width: int = 30) -> str:
    """'0–7' for three or more consecutive integer seeds, else their comma list ('42, 123')."""
    try:
        n = sorted(int(v) for v in seeds)
    except (TypeError, ValueError):
        text = ", ".join(map(str, seeds))
    else:
        text = f"{n[0]}–{n[-1]}" if len(n) > 2 and n == list(range(n[0], n[-1] + 1)) else ", ".join(map(str, n))
    return text if len(text) <= width else text[: width - 1] + "…"


def identity(run: Run) -> str:
    """What a run is, from its recorded settings: its condition ('condition=B'), else its kind's last part
    ('relu' for toy/relu)."""
    held = [f"{k}={value(run, k)}" for k in IDENTITY if k in run.settings]
    return ", ".join(held) or run.kind.rsplit("/", 1)[-1]


def group_label(members: list[Run], keys: list[str], n_runs: int, width: int = 48) -> str:
    """A group of seeds: what it is and its seeds, from the runs' recorded settings, never their file
    names ('lr=0.01, seeds 0–7'; 'condition=B, seeds 42, 123' when only the seed differs). A run alone:
    its differing settings, or its name when none differs or they are too many to name (logs of
    different kinds differ in every setting)."""
    if len(members) > 1:
        what = label(members[0], keys) if keys and len(keys) <= 3 else identity(members[0])
        text = f"{what}, seeds {seed_list([r.settings.get('seed') for r in members], width)}"
    elif n_runs > 1 and not keys:
        text = members[0].name
    else:
        text = label(members[0], keys) if len(keys) <= 3 else f"{members[0].kind}: {members[0].name}"
    return text if len(text) <= width else text[: width - 1] + "…"


def value(run: Run, key: str) -> str:
    v = run.kind if key == "kind" else run.settings.get(key, MISSING)
    return f"{v:g}" if isinstance(v, float) else str(v)


def label(run: Run, keys: list[str]) -> str:
    """Legend text: the differing settings of this run ('lr=0.01, seed=2'), else its name."""
    return ", ".join(f"{k}={value(run, k)}" for k in keys) or run.name


def series_names(runs: list[Run]) -> list[str]:
    """Every series name any run holds, in declared order of first appearance, 'step' left out."""
    names: list[str] = []
    for r in runs:
        names += [n for n in r.series if n != "step" and n not in names]
    return names


class Parser(argparse.ArgumentParser):
    """The verbs' argument parser: a usage error is one line naming the flag or file and exit status 2
    ('gaugelab plot: error: --out a.xyz: ... (--help for usage)'); --help prints the full usage."""

    def __init__(self, doc: str):
        super().__init__(prog=os.environ.get("GAUGELAB_PROG"), description=doc,
                         formatter_class=argparse.RawDescriptionHelpFormatter)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (--help for usage)\n")


def cli_main(main, prog: str) -> None:
    """The entry point plot_runs.py and compare_runs.py share: a closed pipe (`| head`) is not an error,
    a bad log is one line and exit 1 (named as the gaugelab verb when it calls us, GAUGELAB_PROG). A path
    may hold any byte: what is printed of it goes out as those bytes (a file name that is not UTF-8 is held
    with surrogates, os.fsdecode), never a UnicodeEncodeError."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="surrogateescape")
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader stopped listening: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except (gl.LogError, OSError) as e:
        sys.exit(f"{os.environ.get('GAUGELAB_PROG', prog)}: error: {e}")
