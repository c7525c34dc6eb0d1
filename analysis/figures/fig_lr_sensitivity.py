#!/usr/bin/env python3
"""The instability instrument's analysis (Wortsman et al. 2023, arXiv 2309.14322, Fig. 1 format):
final validation loss against learning rate per way of handling the Q/K gauge, the learning-rate
sensitivity of each with paired statistics by seed, the failure fraction, and the attention-logit and
s_Q·s_K growth at the largest learning rate each condition ran without stopping.

LR sensitivity of a condition (Wortsman et al. §3.1): E_lr[min(L(lr), L0) − L*], the mean over the
grid's learning rates of the excess of the final validation loss over the best, a diverged run counted at
the initial loss L0 (the mean step-1 training loss of all runs, ≈ ln V), computed per seed so that
conditions pair by seed. Beside it, the sensitivity around each seed's own optimum (the mean excess over the
learning rates within ±1 decade of that seed's best, stats.sensitivity_around_optimum), which does not grow
when a condition's optimum sits at the grid's edge; where the edge (or a missing run) cuts a seed's window its
mean is biased low, so its verdict is withheld for that pair and says why (a refinement declared 2026-11-30 after
an audit's synthetic grids, before the bracketing grid's 8 seeds were complete; in its two seeds then complete,
every window was whole). A pair whose conditions did not run the same learning rates is not compared (no verdict, saying
which). Statistics (analysis/stats.py): the mean over
seeds with a t-interval; each condition minus its reference (the logged `condition_reference`: A of the same
optimizer and start, N for the projections) paired by seed, with a t-interval and an exact sign-flip p-value;
beside them the grid's measured null; a verdict "differ", "equivalent" (TOST within the margin declared below)
or "undecided" by the rule stats.rule_text() states. A run failed by the rule declared in analysis/lr_grid.py
(stopped, unstable by the trainer's spike rule, or above its seed's best lr a final loss ≥ that best + 1 nat); the
lr at 50 % failed is a logistic fit over the learning rates at and above the condition's best, given only where
failure rises with lr and the fit lies inside them (else a bracket or the reason it has none).

Usage: fig_lr_sensitivity.py [--out DIR] [--null DIR] LOG_OR_DIR_OR_LEDGER...   (gpt2/train logs, directories
holding <run>/log.h5 as gpt2/experiments/lr_sensitivity.sh writes them, or a results ledger .csv; --null: the
bf16 grid's thread-count null). Writes fig_lr_sensitivity.png (from logs only) and table_lr_sensitivity.md
(GAUGELAB_FIGURES or --out, default figures/)."""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import argparse
import dataclasses
import math
import os
import sys
from pathlib import Path

import numpy as np

import figstyle
import lr_grid
import manifest
import results_ledger
import stats
from figure_decl import Figure
from seed000_runs import PAPER_TABLE1
from lr_grid import Run, grid, label_of, labels_in_order, paired_by_seed  # noqa: F401  (the tests' names)

# The equivalence margin of the verdicts, in nats of LR sensitivity, declared on 2026-11-27 before any grid
# with >= 8 seeds ran: two handlings whose sensitivities agree within it are "equivalent". 0.05 is above
# the grid's measured noise between handlings equal by construction at 3 seeds (P − N ≈ 0.03), so it can be
# met, and a quarter of the QK-norm and cap effects the 3-seed grid showed (0.2–0.4), so it does not hide
# them. A flag (--margin); a verdict names the margin it used. The same margin serves the sensitivity around
# the own optimum (declared 2026-11-29, before the bracketing grid ran).
MARGIN = 0.05
# Pairs equal by construction up to rounding in float32 from the balanced start: the grid's measured null, printed
# beside every difference (for each optimizer and start). B ≡ C (r_Q and r_K get identical gradients, gpt2/README.md
# "Why B ≡ C"); P ≡ N (the raw gradient is already horizontal, Prop. 38). Under bf16 autocast B − C is no null:
# rounding breaks the tie, C drifts and B does not, so B − C is GaugeFix's effect there (labelled so).
NULLS = (("B", "C"), ("P", "N"))
OWN_WINDOW_DECADES = 1.0  # the sensitivity around the own optimum: lrs within ±1 decade of the seed's best

MIN_SEEDS = 8  # a verdict rests on at least this many seeds per condition (the statistics issue's floor)

