"""Several run logs side by side, for `gaugelab plot` (plot_runs.py) and `gaugelab compare`
(compare_runs.py): where each log is, its settings (the resolved config, flattened), which settings
differ between the runs, its series and its summary.

A RUN argument is a log file or a run directory holding log.h5 (what `gaugelab train --out DIR` writes) or
one .h5 file (merge-models: DIR/merge.h5);
a sweep log stands for all its runs (load_all).
Settings that say where or how a run was written rather than what it computed (IGNORED) never count
as differing."""
from __future__ import annotations

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
    """The runs of one RUN argument: the log itself, or, for a sweep log (no /series; one curve per grid
    point and seed in /tables/run_series), one Run per row of /tables/runs, its grid values and seed
    added to the settings and, once the sweep has finished, its row's results as its summary."""
    path = log_path(arg)
    with gl.open_log(path) as f:
        prov = gl.provenance(f)
        settings = flatten(prov["config"])
        settings.setdefault("seed", prov.get("seed"))
        name = path.parent.name if path.name == "log.h5" or Path(arg).is_dir() else path.stem
        run = Run(path, name or os.fspath(path), str(prov.get("kind", "?")), settings, gl.series(f), gl.summary(f))
        tables = gl.table_names(f)
        if not expand or run.series or not {"runs", "run_series"} <= set(tables):
            return [run]
        rows, curves = gl.table(f, "runs"), gl.table(f, "run_series")
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


def cli_main(main, prog: str) -> None:
    """The entry point plot_runs.py and compare_runs.py share: a closed pipe (`| head`) is not an error,
    a bad log is one line and exit 1 (named as the gaugelab verb when it calls us, GAUGELAB_PROG)."""
    import sys

    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader stopped listening: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except (gl.LogError, OSError) as e:
        sys.exit(f"{os.environ.get('GAUGELAB_PROG', prog)}: error: {e}")
