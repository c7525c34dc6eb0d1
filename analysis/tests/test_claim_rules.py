"""The claim rules' building blocks (analysis/claim_rules.py): a paired part follows the claimed direction and needs
the minimum effect of interest; "not testable here" comes from a reference at its round-off floor or a premise that is
not yes, and never turns into "no"; the combination needs Holm's correction for a "partly" and none for a "yes"."""
from __future__ import annotations

import math

import numpy as np

import claim_rules as cr
from figure_decl import NOT_TESTABLE

SEEDS = range(8)


def test_paired_part_follows_the_claimed_direction():
    lower = [1.0 + 0.01 * s for s in SEEDS]
    higher = [v + 0.5 + 0.001 * s for s, v in zip(SEEDS, lower)]
    assert cr.paired(lower, higher, 0.1, "d", claimed="lower")[0] == "yes"
    assert cr.paired(higher, lower, 0.1, "d", claimed="lower")[0] == "no"
    same = [v + (0.001 if s % 2 else -0.001) for s, v in zip(SEEDS, lower)]
    assert cr.paired(same, lower, 0.1, "d")[0] == "no"            # equivalent within the margin
    assert cr.paired(lower[:3], higher[:3], 0.1, "d")[0] == "undecided"  # 3 seeds: the sign-flip p is ≥ 0.25
    assert cr.paired(lower, higher, 0.1, "d", claimed="lower").p == 2 / 256  # the part carries its exact p


def test_an_effect_below_the_margin_is_never_a_yes():
    base = np.array([1.0 + 0.01 * s for s in SEEDS])
    small = base - 0.02 - 0.001 * np.arange(8)  # resolved (every seed lower), but 0.02-0.03 < the margin 0.1
    w, text = cr.paired(small, base, 0.1, "d", claimed="lower")
    assert w == "no" and "equivalent" in text
    noisy = base - 0.05 + np.array([0.03, -0.03, 0.04, -0.04, 0.02, -0.02, 0.045, -0.045])  # resolved, not inside ±0.06
    w, text = cr.paired(noisy, base, 0.06, "d", claimed="lower")
    assert w == "undecided" and "minimum effect" in text, text


def test_a_reference_at_its_floor_is_not_testable_and_above_it_the_rule_decides():
    # proxy-like: every condition's drift ~1e-7 (float32 rounding); A − B would otherwise be forced to "no" (±0.01)
    a, b = [7.6e-8, 9e-8, 1.1e-7], [1.9e-7, 1.5e-7, 2.2e-7]
    part = cr.unless(cr.above_floor(max(a), 1e-5, "A's drift", "the proxy cannot show drift"),
                     lambda: cr.paired(a, b, 0.01, "A − B", claimed="higher"))
    assert part[0] == NOT_TESTABLE and "1.1e-07 ≤ floor 1e-05: the proxy cannot show drift" in part[1]
    assert cr.combine([part, part]).word == NOT_TESTABLE
    # where the effect shows, the same gate lets the rule speak: yes, no or undecided
    a8 = [0.02 + 0.003 * s for s in SEEDS]
    b8 = [2e-7] * 8
    gate = cr.above_floor(max(a8), 1e-5, "A's drift", "x")
    assert gate is None
    assert cr.unless(gate, lambda: cr.paired(a8, b8, 0.01, "A − B", claimed="higher"))[0] == "yes"
    assert cr.unless(gate, lambda: cr.paired(b8, a8, 0.01, "B − A", claimed="higher"))[0] == "no"
    assert cr.unless(gate, lambda: cr.paired(a8[:3], b8[:3], 0.01, "A − B", claimed="higher"))[0] == "undecided"
    assert cr.above_floor(float("nan"), 1e-5, "x", "y")[0] == NOT_TESTABLE  # nothing measured: nothing shown


def test_a_part_resting_on_a_premise_that_is_not_yes_is_not_testable():
    assert cr.premise(cr.Part("yes", "p"), "drift") is None
    gated = cr.unless(cr.premise(cr.Part("undecided", "p"), "drift at λ 0"), lambda: cr.Part("yes", "never"))
    assert gated[0] == NOT_TESTABLE and "drift at λ 0" in gated[1] and "undecided" in gated[1]


def test_combine_rule():
    y, n, u, t = cr.Part("yes", "a"), cr.Part("no", "b"), cr.Part("undecided", "c"), cr.Part(NOT_TESTABLE, "d")
    assert cr.combine([y, y]).word == "yes"
    assert cr.combine([y, n]).word == "partly"      # an exact check's yes counts as it is
    assert cr.combine([y, u]).word == "partly"
    assert cr.combine([n, u]).word == "no"
    assert cr.combine([u]).word == "undecided"
    assert cr.combine([]).word == "undecided"
    assert cr.combine([t, t]).word == NOT_TESTABLE
    assert cr.combine([y, t]).word == "partly"      # the testable part yes, the rest not shown here
    assert cr.combine([u, t]).word == "undecided"   # never "no" for lack of a test
    assert cr.combine([n, t]).word == "no"