# Seed 000, Table 1 (seed000_runs.PAPER_TABLE1): the final Q/K drift max_h |log(s_Q/s_K)| (its eq. 3) of GPT-2 124M
# after 20 000 bf16 steps, mean ± population std over its 3 seeds as the paper states them, per condition key. Printed
# beside ours; the claim itself is judged in the seed-000 section of the figure index (its declared rule).
SEED000_DRIFT = {c: (float(np.mean([v[2] for v in by_seed.values()])), float(np.std([v[2] for v in by_seed.values()])))
                 for c, by_seed in PAPER_TABLE1.items()}

# The figure index's entry: `make figures` draws it from the demo slice (6 runs, 1 seed), which decides nothing; the
# verdicts come from the full grid (`make lr-grid`), whose table the index prints in its own section.
FIGURE = Figure(seed="instrument", label="learning-rate sensitivity", what="LR sensitivity of the Q/K-gauge handlings",
                inputs=manifest.LRS_DEMO, status="beyond the seeds",
                paper="(no seed runs this experiment; seed 000 implies B is less stable than A)")


def spread(values: list[float]) -> str:
    """median [min, max] of the finite values, or — when there are none."""
    v = np.array([x for x in values if math.isfinite(x)])
    return f"{np.median(v):.3g} [{v.min():.3g}, {v.max():.3g}]" if len(v) else "—"


def drift_rows(runs: list[Run], conds: list[str], info: dict, at_lr: float | None = None) -> list[str]:
    """One row per condition: the final Q/K drift and effective-map imbalance over its completed runs, and the
    median drift at the learning rate `at_lr` (the one seed 000's drift claim is judged at)."""
    out = []
    for c in conds:
        done = [r for r in runs if r.cond == c and not r.diverged]
        if not done or not any(math.isfinite(r.drift) for r in done):
            continue
        at = [r.drift for r in done if at_lr is not None and math.isclose(r.lr, at_lr, rel_tol=1e-6)]
        med = spread(at) if at else "—"
        seed = SEED000_DRIFT.get(info[c].key) if not info[c].muon and not info[c].offset else None
        out.append(f"| {info[c].title} | {spread([r.drift for r in done])} | "
                   f"{spread([r.eff_imbalance for r in done])} | {med} | "
                   f"{'—' if seed is None else f'{seed[0]:.3f} ± {seed[1]:.3f}'} | {len(done)} |")
    return out


def _is_bf16(runs: list[Run], *labels: str) -> bool:
    return any(r.precision == "bf16" for r in runs if r.cond in labels)


def null_rows(runs: list[Run], conds: list[str], info: dict) -> tuple[list[str], list[str]]:
    """(measured nulls, GaugeFix's effect in bf16): B − C and P − N for each optimizer and start that ran both;
    a B − C of bf16 runs goes to the second list (rounding breaks the tie there: not a null)."""
    L0 = lr_grid.initial_loss(runs)
    nulls, effects = [], []
    for c in conds:
        for a_key, b_key in NULLS:
            if info[c].key != a_key:
                continue
            other = next((x for x in conds if info[x].key == b_key and info[x].muon == info[c].muon
                          and info[x].offset == info[c].offset), None)  # the same optimizer and start
            d = paired_by_seed(runs, c, other, L0) if other else None
            if d is None:
                continue
            if a_key == "B" and _is_bf16(runs, c, other):
                effects.append(f"| {c} − {other}: GaugeFix's effect in bf16 (not a null: under bf16 rounding C "
                               f"drifts and B does not) | {stats.paired_difference(*d).text()} |")
            else:
                nulls.append(f"| {c} − {other} (equal by construction, up to rounding) | "
                             f"{stats.measured_null(*d).text()} |")
    return nulls, effects


def thread_null(null_runs: list[Run], key: str, lr: float, quantity: str) -> stats.PairedResult | None:
    """The bf16 grid's real null: condition `key` at `lr` run with two thread counts (another reduction order, the
    same math), the smaller count minus the larger, paired by seed, of `quantity` ("final_val" or "log10 drift")."""
    counts = sorted({r.threads for r in null_runs if r.key == key})
    if len(counts) != 2:
        return None
    a, b = (lr_grid.at(null_runs, key, lr, threads=t) for t in counts)
    seeds = sorted(set(a) & set(b))
    if not seeds:
        return None

    def value(r: Run) -> float:
        if quantity == "final_val":
            return r.final_val
        return math.log10(r.drift) if r.drift > 0 else math.nan
    return stats.measured_null([value(a[s]) for s in seeds], [value(b[s]) for s in seeds],
                               name=f"{key} at lr {lr:g}, threads {counts[0]} − {counts[1]}, {quantity}")


