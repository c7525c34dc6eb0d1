"""The learning-rate-sensitivity analysis on hand-made grids: the per-seed statistic, the diverged-run
rule, pairing by seed, and the condition read from the log."""
from __future__ import annotations

import math

import numpy as np

import fig_lr_sensitivity as lrs
import stats


def test_sensitivity_is_the_mean_excess_over_the_best_learning_rate():
    L = np.array([[3.0, 3.0], [2.0, 2.0], [2.5, 2.5]])  # 3 lrs x 2 seeds
    assert np.allclose(stats.sensitivity_per_seed(L), [(1.0 + 0.0 + 0.5) / 3] * 2)


def test_diverged_runs_count_at_the_initial_loss():
    runs = [lrs.Run("B", lr, seed, final, div, 10.0, np.array([]), np.array([]), np.array([]))
            for lr, seed, final, div in [(0.1, 1, 2.0, False), (1.0, 1, math.nan, True), (0.1, 2, 2.2, False),
                                         (1.0, 2, 3.0, False)]]
    lrs_, seeds, L = lrs.grid(runs, "B", 10.0)
    assert list(lrs_) == [0.1, 1.0] and seeds == [1, 2]
    assert L[1, 0] == 10.0 and L[1, 1] == 3.0
    # per seed: seed 1 (2.0, 10.0) -> (0 + 8) / 2, seed 2 (2.2, 3.0) -> (0 + 0.8) / 2
    assert np.allclose(stats.sensitivity_per_seed(L), [4.0, 0.4])


def test_conditions_pair_by_seed_on_the_seeds_both_ran():
    def runs(cond, seed_losses):
        return [lrs.Run(cond, lr, seed, v, False, 10.0, np.array([]), np.array([]), np.array([]))
                for seed, vals in seed_losses.items() for lr, v in zip((0.1, 1.0), vals)]
    rs = runs("B", {1: (2.0, 3.0), 2: (2.0, 2.5), 3: (1.0, 1.0)}) + runs("A", {1: (2.0, 2.0), 2: (2.0, 2.0)})
    x, y = lrs.paired_by_seed(rs, "B", "A", 10.0)  # seed 3 has no A run: left out
    assert list(x) == [0.5, 0.25] and list(y) == [0.0, 0.0]
    assert lrs.paired_by_seed(rs, "B", "C", 10.0) is None


def test_the_condition_comes_from_the_log_summary_never_from_the_flags():
    # The trainer writes the label, key, title, reference and table index (conditions.hpp); the analysis
    # reads them as they are.
    summ = {"condition": "Dcap", "condition_label": "oMDcap", "condition_title": "Muon, D: GaugeFix + cap, offset start",
            "condition_reference": "oMA", "condition_index": 4}
    assert lrs.label_of(summ, "x") == ("oMDcap", "Dcap", "Muon, D: GaugeFix + cap, offset start", "oMA", 4)
    assert lrs.label_of({**summ, "condition_reference": "-"}, "x")[3] == ""  # a reference has none
    try:
        lrs.label_of({"condition": "C"}, "old.h5")  # a log from before the table: refused, not guessed
        assert False, "a log without a condition label was accepted"
    except ValueError as e:
        assert "old.h5" in str(e)


def test_curves_follow_the_table_order_adamw_before_muon_balanced_before_offset():
    def run(label, index, muon=False, offset=False):
        return lrs.Run(label, 0.1, 1, 2.0, False, 10.0, np.array([]), np.array([]), np.array([]),
                       key=label.lstrip("oM"), index=index, muon=muon, offset=offset)
    runs = [run("oA", 0, offset=True), run("MB", 1, muon=True), run("C", 2), run("A", 0), run("MA", 0, muon=True)]
    assert lrs.labels_in_order(runs) == ["A", "C", "MA", "MB", "oA"]