def test_partly_needs_holm_and_an_all_yes_needs_no_correction():
    # two tested parts at p 0.03 and 0.04: each yes at alpha 0.05, so all-yes stands without correction ...
    y1, y2 = cr.Part("yes", "a", 0.03), cr.Part("yes", "b", 0.04)
    assert cr.combine([y1, y2]).word == "yes"
    # ... but "at least one yes" is a union over the parts: Holm at 0.05 needs the smallest p ≤ 0.025 (of 2) first
    assert cr.combine([y1, cr.Part("undecided", "c", 0.5)]).word == "undecided"
    v = cr.combine([y1, cr.Part("undecided", "c", 0.5)])
    assert "not after Holm over 2 parts" in v.detail
    assert cr.combine([cr.Part("yes", "a", 0.01), cr.Part("undecided", "c", 0.5)]).word == "partly"
    assert cr.holm_survivors([cr.Part("yes", "a", 0.01), cr.Part("yes", "b", 0.03), cr.Part("no", "c", 0.9)]) == \
        [True, False, False]  # 0.01 ≤ 0.05/3; 0.03 > 0.05/2 stops the step-down


def test_a_no_from_some_parts_needs_holm_too_and_an_all_no_none():
    n1, n2 = cr.Part("no", "a", 0.9, 0.04), cr.Part("no", "b", 0.9, 0.03)
    u = cr.Part("undecided", "c", 0.5, 0.5)
    assert cr.combine([n1, n2]).word == "no"              # every part no: a conjunction
    assert cr.combine([n1, u]).word == "undecided"        # one no at 0.04 of 2 parts: not after Holm (0.025)
    assert cr.combine([cr.Part("no", "a", 0.9, 0.01), u]).word == "no"
    assert cr.combine([cr.Part("no", "exact"), u]).word == "no"  # an exact check's no counts as it is
    many = [("p%d" % i, cr.Part("no", "x", 0.9, 0.04)) for i in range(2)] + [("u", u)]
    assert "of the no, 2 not after Holm" in cr.combine_many(many).detail


def test_fisher_part():
    assert cr.fisher_more_often(8, 8, 0, 8, "x")[0] == "yes"
    assert cr.fisher_more_often(1, 3, 0, 3, "x")[0] == "undecided"
    assert "p=1" in cr.fisher_more_often(0, 3, 0, 3, "x")[1]
    assert math.isclose(cr.fisher_more_often(3, 3, 0, 3, "x").p, 1 / 20)
    bounded = cr.fisher_more_often(0, 20, 0, 20, "x", bound_a="x's rate")
    assert bounded[0] == "undecided" and "x's rate ≤ 0.14" in bounded[1]  # 1 − 0.05^(1/20) = 0.139


def test_null_part_is_yes_only_when_the_null_is_zero_within_the_margin():
    x = np.array([1.0 + 0.1 * s for s in SEEDS])
    assert cr.null_part(x + 0.01 * np.array([1, -1] * 4), x, 1.0, "n")[0] == "yes"
    assert cr.null_part(x + 2.0, x, 1.0, "n")[0] == "no"


def test_equivalent_part_allows_a_small_resolved_difference_and_refuses_one_beyond_the_margin():
    x = np.array([1.0 + 0.1 * s for s in SEEDS])
    jitter = 0.01 * np.array([1, -1] * 4)
    assert cr.equivalent(x + 0.2 + jitter, x, 1.0, "e")[0] == "yes"  # resolved (0.2 ≠ 0) but inside the margin
    assert cr.null_part(x + 0.2 + jitter, x, 1.0, "n")[0] == "no"    # where a null would fail
    assert cr.equivalent(x + 2.0 + jitter, x, 1.0, "e")[0] == "no"
    assert cr.equivalent(x + 0.95 + 0.5 * np.array([1, -1] * 4), x, 1.0, "e")[0] == "undecided"
    assert cr.equivalent(x[:1], x[:1], 1.0, "e")[0] == "undecided"


def test_within_and_at_least_reject_non_finite():
    assert cr.within(float("nan"), 1.0, "x")[0] == "no"
    assert cr.at_least(float("inf"), 1.0, "x")[0] == "no"
    assert cr.within(-0.5, 1.0, "x")[0] == "yes"


def test_a_measured_null_is_printed_beside_a_verdict_and_never_changes_its_word():
    from figure_decl import Verdict
    v = Verdict("undecided", "λ 0.05 − λ 0: +0.011 [-0.016, +0.038] p=0.55 n=10 (undecided)")
    x = np.array([0.51, 0.52, 0.53, 0.50])
    out = cr.beside_null(v, x, x + np.array([1e-16, -1e-16, 0.0, 2e-16]), "sorted − dense")
    assert out.word == "undecided" and out.detail.startswith(v.detail)
    assert "; beside it, the measured null (sorted − dense): " in out.detail and "n=4 (null)" in out.detail
    resolved = cr.beside_null(Verdict("yes", "d"), x, x - 1.0, "a null that is not one")  # its size is shown, not judged
    assert resolved.word == "yes" and "+1 [+1, +1]" in resolved.detail
    one = cr.beside_value(Verdict("partly", "12.3 > 10 (no)"), "plain GD at K = 1", 2.43e-10)
    assert one.word == "partly" and one.detail.endswith("the measured null (plain GD at K = 1): 2.4e-10")