AXIS_NULL = "lr_sensitivity_bf16_sens_null"  # the grid of the sensitivities' own null (analysis/manifest.py)


def axis_null(runs: list[Run], axis_runs: list[Run], L0: float) -> list[stats.PairedResult]:
    """The sensitivities' own null: each condition of `axis_runs` (grid AXIS_NULL: the bf16 grid's runs again under
    another thread count over the whole lr axis) against the same condition's runs in `runs`, Wortsman's sensitivity
    and the one around each seed's own optimum, the grid's thread count minus the other's, paired by seed over the
    seeds both ran at every lr. L0: the grid's initial loss, so that a stopped run weighs as in the grid's table."""
    out = []
    for key in sorted({r.key for r in axis_runs}):
        mine = [r for r in runs if r.key == key and not r.muon and not r.offset]
        other = [r for r in axis_runs if r.key == key and not r.muon and not r.offset]
        t_mine, t_other = sorted({r.threads for r in mine}), sorted({r.threads for r in other})
        if not mine or not other or len(t_mine) != 1 or len(t_other) != 1 or t_mine == t_other:
            continue
        label = f"{mine[0].cond} threads {t_other[0]}"
        both = mine + [dataclasses.replace(r, cond=label) for r in other]
        lrs, seeds_mine, _ = grid(mine, mine[0].cond, L0)
        seeds = set(seeds_mine) & set(grid(both, label, L0)[1])  # those paired_by_seed uses
        by = {(r.lr, r.seed): r for r in mine if r.seed in seeds}
        pairs = [(by[(r.lr, r.seed)], r) for r in other if (r.lr, r.seed) in by]
        build = sum(a.git_sha != b.git_sha for a, b in pairs)
        cpu = sum(not a.cpu_bf16 or not b.cpu_bf16 or a.cpu_bf16 != b.cpu_bf16 for a, b in pairs)  # "": not logged
        what = (f"{key}, threads {t_mine[0]} − {t_other[0]} over the whole lr axis (of its {len(pairs)} run pairs, "
                f"{build} also from another build, {cpu} with the CPU's bf16 features different or not logged)")
        for fn, name in ((stats.sensitivity_per_seed, "LR sensitivity (Wortsman)"),
                         (lambda X: stats.sensitivity_around_optimum(X, lrs, OWN_WINDOW_DECADES).sensitivity,
                          f"sensitivity around the own optimum (±{OWN_WINDOW_DECADES:g} decade)")):
            d = paired_by_seed(both, mine[0].cond, label, L0, fn=fn)
            if d is not None:
                out.append(stats.measured_null(*d, name=f"{what}, {name}"))
    return out


def axis_if_whole(axis_runs: list[Run], where: str) -> tuple[list[Run] | None, str]:
    """(the axis null's runs made as declared, `where`) when every run grid AXIS_NULL declares is among them; else
    (None, how far it is): no estimate from part of it."""
    off = {r.run for r, _ in results_ledger.off_declaration(AXIS_NULL, axis_runs)}
    runs = [r for r in axis_runs if r.run not in off]
    declared = results_ledger.declared_runs(AXIS_NULL)
    missing = set(declared) - {r.run for r in runs}
    if missing:
        return None, (f"{len(declared) - len(missing)} of its {len(declared)} runs present"
                      f"{f' ({where})' if where else ''}, read when whole")
    return runs, where


def logit_cell(rs: list[Run]) -> str:
    """The largest attention logit: the signed maximum (Kimi K2's S_max, what QK-Clip bounds) when every run logged
    it, else max |logit| marked '|·|'."""
    signed = [r.attn_signed_max for r in rs]
    if rs and all(math.isfinite(v) for v in signed):
        return f"{max(signed):.3g}"
    vals = [r.attn_max for r in rs if math.isfinite(r.attn_max)]
    return f"|·| {max(vals):.3g}" if vals else "—"


