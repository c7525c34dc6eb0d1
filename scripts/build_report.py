#!/usr/bin/env python3
"""The slowest compile units and tests of one or more build directories, for CI's log and for measuring a change.

    scripts/build_report.py [--top N] BUILD_DIR [BUILD_DIR ...]

Per build directory: the sum of its compile and link steps as ninja recorded them (.ninja_log: wall seconds of
each step, so under load a step's time includes its waiting), the N slowest steps, and, when CTest ran there
(Testing/Temporary/CTestCostData.txt), the sum of the tests' times, per test area and the N slowest tests.
A directory without either file is reported as such, not an error: CI prints this after whatever stage failed.
"""
import argparse
import collections
import os
import sys


def ninja_steps(build):
    """{output: seconds} from the newest record of each output in BUILD/.ninja_log (format v5)."""
    path = os.path.join(build, ".ninja_log")
    steps = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4 or not parts[0].isdigit() or not parts[1].isdigit():
                continue
            steps[parts[3]] = (int(parts[1]) - int(parts[0])) / 1000.0
    return steps


def test_costs(build):
    """{test name: seconds} from CTest's cost data (its mean time per test over the runs it kept)."""
    path = os.path.join(build, "Testing", "Temporary", "CTestCostData.txt")
    costs = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("---"):
                break
            name, _, rest = line.rstrip("\n").rpartition(" ")
            name, _, _runs = name.rpartition(" ")
            try:
                costs[name] = float(rest)
            except ValueError:
                continue
    return costs


def report(build, top):
    lines = [f"== {build}"]
    try:
        steps = ninja_steps(build)
    except OSError:
        lines.append("  no .ninja_log (not built here)")
        steps = {}
    if steps:
        lines.append(f"  build: {len(steps)} steps, {sum(steps.values()):.0f} s summed; the {min(top, len(steps))} slowest:")
        for out, s in sorted(steps.items(), key=lambda kv: -kv[1])[:top]:
            lines.append(f"    {s:7.1f} s  {out}")
    try:
        costs = test_costs(build)
    except OSError:
        costs = {}
    if costs:
        areas = collections.defaultdict(lambda: [0, 0.0])
        for name, s in costs.items():
            area = name.split(":", 1)[0] if ":" in name else name
            areas[area][0] += 1
            areas[area][1] += s
        lines.append(f"  tests: {len(costs)} cases, {sum(costs.values()):.0f} s summed; by area: " +
                     ", ".join(f"{a} {n}/{s:.0f} s" for a, (n, s) in sorted(areas.items(), key=lambda kv: -kv[1][1])))
        lines.append(f"  the {min(top, len(costs))} slowest tests:")
        for name, s in sorted(costs.items(), key=lambda kv: -kv[1])[:top]:
            lines.append(f"    {s:7.1f} s  {name[:110]}")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=10, help="how many of the slowest to list (default 10)")
    ap.add_argument("builds", nargs="+", metavar="BUILD_DIR")
    a = ap.parse_args(argv)
    if a.top < 1:
        ap.error(f"--top must be at least 1, not {a.top}")
    for b in a.builds:
        print("\n".join(report(b, a.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
