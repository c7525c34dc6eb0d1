"""stats.py against table values, brute-force enumeration, hand computations and fixed-seed coverage
simulations; each test fails if the formula it checks is wrong."""
from __future__ import annotations

import ast
import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stats

ANALYSIS = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- Student t

@pytest.mark.parametrize("p, df, table", [
    (0.975, 2, 4.302653), (0.975, 7, 2.364624), (0.975, 15, 2.131450),
    (0.95, 1, 6.313752), (0.995, 10, 3.169273), (0.95, 7, 1.894579), (0.975, 120, 1.979930),
])
def test_t_quantile_matches_table_values(p, df, table):
    assert abs(stats.t_quantile(p, df) - table) < 1e-5
    assert abs(stats.t_quantile(1 - p, df) + table) < 1e-5  # symmetry


def test_t_cdf_inverts_the_quantile_and_has_known_values():
    assert stats.t_quantile(0.5, 4) == 0.0
    assert abs(stats.t_cdf(1.0, 1) - 0.75) < 1e-12       # Cauchy: 1/2 + atan(1)/pi
    assert abs(stats.t_cdf(-1.0, 2) - (0.5 - 0.5 / math.sqrt(3))) < 1e-12  # df 2 closed form
    for df in (1, 2, 5, 30):
        for p in (0.001, 0.2, 0.9, 0.9999):
            assert abs(stats.t_cdf(stats.t_quantile(p, df), df) - p) < 1e-10 * max(1.0, 1 / p)
    assert math.isnan(stats.t_quantile(1.0, 3)) and math.isnan(stats.t_quantile(0.9, 0))


def test_t_and_incomplete_beta_agree_with_scipy_when_it_is_installed():
    sp = pytest.importorskip("scipy")
    import scipy.special
    import scipy.stats
    for a, b, x in itertools.product((0.5, 1.0, 3.5, 40.0), (0.5, 2.0, 7.0), (0.01, 0.3, 0.5, 0.9, 0.999)):
        assert abs(stats.betainc_reg(a, b, x) - scipy.special.betainc(a, b, x)) < 1e-12
    for df, t in itertools.product((1, 2, 3, 7, 15, 60, 500), (-8.0, -1.3, 0.0, 0.4, 2.1, 30.0)):
        assert abs(stats.t_cdf(t, df) - scipy.stats.t.cdf(t, df)) < 1e-12
    assert sp  # keeps the import used