def test_drift_rows_give_the_median_at_the_declared_lr_and_leave_out_diverged_runs():
    def run(label, key, drift, lr=0.1, diverged=False, muon=False):
        return lrs.Run(label, lr, 1, 2.0, diverged, 10.0, np.array([]), np.array([]), np.array([]), key=key,
                       title=label, muon=muon, drift=drift, eff_imbalance=0.3)
    runs = [run("A", "A", 1e-3), run("A", "A", 4e-3), run("A", "A", 2e-2, lr=1.0), run("A", "A", 9.0, diverged=True),
            run("B", "B", 0.0), run("MC", "C", 2e-3, muon=True), run("Q", "Q", math.nan)]
    info = {r.cond: r for r in runs}
    rows = lrs.drift_rows(runs, ["A", "B", "MC", "Q"], info, at_lr=0.1)
    assert len(rows) == 3  # Q logged no drift (no multipliers)
    a, b, mc = rows
    assert "| 0.004 [0.001, 0.02] |" in a        # over every lr; the diverged 9.0 left out
    assert "| 0.0025 [0.001, 0.004] |" in a      # the median at lr 0.1 only
    assert "| 3 |" in a
    assert "0.052 ± 0.027" in a and "0.047" not in mc  # the seed's value beside ours (Muon's C is not the seed's C)
    assert "| — |" in mc


def test_a_seed_missing_a_learning_rate_is_left_out_of_the_grid_whole():
    def run(lr, seed, v):
        return lrs.Run("A", lr, seed, v, False, 10.0, np.array([]), np.array([]), np.array([]))
    runs = [run(0.1, 1, 2.0), run(1.0, 1, 3.0), run(0.1, 2, 1.0)]  # seed 2 has not run lr 1 yet
    lr, seeds, L = lrs.grid(runs, "A", 10.0)
    assert list(lr) == [0.1, 1.0] and seeds == [1] and L.shape == (2, 1)


# --- the table on synthetic grids: the edge flag, the failure rule, the bf16 relabelling, the thread-count null ------

import grid_logs  # noqa: E402
import lr_grid  # noqa: E402

LRS9 = ["3.73e-4", "1e-3", "2.68e-3", "7.2e-3", "1.93e-2", "5.18e-2", "0.139", "0.373", "1.0"]
SEEDS8 = [42, 123, 456, 789, 1001, 2002, 3003, 4004]


def _runs(paths):
    return [lr_grid.load(p) for p in paths]


def test_the_table_flags_an_optimum_at_the_grids_edge_and_not_a_centred_one(tmp_path):
    paths = grid_logs.quadratic_grid(tmp_path, "AQ", LRS9[2:8], SEEDS8, {"A": 2.68e-3, "Q": 1.93e-2})
    lines = lrs.table_lines(_runs(paths), "synthetic")
    a = next(ln for ln in lines if ln.startswith("| A: WD on Q/K"))
    q = next(ln for ln in lines if ln.startswith("| QK-norm"))
    assert "optimum at the grid's edge" in a
    assert "(8/8 seeds at an edge, 8/8 whose ±1-decade window the grid's edge or a missing run cuts)" in a
    assert "optimum at the grid's edge" not in q
    assert "(0/8 seeds at an edge, 0/8 whose ±1-decade window the grid's edge or a missing run cuts)" in q


def test_failure_by_the_loss_rule_gives_an_lr_at_50_percent(tmp_path):
    # curvature 3 nats per decade²: the runs one decade and more above the best fail by the +1 nat rule
    paths = grid_logs.quadratic_grid(tmp_path, "A", LRS9, SEEDS8, {"A": 2.68e-3}, curvature=3.0, noise=0.5)
    runs = _runs(paths)
    fails = lr_grid.failed(runs, "A", lr_grid.initial_loss(runs))
    assert not any(f for (lr, _), f in fails.items() if lr <= 2.68e-3 * 1.01)
    assert all(f for (lr, _), f in fails.items() if lr >= 0.139)
    row = next(ln for ln in lrs.table_lines(runs, "synthetic") if ln.startswith("| A: WD on Q/K"))
    cells = [c.strip() for c in row.split("|")]
    assert cells[9].endswith(f"/{len(runs)}") and int(cells[9].split("/")[0]) > 0
    assert cells[10] != "—"  # a fit or a separated bracket, never blank