def table_lines(runs: list[Run], where: str, margin: float = MARGIN, null_runs: list[Run] | None = None,
                at_lr: float | None = None, null_where: str = "", axis_runs: list[Run] | None = None,
                axis_where: str = "") -> list[str]:
    """The LR-sensitivity table (Markdown lines) of `runs`, whose run set is described by `where`; `axis_runs` (grid
    AXIS_NULL, whole: `axis_where` says from where; None: not here, `axis_where` may say how far it is) give the
    sensitivities' own null."""
    L0 = lr_grid.initial_loss(runs)
    conds = labels_in_order(runs)
    info = {r.cond: r for r in runs}  # label -> a run carrying its title, reference and flags
    n_seeds = min(len(grid(runs, c, L0)[1]) for c in conds)  # the seeds every lr of a condition ran, fewest
    slice_only = n_seeds < MIN_SEEDS
    whole_seeds = {c: set(grid(runs, c, L0)[1]) for c in conds}
    partial = sum(1 for r in runs if r.seed not in whole_seeds[r.cond])  # runs of a seed not yet whole

    def own(L: np.ndarray, lrs: np.ndarray) -> np.ndarray:
        return stats.sensitivity_around_optimum(L, lrs, OWN_WINDOW_DECADES).sensitivity

    def verdict_of(d, withheld: str = "") -> tuple[str, str]:  # withheld: why no verdict, though the pair exists
        paired = stats.paired_difference(*d)
        v = ("no verdict (a slice)" if slice_only or paired.n < MIN_SEEDS else f"no verdict ({withheld})" if withheld
             else stats.verdict(paired, stats.tost(*d, margin=margin) if paired.n >= 2 else None))
        return paired.text(), v

    # label -> each seed's own-optimum window (computed once: a pair needs its reference's cut seeds too), and
    # (seeds whose window the grid's edge or a missing run cuts, seeds)
    own_opt, cut = {}, {}
    for c in conds:
        lrs, seeds, L = grid(runs, c, L0)
        own_opt[c] = stats.sensitivity_around_optimum(L, lrs, OWN_WINDOW_DECADES)
        cut[c] = (int(own_opt[c].cut.sum()) if L.size else 0, len(seeds))

    rows = []
    for c in conds:
        base = info[c].reference
        lrs, seeds, L = grid(runs, c, L0)
        rs = [r for r in runs if r.cond == c]
        wort = stats.sensitivity_per_seed(L)
        opt = own_opt[c]
        m_w = stats.paired_difference(wort, np.zeros_like(wort))
        m_o = stats.paired_difference(opt.sensitivity, np.zeros_like(opt.sensitivity))
        diff_w = v_w = diff_o = v_o = "—"
        if base and base in conds:
            lacks = sorted(set(lrs) ^ set(grid(runs, base, L0)[0]))  # lrs one of the pair ran and the other not
            short = f"no run at lr {', '.join(f'{lr:g}' for lr in lacks)} in {c} or {base}" if lacks else ""
            cuts = [f"{k}/{n} seeds of {x}" for x, (k, n) in ((c, cut[c]), (base, cut[base])) if k]
            d = paired_by_seed(runs, c, base, L0)
            if short:  # not compared over a shorter grid (pairing needs the same lrs; it gives nothing then)
                v_w = v_o = f"no verdict ({short})"
            elif d is not None:
                diff_w, v_w = verdict_of(d)
                d = paired_by_seed(runs, c, base, L0, fn=lambda X, lrs=lrs: own(X, lrs))
                diff_o, v_o = verdict_of(d, f"the ±{OWN_WINDOW_DECADES:g} decade window cut by the grid's edge in "
                                            f"{' and '.join(cuts)}" if cuts else "")
        mean = np.nanmean(L, axis=1) if L.size else np.full(len(lrs), math.nan)
        if not np.isfinite(mean).any():
            continue
        best_i = int(np.nanargmin(mean))
        edge = " — optimum at the grid's edge" if best_i in (0, len(lrs) - 1) else ""
        n_edge = int(opt.at_edge.sum())
        div = [r for r in rs if r.diverged]
        n_grad = sum(r.stop == "non-finite gradient" for r in div)
        stopped = f"{len(div)}/{len(rs)}" + (f" ({len(div) - n_grad} loss, {n_grad} gradient)" if div else "")
        fails = lr_grid.failed(runs, c, L0)
        upper = [(lr, f) for (lr, _), f in fails.items() if lr >= lrs[best_i]]
        fit = stats.logistic_lr50([lr for lr, _ in upper], [f for _, f in upper])
        if math.isfinite(fit.lr50) and not fit.reason and fit.slope > 0:
            lr50 = f"{fit.lr50:.3g} [{fit.lo:.3g}, {fit.hi:.3g}]"
        elif fit.falling or (math.isfinite(fit.slope) and fit.slope <= 0):
            lr50 = ("— (failure does not rise with lr at and above the best: "
                    + (f"slope {fit.slope:.3g}" if math.isfinite(fit.slope) else "its failures at the smaller lrs")
                    + ", no lr50)")
        elif fit.reason.startswith("no run failed") and any(fails.values()):
            lr50 = f"— (no run at or above the best lr failed: lr50 above the grid (> {lrs[-1]:g}))"
        else:
            lr50 = f"— ({fit.reason})" if fit.reason else "—"
        survived = [r.lr for r in rs if not r.diverged]
        lr_top = max(survived) if survived else math.nan
        rows.append(f"| {info[c].title} | {m_w.mean:.3f} [{m_w.lo:.3f}, {m_w.hi:.3f}] | {diff_w} | {v_w} "
                    f"| {m_o.mean:.3f} [{m_o.lo:.3f}, {m_o.hi:.3f}] | {diff_o} | {v_o} "
                    f"| {mean[best_i]:.3f} at {lrs[best_i]:g}{edge} ({n_edge}/{len(seeds)} seeds at an edge, "
                    f"{cut[c][0]}/{len(seeds)} whose ±{OWN_WINDOW_DECADES:g}-decade window the grid's edge or a missing run cuts) "
                    f"| {sum(fails.values())}/{len(fails)} | {lr50} | {stopped} | {lr_top:g} | {logit_cell(rs)} "
                    f"| {len(seeds)} |")
    nulls, effects = null_rows(runs, conds, info)
    if null_runs and at_lr is not None:
        for key in sorted({r.key for r in null_runs}):
            for q in ("final_val", "log10 drift"):
                t = thread_null(null_runs, key, at_lr, q)
                if t is not None:
                    nulls.append(f"| {t.name} (another reduction order, the same math; {null_where}) | {t.text()} |")
    bf16 = any(r.precision == "bf16" for r in runs)
    axis = axis_null(runs, axis_runs, L0) if axis_runs else []
    for t in axis:
        nulls.append(f"| {t.name} (grid {AXIS_NULL}, paired with the grid's own runs, one of each of whose builds "
                     f"reran bit for bit under this grid's: analysis/manifest.py; {axis_where}) | {t.text()} |")
    if axis_runs and not axis:  # whole, yet nothing to pair: said, never "not measured"
        nulls.append(f"| (the sensitivities' own null, grid {AXIS_NULL} ({axis_where}): its runs pair with none of "
                     "these: another lr axis, the same thread count or more than one, or no seed with every lr in "
                     "both) | — |")
    elif not axis and (axis_where or any("threads" in n for n in nulls)):  # not here: said, with how far it is
        nulls.append("| (the sensitivities' own null is not measured here: the thread-count null is one learning "
                     f"rate's; the sensitivity's is grid {AXIS_NULL}, the whole lr axis under the other thread count"
                     f"{': ' + axis_where if axis_where else ''}; the rows above estimate the reduction-order noise "
                     "of one run's loss and drift) | — |")
    if bf16 and not any("threads" in n for n in nulls):
        nulls.append("| (the bf16 grid's null, the same condition under two thread counts: grid "
                     "lr_sensitivity_bf16_null, not present in these runs) | — |")
    run_set = (f"the full grid in {where}, at least {MIN_SEEDS} seeds with every lr per condition" if not slice_only
               else f"a slice in {where}: {n_seeds} seed(s) with every lr for some condition, below the {MIN_SEEDS} a "
                    "verdict rests on, so no verdict is printed")
    if partial:
        run_set += f"; {partial} runs of seeds that lack a learning rate are left out of the statistics"
    drifts = drift_rows(runs, conds, info, at_lr)
    table = ["| condition | LR sensitivity (Wortsman: mean over the grid), mean over seeds [95 % t] | minus its "
             "reference's (A's; N's for the projections; same optimizer and start), paired by seed [95 % t], sign-flip "
             f"p | verdict | sensitivity around the own optimum (±{OWN_WINDOW_DECADES:g} decade), mean [95 % t] | minus "
             "its reference's, paired | verdict | best val loss at lr | failed (stopped, spike rule, or above the seed's "
             f"best lr ≥ its best + {lr_grid.FAILURE_EXCESS:g} nat) | lr at 50 % failed, logistic fit at and above the best lr [95 %] "
             "| stopped (non-finite loss, non-finite gradient) | largest lr not stopped | max attention logit (signed "
             "max where logged; |·|: max |logit|) | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", *rows, "",
             "Measured null of the same grid (differences that are zero by construction):", "",
             "| pair | difference [95 % t], sign-flip p |", "|---|---|",
             *(nulls or ["| (no such pair in these runs) | — |"]), ""]
    if effects:
        table += ["| effect | difference [95 % t], sign-flip p |", "|---|---|", *effects, ""]
    table += [f"LR sensitivity per seed: mean over the grid's learning rates of (that seed's final validation loss − its "
              f"minimum over the learning rates), diverged runs at the initial loss {L0:.3f} (Wortsman et al. §3.1, per "
              "seed so that conditions pair by seed); an optimum at the grid's edge inflates it (with the loss quadratic "
              "in log lr, 55/19 ≈ 2.9× a central one on 6 points, 204/60 = 3.4× on 9), so the sensitivity around each "
              f"seed's own optimum (±{OWN_WINDOW_DECADES:g} decade) stands beside it, its verdict withheld where the "
              "grid's edge cuts that window in a seed of either condition (the mean is then biased low). "
              f"Verdict rule: {stats.rule_text(margin=margin).rstrip('.')}. Run set: {run_set} ({len(runs)} runs)."]
    if drifts:
        table += ["", "Q/K drift at the end of training, over each condition's completed runs (every lr and seed), and "
                  "its median at the learning rate seed 000's drift claim is judged at, beside the seed's Table 1 (another "
                  "model and length: a comparison of size; the claim is judged in the seed-000 section of the figure "
                  "index):", "",
                  "| condition | final drift max_h \\|log(s_Q/s_K)\\| (seed 000 eq. 3), median [min, max] | final "
                  "effective-map imbalance max_h \\|log(‖W_Q,eff‖/‖W_K,eff‖)\\|, median [min, max] | final drift at lr "
                  f"{'—' if at_lr is None else f'{at_lr:g}'}, median [min, max] | seed 000's drift, mean ± std (3 seeds; "
                  "GPT-2 124M, 20 000 bf16 steps) | runs |",
                  "|---|---|---|---|---|---|", *drifts]
    return table


