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


def test_drift_rows_put_seed_000s_drift_beside_ours_and_leave_out_diverged_runs():
    def run(label, key, drift, diverged=False, muon=False):
        return lrs.Run(label, 0.1, 1, 2.0, diverged, 10.0, np.array([]), np.array([]), np.array([]), key=key,
                       title=label, muon=muon, drift=drift, eff_imbalance=0.3)
    runs = [run("A", "A", 1e-3), run("A", "A", 4e-3), run("A", "A", 9.0, diverged=True), run("B", "B", 0.0),
            run("MC", "C", 2e-3, muon=True), run("Q", "Q", math.nan)]
    info = {r.cond: r for r in runs}
    rows = lrs.drift_rows(runs, ["A", "B", "MC", "Q"], info)
    assert len(rows) == 3  # Q logged no drift (no multipliers)
    a, b, mc = rows
    assert "0.0025 [0.001, 0.004]" in a and "0.052 ± 0.027" in a and "| 13 |" in a  # 0.052 / 0.004; the diverged 9.0 left out
    assert "| 2 |" in a
    assert "the seed's is 0 too" in b
    assert "0.047" not in mc and "| — |" in mc  # Muon's C is not the seed's C


def test_a_seed_missing_a_learning_rate_is_left_out_of_the_grid_whole():
    def run(lr, seed, v):
        return lrs.Run("A", lr, seed, v, False, 10.0, np.array([]), np.array([]), np.array([]))
    runs = [run(0.1, 1, 2.0), run(1.0, 1, 3.0), run(0.1, 2, 1.0)]  # seed 2 has not run lr 1 yet
    lr, seeds, L = lrs.grid(runs, "A", 10.0)
    assert list(lr) == [0.1, 1.0] and seeds == [1] and L.shape == (2, 1)