def test_b_minus_c_is_a_null_in_float32_and_gaugefixs_effect_in_bf16(tmp_path):
    for precision in ("fp32", "bf16"):
        paths = grid_logs.quadratic_grid(tmp_path / precision, "ABC", LRS9[2:5], SEEDS8,
                                         {"A": 2.68e-3, "B": 2.68e-3, "C": 2.68e-3}, precision=precision)
        text = "\n".join(lrs.table_lines(_runs(paths), "synthetic"))
        if precision == "fp32":
            assert "B − C (equal by construction" in text and "GaugeFix's effect in bf16" not in text
        else:
            assert "B − C: GaugeFix's effect in bf16" in text and "equal by construction" not in text
            assert "lr_sensitivity_bf16_null, not present" in text


def test_the_thread_count_null_pairs_by_seed(tmp_path):
    main = grid_logs.quadratic_grid(tmp_path / "g", "AC", LRS9[2:4], SEEDS8, {"A": 2.68e-3, "C": 2.68e-3})
    null = []
    for t in (1, 2):
        null += grid_logs.quadratic_grid(tmp_path / "n", "C", ["2.68e-3"], SEEDS8, {"C": 2.68e-3}, threads=t)
    text = "\n".join(lrs.table_lines(_runs(main), "synthetic", null_runs=_runs(null), at_lr=2.68e-3, null_where="n"))
    assert "C at lr 0.00268, threads 1 − 2, final_val" in text and "log10 drift" in text and "n=8 (null)" in text


def test_the_sensitivities_own_null_pairs_the_grids_runs_with_the_whole_axis_under_the_other_thread_count(tmp_path):
    main = grid_logs.quadratic_grid(tmp_path / "g", "AC", LRS9, SEEDS8, {"A": 2.68e-3, "C": 2.68e-3})
    axis = grid_logs.quadratic_grid(tmp_path / "x", "C", LRS9, SEEDS8, {"C": 2.68e-3}, threads=2, noise=0.02)
    text = "\n".join(lrs.table_lines(_runs(main), "synthetic", axis_runs=_runs(axis), axis_where="x here"))
    for name in ("LR sensitivity (Wortsman)", "sensitivity around the own optimum (±1 decade)"):
        row = next(ln for ln in text.splitlines() if "C, threads 1 − 2 over the whole lr axis" in ln and
                   f"), {name} (grid" in ln)
        assert "grid lr_sensitivity_bf16_sens_null" in row and "x here" in row and "n=8 (null)" in row
    assert "own null is not measured" not in text
    assert "of its 72 run pairs, 0 also from another build, 72 with the CPU's bf16 features different or not logged" in text
    runs = _runs(main) + _runs(axis)  # the same numbers computed here: the grid's arm minus the other, per seed
    L0 = lr_grid.initial_loss(_runs(main))
    one = lr_grid.grid([r for r in runs if r.threads == 1 and r.key == "C"], "C", L0)[2]
    two = lr_grid.grid([r for r in runs if r.threads == 2], "C", L0)[2]
    want = float(np.mean(stats.sensitivity_per_seed(one) - stats.sensitivity_per_seed(two)))
    row = next(ln for ln in text.splitlines() if "Wortsman)" in ln and "axis" in ln)
    assert row.split("| ")[-1].startswith(f"{want:+.3g} [") and want != 0
    short = _runs(axis)[: -len(SEEDS8)]  # the last seed without 8 of its 9 lrs: it drops out of the pairs
    row = next(ln for ln in lrs.table_lines(_runs(main), "s", axis_runs=short) if "Wortsman)" in ln and "axis" in ln)
    assert "n=7 (null)" in row


def test_the_signed_logit_maximum_is_shown_where_logged_else_max_abs_marked(tmp_path):
    signed = [grid_logs.run_log(tmp_path / f"s{s}", "A", 0.1, s, 5.0, signed_logit=-3.0 + s) for s in range(3)]
    plain = [grid_logs.run_log(tmp_path / f"p{s}", "A", 0.1, s, 5.0) for s in range(3)]
    assert lrs.logit_cell(_runs(signed)) == "-1"
    assert lrs.logit_cell(_runs(plain)) == "|·| 50"


