#!/usr/bin/env python3
"""A table of run logs side by side (`gaugelab compare`): one column per group of runs that differ
only in their seed (a sweep's grid point, a multi-seed toy), its numbers as mean ± sd over the seeds,
or one column per run where no run has a seed replicate (--per-run: always). Rows are the settings that
differ between the columns, then the /summary values (a run still going or killed has none: the last
values of its series are shown too, marked 'last'). A value not measured (NaN: e.g. a run interrupted
before its first evaluation) shows as '—'. Settings shared by all runs are counted (--all lists them).

Example: gaugelab compare runs/train_A runs/train_B"""
from __future__ import annotations

import math
from collections import Counter

import run_set

WIDTH = 30  # longest cell; longer text is cut with '…'
NOT_MEASURED = "—"


def options(argv: list[str] | None = None):
    ap = run_set.Parser(__doc__)
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run log (.h5) or run directory holding log.h5")
    ap.add_argument("--all", action="store_true", help="also list the settings every run shares")
    ap.add_argument("--per-run", action="store_true", help="one column per run, no mean over seeds")
    return ap.parse_args(argv)


def fit(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def cell(v) -> str:
    if isinstance(v, float):
        return NOT_MEASURED if math.isnan(v) else f"{v:.6g}"
    return fit(str(v))


def aggregate(values: list) -> str:
    """A group's values of one key: the value when all agree, mean ± sd of numbers, counts of texts;
    '(k of n)' where only k of the n runs have it."""
    have = [v for v in values if v != ""]
    if not have:
        return ""
    nums = [float(v) for v in have if isinstance(v, (int, float)) and not isinstance(v, bool)]
    finite = [v for v in nums if math.isfinite(v)]
    if len(nums) == len(have) and len(set(nums)) > 1 and finite:
        mean = sum(finite) / len(finite)
        sd = math.sqrt(sum((v - mean) ** 2 for v in finite) / (len(finite) - 1)) if len(finite) > 1 else 0.0
        text = f"{mean:.4g} ± {sd:.2g}"
        if len(finite) < len(nums):
            text += f" ({len(nums) - len(finite)} {NOT_MEASURED})"
    elif len({repr(v) for v in have}) == 1:
        text = cell(have[0])
    else:
        text = ", ".join(f"{v} {n}" for v, n in Counter(map(cell, have)).most_common())
    if len(have) < len(values):
        text += f" ({len(have)} of {len(values)})"
    return fit(text)


def columns(runs: list[run_set.Run], per_run: bool = False) -> tuple[list[run_set.Group], list[str]]:
    """The table's columns and the differing settings that name them."""
    groups, keys = run_set.groups(runs)
    if per_run or all(len(g.runs) == 1 for g in groups):
        return [run_set.Group(r.name, [r]) for r in runs], run_set.differing(runs)
    return groups, keys


def rows(runs: list[run_set.Run], per_run: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header (one column per group or run) and one row per differing setting, then per summary key
    (union, first-seen order), then 'last <series>' rows when some run has not finished."""
    cols, keys = columns(runs, per_run)
    summary_keys: list[str] = []
    for r in runs:
        summary_keys += [k for k in r.summary if k not in summary_keys]
    last_keys = [] if all(r.finished for r in runs) else run_set.series_names(runs)[:4]
    body = [[f"{k} (differs)", *(fit(run_set.value(g.runs[0], k)) for g in cols)] for k in keys]
    if any(len(g.runs) > 1 for g in cols):
        body.append(["seeds", *(run_set.seed_list([run_set.value(r, "seed") for r in g.runs], WIDTH) for g in cols)])
        summary_keys = [k for k in summary_keys if k != "seed"]  # listed in 'seeds'; a mean of seed numbers means nothing
    body += [[k, *(aggregate([r.summary.get(k, "") for r in g.runs]) for g in cols)] for k in summary_keys]
    for k in last_keys:
        body.append([f"last {k}", *(aggregate([float(r.series[k][-1]) if len(r.series.get(k, ())) else ""
                                               for r in g.runs]) for g in cols)])
    return ["", *(fit(g.label) for g in cols)], body


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
    header, body = rows(runs, a.per_run)
    print(markdown(header, body))
    if len(header) - 1 < len(runs):
        print(f"{len(header) - 1} groups of seeds: numbers are mean ± sd over a group's seeds (--per-run: a column per run)")
    if any(NOT_MEASURED in c for row in body for c in row[1:]):
        print(f"{NOT_MEASURED}: not measured (e.g. the run ended before its first evaluation)")
    shared = sorted({k for r in runs for k in r.settings} - set(keys) - run_set.IGNORED)
    if a.all:
        print("shared settings: " + ", ".join(f"{k}={run_set.value(runs[0], k)}" for k in shared))
    else:
        print(f"{len(shared)} settings shared by all runs (--all lists them)")
    return 0


if __name__ == "__main__":
    run_set.cli_main(main, "compare_runs.py")
