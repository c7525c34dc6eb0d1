#!/usr/bin/env python3
"""Seed 000 Table 2: GaugeFix every N steps (and condition A), final/best val loss, max/mean drift,
ours beside the paper's. Usage: table_seed000_frequency.py LOG.h5...  (B runs with several N + an A run)"""
from __future__ import annotations

import sys

import figstyle
import seed000_runs as s0


def rows(runs: list[s0.Run]) -> list[tuple[int, s0.Run]]:
    """(N, run), N = 0 for condition A; one run per N (the first given, as the paper uses seed 42)."""
    chosen: dict[int, s0.Run] = {}
    for r in runs:
        if r.condition in ("A", "B"):
            n = r.gaugefix_every if r.condition == "B" else 0
            chosen.setdefault(n, r)
    return sorted(chosen.items(), key=lambda kv: (kv[0] == 0, kv[0]))


def main(paths: list[str]) -> None:
    runs = s0.load_all(paths)
    table = rows(runs)
    if not table:
        raise SystemExit("table_seed000_frequency: no condition A/B runs among the logs")
    lines = ["# Seed 000 Table 2 — GaugeFix frequency (ours beside the paper's)", "",
             f"Ours: {s0.scale_note(runs)}, seed {table[0][1].seed}. Paper: GPT-2 124M, seed 42, 20 000 iterations.", "",
             "| frequency | final val (ours) | final val (paper) | best val (ours) | best val (paper) "
             "| max drift (ours) | max drift (paper) | mean drift (ours) | mean drift (paper) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for n, r in table:
        p = s0.PAPER_TABLE2.get(n)
        label = "Condition A (WD)" if n == 0 else f"Every {n} step{'s' if n > 1 else ''}"
        pv = (lambda i, f: format(p[i], f) if p else "—")
        lines.append(f"| {label} | {r.final_val:.4f} | {pv(0, '.4f')} | {r.best_val:.4f} | {pv(1, '.4f')} "
                     f"| {r.max_drift:.2e} | {pv(2, '.2e')} | {r.final_drift_mean:.2e} | {pv(3, '.2e')} |")
    lines += ["", "Max drift: the largest drift_max over the run's heads samples; mean drift: drift_mean at the "
              "last sample. With GaugeFix the drift is zero right after a fix; between fixes it grows for up to "
              "N − 1 steps, which is what the N = 1000 row measures."]
    figstyle.save_table("table_seed000_frequency", "\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