def test_the_figure_leaves_out_a_run_its_grid_did_not_declare_the_arithmetic_of(tmp_path, monkeypatch, capsys):
    import grid_logs
    import manifest
    import results_ledger

    monkeypatch.setattr(results_ledger, "ROOT", tmp_path)
    null = tmp_path / "runs" / "lr_sensitivity_bf16_null"
    grid_logs.quadratic_grid(null, "C", [manifest.SEED_REGIME_LR], [42, 123], {"C": 2.68e-3}, threads=1)
    grid_logs.quadratic_grid(null, "C", [manifest.SEED_REGIME_LR], [42], {"C": 2.68e-3}, threads=2)
    grid_logs.quadratic_grid(null, "C", [manifest.SEED_REGIME_LR], [123], {"C": 2.68e-3}, threads=2,
                             bf16_mode="native")
    runs, left = lrs.read_runs([str(null)])
    assert sorted(r.run for r in runs) == ["C_lr2.68e-3_s123_t1", "C_lr2.68e-3_s42_t1", "C_lr2.68e-3_s42_t2"]
    assert "not made as declared: C_lr2.68e-3_s123_t2 (bf16 native)" in capsys.readouterr().err
    other = tmp_path / "elsewhere"  # a folder that is no grid's: read as it is
    grid_logs.quadratic_grid(other, "C", [manifest.SEED_REGIME_LR], [123], {"C": 2.68e-3}, bf16_mode="native")
    assert len(lrs.read_runs([str(other)])[0]) == 1


# --- the declared rules on in-memory grids (the audit of 2026-11-30: each of these once passed when broken) ---------

LRS9F = [float(x) for x in LRS9]
TITLES = {"A": "A: WD on Q/K", "B": "B: GaugeFix", "C": "C: no control", "Q": "QK-norm (C + RMSNorm)"}


def mem_grid(best: dict, seeds=SEEDS8, lrs=LRS9F, curvature=0.3, noise=0.01, **per_run):
    """Runs of conditions `best` (key -> best lr): 5 + curvature·(log10 lr − log10 best)² + seed noise, A the
    reference of every other; per_run[(key, lr, seed)] = dict of Run fields to set on that run."""
    rng = np.random.default_rng(1)
    out = []
    for seed in seeds:
        for lr in lrs:
            for k, b in best.items():
                v = 5.0 + curvature * (math.log10(lr) - math.log10(b)) ** 2 + noise * rng.random()
                r = lrs_run(k, lr, seed, v)
                for f, x in per_run.get("cells", {}).get((k, lr, seed), {}).items():
                    setattr(r, f, x)
                out.append(r)
    return out


def lrs_run(k, lr, seed, v):
    return lrs.Run(k, lr, seed, v, False, 9.9, key=k, title=TITLES[k], reference="" if k == "A" else "A",
                   precision="fp32", threads=1)


def row_of(lines, k):
    return [c.strip() for c in next(ln for ln in lines if ln.startswith(f"| {TITLES[k]} |")).split("|")]


def test_the_own_optimum_verdict_is_withheld_where_the_grids_edge_cuts_a_window():
    # the same curvature: A's optimum inside, Q's one step from the edge (its ±1 decade window holds 4 lrs, not 5,
    # and its mean is biased low): Q − A would read "differ"; the verdict is withheld and says why
    runs = mem_grid({"A": LRS9F[4], "Q": LRS9F[1]})
    q = row_of(lrs.table_lines(runs, "synthetic"), "Q")
    assert q[7] == "no verdict (the ±1 decade window cut by the grid's edge in 8/8 seeds of Q)", q[7]
    assert "8/8 whose ±1-decade window the grid's edge or a missing run cuts" in q[8] and "0/8 seeds at an edge" in q[8]
    assert not q[4].startswith("no verdict")  # Wortsman's mean over the whole grid is still judged
    L0 = lr_grid.initial_loss(runs)  # against its logged reference, A, paired by seed
    want = np.mean(stats.sensitivity_per_seed(lrs.grid(runs, "Q", L0)[2]) -
                   stats.sensitivity_per_seed(lrs.grid(runs, "A", L0)[2]))
    assert want > 0.05 and math.isclose(float(q[3].split()[0]), want, rel_tol=1e-2), (q[3], want)