def read_runs(items: list[str], sources: list[str] | None = None) -> tuple[list[Run], int]:
    """The finished runs of logs, run directories or ledgers (.csv), and how many unfinished runs were left out. A
    grid's own folder is read as the figure index reads it (results_ledger.load_grid: its declared runs, from their
    logs and, where those are elsewhere, from its ledger). One run given twice (its log and its ledger row) counts
    once; two different results for one condition, lr, seed, thread count and precision are refused (ValueError),
    since the table has one cell for them. `sources`, when given, gets what each item was read as."""
    runs, left = [], 0
    for it in items:
        said = it
        if it.endswith(".csv"):
            led = results_ledger.loads(Path(it).read_text())
            done, grid = led.runs, led.grid
        elif (grid := grid_of(Path(it))) is not None:
            g = results_ledger.load_grid(grid, results_ledger.ROOT, results_ledger.ROOT / "analysis" / "results",
                                         as_declared=False)
            done = g.runs if g else []
            left += sum(r is None for r in (lr_grid.load(p) for p in lr_grid.find_logs([it])))
            said = f"grid {grid}: {g.source}" if g else it  # its declared runs only (the manifest's names)
        else:
            loaded = [lr_grid.load(p) for p in lr_grid.find_logs([it])]
            done = [r for r in loaded if r is not None]
            left += sum(r is None for r in loaded)
        off = results_ledger.off_declaration(grid, done) if grid else []
        if off:  # a run not made as its grid declares is not compared with the others
            print(f"fig_lr_sensitivity: left out of {it}, not made as declared: "
                  + ", ".join(f"{r.run} ({why})" for r, why in off), file=sys.stderr)
        runs += [r for r in done if all(r is not o for o, _ in off)]
        if sources is not None:
            sources.append(said)
    return distinct(runs), left


