"""The learning-rate-sensitivity statistic on hand-made grids: its value, the diverged-run rule, and
that the bootstrap interval collapses when every seed agrees and widens when they do not."""
from __future__ import annotations

import math

import numpy as np

import fig_lr_sensitivity as lrs


def test_sensitivity_is_the_mean_excess_over_the_best_learning_rate():
    L = np.array([[3.0, 3.0], [2.0, 2.0], [2.5, 2.5]])  # 3 lrs x 2 seeds
    assert math.isclose(lrs.sensitivity(L), (1.0 + 0.0 + 0.5) / 3)


def test_diverged_runs_count_at_the_initial_loss():
    runs = [lrs.Run("B", lr, seed, final, div, 10.0, np.array([]), np.array([]), np.array([]))
            for lr, seed, final, div in [(0.1, 1, 2.0, False), (1.0, 1, math.nan, True), (0.1, 2, 2.2, False),
                                         (1.0, 2, 3.0, False)]]
    lrs_, seeds, L = lrs.grid(runs, "B", 10.0)
    assert list(lrs_) == [0.1, 1.0] and seeds == [1, 2]
    assert L[1, 0] == 10.0 and L[1, 1] == 3.0
    assert math.isclose(lrs.sensitivity(L), ((2.1 - 2.1) + (6.5 - 2.1)) / 2)


def test_bootstrap_interval_is_a_point_when_seeds_agree_and_wide_when_they_do_not():
    rng = np.random.default_rng(1)
    same = np.array([[3.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    b = lrs.bootstrap(same, rng)
    assert np.ptp(b) == 0.0
    spread = np.array([[3.0, 2.0, 4.0], [2.0, 2.5, 1.0]])
    b = lrs.bootstrap(spread, rng)
    assert np.percentile(b, 97.5) - np.percentile(b, 2.5) > 0.1
    paired = lrs.bootstrap(spread, rng, ref=spread)  # a condition minus itself, seeds paired: exactly 0
    assert np.all(paired == 0.0)


def test_offset_start_runs_form_their_own_family_keyed_o():
    # --qk-gauge-init > 0: the same condition from a gauge-moved start is another curve, compared with oA.
    assert lrs.condition_of({"condition": "B", "qk-gauge-init": 1.0}) == "oB"
    assert lrs.condition_of({"condition": "B", "qk-gauge-init": 0}) == "B"
    assert lrs.condition_of({"condition": "A", "optimizer": "muon", "qk-gauge-init": 0.5}) == "oMA"
    assert lrs.condition_of({"condition": "D", "magnitude": "cap", "qk-gauge-init": 1}) == "oDcap"
    assert lrs.NAMES["oB"] == "B: GaugeFix, offset start"
    assert lrs.ORDER.index("oA") > lrs.ORDER.index("MC")


def test_every_handling_has_a_muon_key_and_muon_runs_are_not_merged_into_adamw_ones():
    # QK-norm and D's cap under Muon were keyed "Q" / "Dcap" (merged with AdamW's curves) before.
    assert lrs.condition_of({"condition": "C", "qk-norm": "rms", "optimizer": "muon"}) == "MQ"
    assert lrs.condition_of({"condition": "C", "qk-norm": "rms"}) == "Q"
    assert lrs.condition_of({"condition": "D", "magnitude": "cap", "optimizer": "muon"}) == "MDcap"
    assert lrs.condition_of({"condition": "E", "optimizer": "muon"}) == "ME"
    assert lrs.parts("oMQ") == ("o", True, "Q") and lrs.parts("E") == ("", False, "E")
    assert all("M" + b in lrs.ORDER and lrs.NAMES["M" + b].startswith("Muon, ") for b in lrs.BASES)