def test_the_failure_rule_counts_stops_the_spike_rule_and_a_one_nat_excess_above_the_best_only():
    b = LRS9F[3]
    runs = mem_grid({"A": b}, noise=0.0)
    cell = {(r.lr, r.seed): r for r in runs}
    cell[(LRS9F[5], 42)].final_val = 5.0 + 0.9       # 0.9 nat above the best: not failed
    cell[(LRS9F[5], 123)].final_val = 5.0 + 1.1      # 1.1 nat: failed
    cell[(LRS9F[4], 456)].stable = False             # the spike rule, its loss fine: failed
    cell[(LRS9F[1], 789)].final_val = 5.0 + 1.5      # below the best lr a high loss is under-training: not failed
    cell[(LRS9F[0], 789)].final_val = 9.95           # even at the initial loss (an lr too small to leave it)
    cell[(LRS9F[6], 1001)].diverged = True           # stopped: failed
    cell[(LRS9F[6], 1001)].final_val = math.nan
    fails = lr_grid.failed(runs, "A", lr_grid.initial_loss(runs))
    assert not fails[(LRS9F[5], 42)] and fails[(LRS9F[5], 123)] and fails[(LRS9F[4], 456)]
    assert not fails[(LRS9F[1], 789)] and not fails[(LRS9F[0], 789)] and fails[(LRS9F[6], 1001)]
    assert sum(fails.values()) == 3 + sum(1 for (lr, _), f in fails.items() if f and lr >= LRS9F[7])  # the rest: top


def test_the_lr50_fit_takes_only_the_lrs_at_and_above_the_best():
    runs = mem_grid({"A": LRS9F[4]}, curvature=0.1)  # no loss failure anywhere
    for r in runs:
        if r.lr == LRS9F[0] and r.seed in (42, 123):
            r.stable = False  # spike-rule failures below the best lr only
    a = row_of(lrs.table_lines(runs, "synthetic"), "A")
    assert a[9] == "2/72"
    assert a[10] == "— (no run at or above the best lr failed: lr50 above the grid (> 1))", a[10]


def test_an_lr50_that_falls_with_lr_is_not_given():
    runs = mem_grid({"A": LRS9F[2]}, curvature=0.1)
    failing = {LRS9F[4]: 6, LRS9F[5]: 5, LRS9F[6]: 3, LRS9F[7]: 1}  # fewer fail the larger the lr
    for r in runs:
        if r.lr in failing and SEEDS8.index(r.seed) < failing[r.lr]:
            r.stable = False
    a = row_of(lrs.table_lines(runs, "synthetic"), "A")
    assert a[10].startswith("— (failure does not rise with lr at and above the best: slope -"), a[10]


def test_pairs_follow_seeds_when_a_middle_seed_is_missing_and_the_reference_is_the_logged_one():
    seeds = [1, 2, 3, 4, 5]
    rng = np.random.default_rng(7)
    runs = []
    for s in seeds:  # B's curvature differs per seed, so a pair shifted by one seed would differ
        for lr in LRS9F:
            runs.append(lrs_run("A", lr, s, 5 + 0.3 * (math.log10(lr) + 2.5) ** 2))
            if s != 3:
                runs.append(lrs_run("B", lr, s, 5 + (0.1 + 0.1 * s) * (math.log10(lr) + 2.5) ** 2 + 0.01 * rng.random()))
    x, y = lrs.paired_by_seed(runs, "B", "A", 9.9)
    want = {s: stats.sensitivity_per_seed(lrs.grid([r for r in runs if r.seed == s], "B", 9.9)[2])[0]
            for s in (1, 2, 4, 5)}
    assert np.allclose(x, [want[s] for s in (1, 2, 4, 5)])
    a_sens = stats.sensitivity_per_seed(lrs.grid([r for r in runs if r.seed == 1], "A", 9.9)[2])[0]
    assert np.allclose(y, a_sens)