def distinct(runs: list[Run]) -> list[Run]:
    """`runs` with each condition, lr, seed, thread count and precision once: a repeat with the same final loss (a run
    read from its log and from a ledger) is dropped; one with another is a ValueError naming both."""
    seen: dict[tuple, Run] = {}
    for r in runs:
        k = (r.cond, r.lr, r.seed, r.threads, r.precision)
        if k not in seen:
            seen[k] = r
        elif not (seen[k].final_val == r.final_val or (math.isnan(seen[k].final_val) and math.isnan(r.final_val))):
            o = seen[k]
            raise ValueError(f"condition {r.cond} at lr {r.lr:g}, seed {r.seed} is given twice with different final "
                             f"losses ({o.run or '?'} {o.final_val:.6g}, {r.run or '?'} {r.final_val:.6g})")
    return list(seen.values())


def grid_of(folder: Path) -> str | None:
    """The grid of the manifest whose runs' folder `folder` is, or None."""
    here = folder.resolve()
    for name in manifest.GRIDS:
        if (results_ledger.ROOT / manifest.GRIDS[name][0]["root"]).resolve() == here:
            return name
    return None


def plot(runs: list[Run], L0: float) -> None:
    import matplotlib.pyplot as plt

    conds = labels_in_order(runs)
    info = {r.cond: r for r in runs}
    optimizers = sorted({info[c].muon for c in conds})  # a row of panels per optimizer: AdamW, then Muon
    fig, axes_grid = plt.subplots(len(optimizers), 4, figsize=(18, 4.0 * len(optimizers)), squeeze=False)
    keys = sorted({info[c].key for c in conds}, key=lambda k: next(info[c].index for c in conds if info[c].key == k))
    colors = {k: f"C{i % 10}" for i, k in enumerate(keys)}  # one colour per condition, in every optimizer's row
    for c in conds:
        muon, name = info[c].muon, info[c].title
        lrs, seeds, L = grid(runs, c, L0)
        if not L.size:
            continue
        color = colors[info[c].key]
        ax_l, ax_a, ax_t, ax_s = axes_grid[optimizers.index(muon)]
        mean = np.nanmean(L, axis=1)
        ls = "--" if info[c].offset else "-"
        ax_l.plot(lrs, mean, "o" + ls, color=color, label=name, ms=4)
        ax_l.fill_between(lrs, np.nanmin(L, axis=1), np.nanmax(L, axis=1), color=color, alpha=0.15, lw=0)
        rs = [r for r in runs if r.cond == c]
        div = [r for r in rs if r.diverged]
        if div:
            ax_l.scatter([r.lr for r in div], [L0] * len(div), marker="x", color=color, s=30)
        # the largest attention logit over the run, per lr (mean over seeds)
        amax = [np.nanmean([r.attn_max for r in rs if r.lr == lr]) for lr in lrs]
        ax_a.plot(lrs, amax, "o-", color=color, ms=4, label=name)
        survived = [r.lr for r in rs if not r.diverged]
        lr_top = max(survived) if survived else math.nan
        top = [r for r in rs if r.lr == lr_top and not r.diverged and len(r.attn)]  # a seed that survived it
        if top:
            r0 = min(top, key=lambda r: r.seed)
            ax_t.plot(r0.step, r0.attn, color=color, lw=1.2, label=f"{name} (lr {lr_top:g})")
            if np.isfinite(r0.sqk).any():
                ax_s.plot(r0.step, r0.sqk, color=color, lw=1.2, label=name)
    for muon, axes in zip(optimizers, axes_grid):
        ax_l, ax_a, ax_t, ax_s = axes
        opt = "Muon" if muon else "AdamW"
        if any(r.diverged and r.muon == muon for r in runs):  # only then does the initial loss enter
            ax_l.axhline(L0, color="0.5", ls=":", lw=1)
            ax_l.annotate("initial loss: diverged runs (x)", (0.02, L0), xycoords=("axes fraction", "data"),
                          ha="left", va="top", fontsize=7, color="0.4")
        for ax in axes[:2]:
            ax.set_xscale("log")
            ax.set_xlabel("peak learning rate" + (" (AdamW groups; Muon's is 10x)" if muon else ""))
        ax_l.set_ylabel("final validation loss (nats)")
        ax_l.set_title(f"{opt} (a) loss vs learning rate (band: seed min–max)", fontsize=9)
        ax_a.set_yscale("log")
        ax_a.set_ylabel("max attention logit |q·k|/√d_h over the run")
        ax_a.set_title(f"{opt} (b) attention-logit growth", fontsize=9)
        ax_t.set_yscale("log")
        ax_t.set_xlabel("step")
        ax_t.set_ylabel("max attention logit")
        ax_t.set_title(f"{opt} (c) at the largest lr not stopped (one seed)", fontsize=9)
        ax_s.set_yscale("log")
        ax_s.set_xlabel("step")
        ax_s.set_ylabel("max over heads of s_Q·s_K")
        ax_s.set_title(f"{opt} (d) Q/K scale product, same runs", fontsize=9)
        ax_l.legend(fontsize=7, loc="center left")  # the empty middle: low losses below, diverged runs above
        ax_t.legend(fontsize=6)
        if not ax_s.lines:
            ax_s.text(0.5, 0.5, "no multipliers logged", transform=ax_s.transAxes, ha="center", color="0.5")
    fig.tight_layout()
    figstyle.save(fig, "fig_lr_sensitivity",
                  f"Learning-rate sensitivity of the Q/K-gauge handlings ({len(runs)} runs). (a) Final validation loss "
                  "against the peak learning rate, mean over seeds with the seed range shaded; crosses: diverged runs, "
                  f"counted at the initial loss {L0:.2f}. (b) The largest attention logit reached during the run. (c) Its "
                  "trajectory at the largest learning rate each condition ran without stopping (one seed), and (d) the largest Q/K multiplier "
                  "scale product s_Q·s_K in the same runs. Top row AdamW, bottom row Muon (when run). For the Muon runs "
                  "the learning rate is that of their AdamW groups (embeddings, norms, multipliers); Muon's own is 10 "
                  "times it. Dashed: runs started off the balanced Q/K slice by a pure gauge move (--qk-gauge-init). No "
                  "paper value exists for this experiment (the seeds do not run it); Wortsman et al.'s Fig. 1 is the format.")


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="gpt2/train logs, directories of <run>/log.h5, or a results ledger .csv")
    ap.add_argument("--out", "--out-dir", dest="out_dir", metavar="DIR",
                    help="where the figure and table go (default: GAUGELAB_FIGURES or figures/)")
    ap.add_argument("--margin", type=float, default=MARGIN,
                    help=f"equivalence margin of the verdicts in nats of LR sensitivity (declared: {MARGIN})")
    ap.add_argument("--null", action="append", default=[], metavar="DIR",
                    help="the thread-count null's runs (grid lr_sensitivity_bf16_null), logs or its ledger")
    ap.add_argument("--axis-null", action="append", default=[], metavar="DIR",
                    help=f"the sensitivities' own null (grid {AXIS_NULL}: the whole lr axis under another thread "
                         "count), logs or its ledger")
    a = ap.parse_args(argv)
    if a.out_dir:
        os.environ["GAUGELAB_FIGURES"] = a.out_dir
    sources: list[str] = []
    try:
        runs, left = read_runs(a.logs, sources)
        null_runs = read_runs(a.null)[0] if a.null else None
        axis_runs, axis_where = (axis_if_whole(read_runs(a.axis_null)[0], ", ".join(a.axis_null)) if a.axis_null
                                 else (None, ""))
    except ValueError as err:  # two results for one cell, a file that is no ledger
        sys.exit(f"fig_lr_sensitivity.py: error: {err}")
    if left:
        print(f"fig_lr_sensitivity.py: {left} unfinished runs left out")
    if not runs:
        sys.exit("fig_lr_sensitivity.py: no finished runs found in " + " ".join(a.logs))
    if any(len(r.attn) for r in runs):  # a ledger keeps no per-step series: no figure from it
        plot(runs, lr_grid.initial_loss(runs))
    figstyle.save_table("table_lr_sensitivity", "\n".join(
        table_lines(runs, "; ".join(sources), a.margin, null_runs, float(manifest.SEED_REGIME_LR), ", ".join(a.null),
                    axis_runs, axis_where)))


if __name__ == "__main__":
    figstyle.run(main, sys.argv[1:])