def test_the_module_works_without_scipy():
    code = ("import sys; sys.modules['scipy'] = None; sys.path.insert(0, %r); import stats; "
            "r = stats.paired_difference([1, 2, 3, 4], [0, 0, 1, 1]); "
            "assert abs(stats.t_quantile(0.975, 7) - 2.364624) < 1e-5 and r.n == 4; "
            "l = stats.logistic_lr50([1, 1, 2, 2, 4, 4], [0, 1, 0, 0, 1, 1]); print('ok')") % str(ANALYSIS)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    tree = ast.parse((ANALYSIS / "stats.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.split(".")[0] == "scipy" for m in imported)


# ---------------------------------------------------------------- sign-flip p-value

def brute_signflip(d: np.ndarray) -> float:
    obs = abs(sum(d))
    pats = list(itertools.product((1, -1), repeat=len(d)))
    return sum(abs(sum(e * v for e, v in zip(s, d))) >= obs - 1e-12 for s in pats) / len(pats)


def test_signflip_all_positive_is_two_over_two_to_the_n():
    assert stats.paired_difference([1.1, 2.0, 3.7], [0.0, 0.5, 1.0]).p_signflip == 2 / 8 == 0.25
    d = np.array([0.3, 1.0, 2.0, 0.1, 5.0, 0.7, 0.2, 0.9])
    assert stats.paired_difference(d, np.zeros(8)).p_signflip == 2 / 256
    assert stats.paired_difference(-d, np.zeros(8)).p_signflip == 2 / 256  # two-sided


def test_signflip_matches_brute_force_enumeration():
    rng = np.random.default_rng(3)
    for n in range(1, 11):
        d = rng.normal(0.4, 1.0, n)
        p, exact = stats.signflip_p(d)
        assert exact and p == brute_signflip(d)
    # ties: [1, 1, 2] has sums ±4 (2 patterns) and 0 (4 patterns) and ±2 (2 patterns)
    assert stats.signflip_p(np.array([1.0, 1.0, -2.0]))[0] == 1.0
    assert stats.signflip_p(np.array([1.0, 1.0, 2.0]))[0] == 2 / 8
    assert stats.signflip_p(np.array([0.1, 0.2, 0.3]))[0] == 2 / 8  # rounding of equal sums is a tie
    assert stats.signflip_p(np.zeros(5))[0] == 1.0
    assert math.isnan(stats.signflip_p(np.array([]))[0])


def test_signflip_random_flips_above_twenty_and_their_agreement_with_exact():
    d = np.linspace(0.5, 2.0, 25)
    p, exact = stats.signflip_p(d)
    assert not exact and p == 1 / (stats.N_RANDOM_FLIPS + 1)   # observed pattern counted, nothing else as extreme
    assert stats.signflip_p(d) == stats.signflip_p(d)          # fixed seed: reproducible
    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 1.0, 14)
    p_exact, _ = stats.signflip_p(d)
    p_mc, ex = stats.signflip_p(d, exact_max_n=0, n_random=40_000)
    assert not ex and abs(p_mc - p_exact) < 4 * math.sqrt(p_exact * (1 - p_exact) / 40_000) + 1e-4
    assert not stats.paired_difference(np.ones(21) + np.arange(21), np.zeros(21)).p_exact


def test_signflip_rejection_rate_under_the_null_is_at_most_alpha():
    rng = np.random.default_rng(11)
    ps = np.array([stats.signflip_p(rng.normal(0, 1, 8))[0] for _ in range(2000)])
    rate = np.mean(ps < 0.05)          # exact: P(p < 0.05) = 12/256 for continuous symmetric d
    assert abs(rate - 12 / 256) < 0.015


# ---------------------------------------------------------------- paired t-interval

def test_paired_difference_hand_computation():
    r = stats.paired_difference([3.0, 5.0, 4.0], [1.0, 2.0, 3.0])  # d = 2, 3, 1
    assert (r.mean, r.sd, r.n, r.level) == (2.0, 1.0, 3, 0.95)
    half = 4.302653 / math.sqrt(3)
    assert abs(r.lo - (2 - half)) < 1e-5 and abs(r.hi - (2 + half)) < 1e-5
    assert r.p_signflip == 0.25 and r.p_exact and not r.is_null


def test_t_interval_covers_the_true_mean_95_percent_of_the_time():
    rng = np.random.default_rng(2024)
    for n in (8, 3):
        cover = 0
        for _ in range(2000):
            r = stats.paired_difference(rng.normal(0.0, 1.0, n), np.zeros(n))
            cover += r.lo <= 0.0 <= r.hi
        assert abs(cover / 2000 - 0.95) < 0.015, (n, cover / 2000)


def test_three_seed_percentile_bootstrap_covers_about_75_percent():
    # the reason the module exists: the old interval, on the same kind of data, is far below 95 %
    rng = np.random.default_rng(7)
    x = rng.normal(0.0, 1.0, (2000, 3))
    idx = rng.integers(0, 3, (2000, 1000, 3))
    means = np.take_along_axis(x[:, None, :], idx, axis=2).mean(axis=2)
    lo, hi = np.percentile(means, [2.5, 97.5], axis=1)
    cover = np.mean((lo <= 0) & (0 <= hi))
    assert abs(cover - 0.75) < 0.03


def test_nan_pairs_are_dropped_and_small_n_gives_nan_intervals():
    r = stats.paired_difference([1.0, np.nan, 3.0, 4.0], [0.0, 1.0, np.nan, 2.0])  # pairs 0 and 3 left
    assert r.n == 2 and r.mean == 1.5
    one = stats.paired_difference([2.0], [1.0])
    assert one.n == 1 and one.mean == 1.0 and one.p_signflip == 1.0
    assert math.isnan(one.sd) and math.isnan(one.lo) and math.isnan(one.hi)
    none = stats.paired_difference([np.nan], [1.0])
    assert none.n == 0 and math.isnan(none.mean) and math.isnan(none.p_signflip)
    flat = stats.paired_difference([2.0, 3.0, 4.0], [1.0, 2.0, 3.0])
    assert flat.sd == 0.0 and flat.lo == flat.hi == 1.0
    with pytest.raises(ValueError):
        stats.paired_difference([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        stats.paired_difference([1.0, np.inf], [1.0, 2.0])
    with pytest.raises(ValueError):
        stats.paired_difference([1.0, 2.0], [1.0, 2.0], level=95)


def test_measured_null_is_the_paired_difference_flagged_as_null():
    a, b = [1.0, 2.0, 3.5, 2.2], [1.1, 1.8, 3.6, 2.2]
    r, z = stats.paired_difference(a, b), stats.measured_null(a, b, name="B - C")
    assert (z.mean, z.sd, z.n, z.lo, z.hi, z.p_signflip) == (r.mean, r.sd, r.n, r.lo, r.hi, r.p_signflip)
    assert z.is_null and not r.is_null and z.name == "B - C"
    assert z.text().endswith("(null)") and "n=4" in z.text() and "(null)" not in r.text()


# ---------------------------------------------------------------- TOST

def test_tost_same_distribution_equivalent_within_a_generous_margin_not_a_tiny_one():
    rng = np.random.default_rng(1)
    x = rng.normal(5.0, 1.0, 10)
    y = x + rng.normal(0.0, 0.05, 10)        # the same runs up to small noise
    wide, tiny = stats.tost(x, y, margin=0.5), stats.tost(x, y, margin=0.001)
    assert wide.equivalent and wide.p < 0.05
    assert not tiny.equivalent and tiny.p > 0.05
    d = x - y
    se = d.std(ddof=1) / math.sqrt(10)
    t90 = stats.t_quantile(0.95, 9)                  # the 90 % interval at level 0.95
    assert abs(wide.lo - (d.mean() - t90 * se)) < 1e-12 and abs(wide.hi - (d.mean() + t90 * se)) < 1e-12
    assert abs(wide.p_upper - stats.t_cdf((d.mean() - 0.5) / se, 9)) < 1e-12
    assert wide.p == max(wide.p_lower, wide.p_upper) and wide.alpha == pytest.approx(0.05)


def test_tost_interval_rule_and_p_value_rule_agree():
    rng = np.random.default_rng(9)
    for _ in range(300):
        n = int(rng.integers(2, 12))
        x, y = rng.normal(0, 1, n), rng.normal(rng.normal(0, 0.3), 1, n)
        t = stats.tost(x, y, margin=float(rng.uniform(0.1, 2.0)))
        assert t.equivalent == (t.p < 0.05)


def test_tost_edge_cases():
    same = [1.0, 2.0, 3.0]
    t = stats.tost(same, same, margin=1e-9)          # literally identical: sd 0, a point interval at 0
    assert t.equivalent and t.lo == t.hi == 0.0 and t.p == 0.0
    assert not stats.tost([1.0, 2.0, 3.0], [0.0, 1.0, 2.0], margin=1.0).equivalent  # d ≡ 1, not < 1
    small = stats.tost([1.0], [1.0], margin=1.0)
    assert not small.equivalent and math.isnan(small.p)
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError):
            stats.tost(same, same, margin=bad)


# ---------------------------------------------------------------- verdict

def test_verdict_returns_each_outcome():
    rng = np.random.default_rng(4)
    y = rng.normal(3.0, 1.0, 8)
    big = y + 1.0 + rng.normal(0, 0.05, 8)       # a clear shift on all 8 seeds
    tiny = y + rng.normal(0, 0.01, 8)            # the same up to noise
    noisy = y + rng.normal(0, 1.0, 8)            # too noisy to say
    for x, want in ((big, "differ"), (tiny, "equivalent"), (noisy, "undecided")):
        v = stats.verdict(stats.paired_difference(x, y), stats.tost(x, y, margin=0.1))
        assert v == want
    assert stats.verdict(stats.paired_difference(tiny, y), None) == "undecided"  # no margin, no equivalence


def test_three_seeds_can_never_differ_at_alpha_005():
    x, y = np.array([10.0, 11.0, 12.0]), np.array([0.0, 0.0, 0.0])
    r = stats.paired_difference(x, y)
    assert r.lo > 0 and r.p_signflip == 0.25
    assert stats.verdict(r, stats.tost(x, y, margin=0.1)) == "undecided"


def test_verdict_rejects_mismatched_levels_and_data():
    x, y = [1.0, 2.0, 3.0, 4.0], [1.0, 2.5, 2.0, 4.2]
    with pytest.raises(ValueError):
        stats.verdict(stats.paired_difference(x, y, level=0.9), stats.tost(x, y, 0.5))
    with pytest.raises(ValueError):
        stats.verdict(stats.paired_difference(x, y), stats.tost(x, y, 0.5, level=0.9))
    with pytest.raises(ValueError):
        stats.verdict(stats.paired_difference(x, y), stats.tost(y, x, 0.5))
    assert stats.verdict(stats.paired_difference(x, y, level=0.9), stats.tost(x, y, 0.5, level=0.9),
                         alpha=0.1) in ("differ", "equivalent", "undecided")


def test_rule_text_is_one_line_naming_the_thresholds():
    t = stats.rule_text()
    assert "\n" not in t and "0.05" in t and "95 %" in t and "90 %" in t
    for word in ("differ", "equivalent", "undecided", "sign-flip", "TOST"):
        assert word in t
    assert "±0.02" in stats.rule_text(margin=0.02)


# ---------------------------------------------------------------- lr at 50 % failure

def simulate(rng: np.random.Generator, x50: float = -2.0, slope: float = 3.0, per_lr: int = 20):
    lrs = np.repeat(np.logspace(-3, -1, 9), per_lr)
    p = 1.0 / (1.0 + np.exp(-slope * (np.log10(lrs) - x50)))
    return lrs, (rng.random(lrs.size) < p).astype(int)


def test_logistic_lr50_recovers_a_known_lr50_within_its_interval():
    lrs, failed = simulate(np.random.default_rng(0))
    r = stats.logistic_lr50(lrs, failed)
    assert not r.separated and r.reason == "" and r.method == "wald-delta" and r.n_runs == 180
    assert r.lo < 1e-2 < r.hi and abs(r.log10_lr50 + 2.0) < 0.2
    assert r.lo < r.lr50 < r.hi and abs(math.log10(r.lr50) - r.log10_lr50) < 1e-12
    assert 1.5 < r.slope < 5.0
    # the fit is the MLE: the score equations vanish
    x = np.log10(lrs)
    p = 1.0 / (1.0 + np.exp(-(r.intercept + r.slope * x)))
    assert abs(np.sum(failed - p)) < 1e-8 and abs(np.sum((failed - p) * x)) < 1e-8
    assert abs(r.intercept + r.slope * r.log10_lr50) < 1e-9


def test_logistic_lr50_wald_interval_coverage_and_standard_error():
    # lr50 off the grid's centre, so the intercept-slope covariance term of the delta method matters
    rng = np.random.default_rng(12)
    rs = [stats.logistic_lr50(*simulate(rng, x50=-2.7, per_lr=10)) for _ in range(300)]
    assert not any(r.separated for r in rs)
    cover = np.mean([r.log10_lo <= -2.7 <= r.log10_hi for r in rs])
    assert 0.90 <= cover <= 0.99
    se = np.median([(r.log10_hi - r.log10_lo) / (2 * 1.959964) for r in rs])
    spread = np.std([r.log10_lr50 for r in rs])   # the estimator's actual sampling sd
    assert abs(se / spread - 1) < 0.2


def test_logistic_lr50_flags_separation_with_the_bracket():
    lrs = [1e-3, 1e-3, 3e-3, 3e-3, 1e-2, 1e-2, 3e-2, 3e-2]
    r = stats.logistic_lr50(lrs, [0, 0, 0, 0, 1, 1, 1, 1])
    assert r.separated and math.isnan(r.lr50) and (r.lo, r.hi) == (3e-3, 1e-2) and "separated" in r.reason
    q = stats.logistic_lr50(lrs, [0, 0, 0, 0, 0, 1, 1, 1])  # quasi-complete: 1e-2 mixed
    assert q.separated and (q.lo, q.hi) == (3e-3, 3e-2)
    rev = stats.logistic_lr50(lrs, [1, 1, 1, 1, 0, 0, 0, 0])  # failing at small lr
    assert rev.separated and (rev.lo, rev.hi) == (3e-3, 1e-2)
    ok = stats.logistic_lr50(lrs, [0, 0, 0, 1, 0, 1, 1, 1])  # overlap: a proper fit
    assert not ok.separated and 3e-3 < ok.lr50 < 3e-2
    # quasi-complete at the grid's top, as a 1-nat rule met by some seeds at lr 1 only: fewer than half failed
    # there, so lr50 lies above the grid, not "between" it and NaN; more than half: below the top
    top = [0.373] * 4 + [1.0] * 4
    few = stats.logistic_lr50(top, [0, 0, 0, 0, 1, 0, 0, 0])
    assert few.separated and few.lo == 1.0 and math.isnan(few.hi)
    assert "1 of 4 failed at 1" in few.reason and "the bracket puts lr50 above 1, the largest lr fitted" in few.reason
    assert "larger lr than every success" not in few.reason  # lr 1 holds both outcomes
    most = stats.logistic_lr50(top, [0, 0, 0, 0, 1, 1, 1, 0])
    assert most.separated and (most.lo, most.hi) == (0.373, 1.0) and "puts lr50 between 0.373 and 1" in most.reason
    assert not few.falling and not most.falling
    low = stats.logistic_lr50(top, [1, 0, 0, 0, 0, 0, 0, 0])  # failing at the smaller lr, 1 of 4 there
    assert low.separated and math.isnan(low.lo) and low.hi == 0.373 and "puts lr50 below 0.373" in low.reason
    assert low.falling


def test_logistic_lr50_outside_the_grid_and_degenerate_inputs():
    lrs = [1e-3, 1e-2, 1e-1]
    none = stats.logistic_lr50(lrs, [0, 0, 0])
    assert math.isnan(none.lr50) and "no run failed" in none.reason and none.lo == 1e-1
    every = stats.logistic_lr50(lrs, [True, True, True])
    assert math.isnan(every.lr50) and "every run failed" in every.reason and every.hi == 1e-3
    flat = stats.logistic_lr50([1e-3, 1e-3, 1e-2, 1e-2], [0, 1, 0, 1])
    assert math.isnan(flat.lr50) and "slope 0" in flat.reason
    single = stats.logistic_lr50([1e-2, 1e-2], [0, 1])
    assert math.isnan(single.lr50) and single.reason
    dropped = stats.logistic_lr50([1e-3, np.nan, 1e-2], [0, 1, 1])
    assert dropped.n_runs == 2 and dropped.separated
    with pytest.raises(ValueError):
        stats.logistic_lr50([1e-3, 1e-2], [0, 2])
    with pytest.raises(ValueError):
        stats.logistic_lr50([0.0, 1e-2], [0, 1])


# ---------------------------------------------------------------- lr sensitivity per seed

def test_sensitivity_per_seed_hand_computation():
    L = np.array([[1.0, 2.0],
                  [0.5, 3.0],
                  [2.0, np.nan]])
    s = stats.sensitivity_per_seed(L)
    assert s.shape == (2,)
    assert abs(s[0] - (0.5 + 0.0 + 1.5) / 3) < 1e-15 and abs(s[1] - (0.0 + 1.0) / 2) < 1e-15
    assert math.isnan(stats.sensitivity_per_seed(np.array([[1.0, np.nan], [2.0, np.nan]]))[1])
    # seed mean of per-seed sensitivities ≥ sensitivity of the seed-mean curve
    rng = np.random.default_rng(0)
    M = rng.normal(3, 0.3, (6, 5))
    curve = M.mean(axis=1)
    assert stats.sensitivity_per_seed(M).mean() >= np.mean(curve - curve.min())
    # paired across conditions by seed
    r = stats.paired_difference(stats.sensitivity_per_seed(M + 0.1 * np.arange(6)[:, None]),
                                stats.sensitivity_per_seed(M))
    assert r.n == 5
    with pytest.raises(ValueError):
        stats.sensitivity_per_seed(np.ones(3))
    with pytest.raises(ValueError):
        stats.sensitivity_per_seed(np.array([[1.0], [np.inf]]))


# ---------------------------------------------------------------- Fisher's exact test and its power

def test_rate_upper_is_the_clopper_pearson_bound():
    assert math.isclose(stats.rate_upper(0, 20), 1 - 0.05 ** (1 / 20), rel_tol=1e-12)   # k = 0: closed form
    assert stats.rate_upper(3, 3) == 1.0
    for k, n in ((1, 3), (5, 20), (19, 20)):  # at the bound, P(X <= k) is the tail 1 - level
        r = stats.rate_upper(k, n)
        assert k / n < r < 1
        assert math.isclose(sum(math.comb(n, i) * r ** i * (1 - r) ** (n - i) for i in range(k + 1)), 0.05,
                            rel_tol=1e-9)
    assert stats.rate_upper(0, 20, 0.99) > stats.rate_upper(0, 20) > stats.rate_upper(0, 60)
    assert stats.rate_upper(10, 20, 0.4) < 0.5  # a bound below k/n, at a level under one half
    assert 500 / 1200 < stats.rate_upper(500, 1200) < 0.45  # large n: no overflow
    with pytest.raises(ValueError):
        stats.rate_upper(4, 3)


def test_fisher_one_sided_p_is_the_hypergeometric_tail():
    assert math.isclose(stats.fisher_one_sided_p(3, 3, 0, 3), 1 / 20)          # C(3,3)C(3,0)/C(6,3)
    assert math.isclose(stats.fisher_one_sided_p(4, 8, 0, 8), 70 / 1820)       # C(8,4)/C(16,4)
    assert stats.fisher_one_sided_p(0, 5, 0, 5) == 1.0
    # against enumeration of the tables with the same margins
    k_a, n_a, k_b, n_b = 3, 6, 1, 7
    k = k_a + k_b
    tail = sum(math.comb(n_a, i) * math.comb(n_b, k - i) for i in range(k_a, min(k, n_a) + 1))
    assert math.isclose(stats.fisher_one_sided_p(k_a, n_a, k_b, n_b), tail / math.comb(n_a + n_b, k))


@pytest.mark.parametrize("n, quoted", [(3, 0.0), (8, 0.26), (20, 0.85)])
def test_fisher_power_at_one_third_against_zero_reproduces_the_quoted_values(n, quoted):
    """The audit's numbers: one-sided Fisher power at failure rates 1/3 (B) vs 0 (A), n seeds per arm. With 0 failures
    in A, the test rejects when B has at least k* failures (3 seeds: never, p = 1/20 is not < 0.05; 8: k* = 4; 20:
    k* = 5), so the power is the binomial tail P(Bin(n, 1/3) ≥ k*)."""
    power = stats.fisher_power(1 / 3, 0.0, n, n)
    assert abs(power - quoted) < 0.005, power
    kstar = next((k for k in range(n + 1) if stats.fisher_one_sided_p(k, n, 0, n) < 0.05), None)
    tail = 0.0 if kstar is None else sum(math.comb(n, k) * (1 / 3) ** k * (2 / 3) ** (n - k) for k in range(kstar, n + 1))
    assert math.isclose(power, tail, rel_tol=1e-12, abs_tol=1e-15)


# ---------------------------------------------------------------- failure by the loss, the own-optimum sensitivity

def test_failed_by_loss_is_one_nat_above_the_seeds_best_or_stopped():
    L = np.array([[5.0, 6.0], [5.9, 6.5], [6.0, np.nan]])  # [lr, seed]
    assert stats.failed_by_loss(L).tolist() == [[False, False], [False, False], [True, True]]


def _quadratic(x_best, n=6):
    x = np.arange(n, dtype=float)
    return 10 ** (x * 3 / 7 - 3), ((x - x_best) ** 2 * 0.3 + 5.0)[:, None] * np.ones((1, 4))


def test_sensitivity_around_the_own_optimum_flags_every_window_the_edge_cuts():
    """The same curvature in log lr, optimum at the grid's edge, one step from it, or inside: Wortsman's mean over the
    grid scores the edge 55/19 ≈ 2.9× the centred one (the audit's figure); the own-optimum window does not inflate
    it, but a window the edge cuts holds one side's far points only, so its mean is biased low: every such seed is
    flagged `cut` (at_edge only those whose best is the edge itself)."""
    lrs, centred = _quadratic(2.0)
    _, edge = _quadratic(0.0)
    _, near = _quadratic(1.0)
    w = stats.sensitivity_per_seed(edge) / stats.sensitivity_per_seed(centred)
    assert np.allclose(w, 55 / 19)
    c, e, n = (stats.sensitivity_around_optimum(L, lrs) for L in (centred, edge, near))
    assert not c.at_edge.any() and e.at_edge.all() and not n.at_edge.any()
    assert np.allclose(c.best_lr, lrs[2]) and np.allclose(e.best_lr, lrs[0]) and np.allclose(n.best_lr, lrs[1])
    assert np.all(c.window == 5) and np.all(e.window == 3) and np.all(n.window == 4)  # ±1 decade = ±2 steps of 3/7
    assert not c.cut.any() and e.cut.all() and n.cut.all()
    assert np.all(e.sensitivity < c.sensitivity) and np.all(n.sensitivity < c.sensitivity)  # biased low, flagged
    assert np.allclose(c.sensitivity, 0.3 * (4 + 1 + 0 + 1 + 4) / 5)


def test_sensitivity_around_optimum_leaves_out_missing_cells_and_checks_shapes():
    lrs, L = _quadratic(2.0)
    L[4, 0] = np.nan
    o = stats.sensitivity_around_optimum(L, lrs)
    assert o.window[0] == 4 and o.window[1] == 5
    assert o.cut[0] and not o.cut[1:].any()  # a missing run shortens the window too
    with pytest.raises(ValueError):
        stats.sensitivity_around_optimum(L, lrs[:3])