def test_a_condition_with_a_seed_fewer_withholds_every_verdict_and_one_lacking_an_lr_is_not_compared():
    runs = [r for r in mem_grid({"A": LRS9F[3], "B": LRS9F[3], "C": LRS9F[3]}) if not (r.cond == "C" and r.seed == 4004)]
    lines = lrs.table_lines(runs, "synthetic")
    assert row_of(lines, "B")[4] == row_of(lines, "B")[7] == "no verdict (a slice)"  # C has 7 whole seeds
    runs = [r for r in mem_grid({"A": LRS9F[3], "B": LRS9F[3]}) if not (r.cond == "B" and r.lr == 1.0)]
    b = row_of(lrs.table_lines(runs, "synthetic"), "B")
    assert b[4] == b[7] == "no verdict (no run at lr 1 in B or A)", b[4]


def test_a_run_given_twice_counts_once_and_two_results_for_one_cell_are_refused():
    a, again, other, seed2 = (lrs_run("A", 0.1, 1, 5.0), lrs_run("A", 0.1, 1, 5.0), lrs_run("A", 0.1, 1, 5.5),
                              lrs_run("A", 0.1, 2, 5.1))
    kept = lrs.distinct([a, again, seed2])
    assert len(kept) == 2 and kept[0] is a and kept[1] is seed2
    t2 = lrs_run("A", 0.1, 1, 5.2)
    t2.threads = 2  # another thread count: another run (the null's pairs)
    assert len(lrs.distinct([a, t2])) == 2
    try:
        lrs.distinct([a, other])
        assert False, "two results for one cell were accepted"
    except ValueError as e:
        assert "condition A at lr 0.1, seed 1 is given twice with different final losses" in str(e)


def test_a_pair_that_ran_the_same_lrs_is_compared_while_another_condition_ran_more():
    runs = [r for r in mem_grid({"A": LRS9F[3], "B": LRS9F[3], "C": LRS9F[3]}) if not (r.cond in "AB" and r.lr == 1.0)]
    b = row_of(lrs.table_lines(runs, "synthetic"), "B")
    assert not b[4].startswith("no verdict") and not b[7].startswith("no verdict"), (b[4], b[7])
    c = row_of(lrs.table_lines(runs, "synthetic"), "C")
    assert c[4] == c[7] == "no verdict (no run at lr 1 in C or A)", c[4]


def test_failures_only_at_the_best_lr_give_no_lr50():
    runs = mem_grid({"A": LRS9F[3]}, curvature=0.1)
    for r in runs:
        if r.lr == LRS9F[3] and r.seed in SEEDS8[:3]:
            r.stable = False  # the spike rule at the best lr only: failure falls with lr above it
    a = row_of(lrs.table_lines(runs, "synthetic"), "A")
    assert a[10] == "— (failure does not rise with lr at and above the best: its failures at the smaller lrs, no lr50)"


def test_two_results_for_one_cell_end_the_figure_with_one_line(monkeypatch):
    def clash(items, sources=None):
        raise ValueError("condition A at lr 0.1, seed 1 is given twice with different final losses (x 5, y 5.5)")
    monkeypatch.setattr(lrs, "read_runs", clash)
    try:
        lrs.main(["a.csv", "b.csv"])
        assert False, "main went on"
    except SystemExit as e:
        assert str(e) == ("fig_lr_sensitivity.py: error: condition A at lr 0.1, seed 1 is given twice with different "
                          "final losses (x 5, y 5.5)")


def test_the_figure_reads_the_sensitivities_own_null_only_when_its_grid_is_whole(tmp_path, monkeypatch):
    """As the figure index does: part of the axis grid gives no estimate over fewer seeds, only how far it is."""
    import manifest
    main_dir, axis_dir = tmp_path / "g", tmp_path / "runs" / "lr_sensitivity_bf16_sens_null"
    grid_logs.quadratic_grid(main_dir, "AC", LRS9, SEEDS8, {"A": 2.68e-3, "C": 2.68e-3})
    grid_logs.quadratic_grid(axis_dir, "C", LRS9, SEEDS8[:2], {"C": 2.68e-3}, threads=2, noise=0.02)
    monkeypatch.setenv("GAUGELAB_FIGURES", str(tmp_path / "out"))
    lrs.main([str(main_dir), "--axis-null", str(axis_dir)])
    text = (tmp_path / "out" / "table_lr_sensitivity.md").read_text()
    assert f"18 of its {len(manifest.grid('lr_sensitivity_bf16_sens_null'))} runs present ({axis_dir}), read" in text
    assert "over the whole lr axis" not in text
