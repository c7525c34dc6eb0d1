"""Statistics behind every verdict of the figure and table scripts: paired differences over seeds,
equivalence within a declared margin, the measured null, the learning rate at 50 % failure, and the
per-seed learning-rate sensitivity. numpy and the standard library only (scipy is not required).

Verdicts (`verdict`, the rule printed by `rule_text` beside every one):

* "differ": the exact sign-flip p-value of the paired differences is below alpha AND the
  (1 − alpha) Student-t interval of the mean difference excludes 0. Both must agree: the sign-flip
  test assumes only that the differences are symmetric about 0 under the null; the t-interval
  assumes roughly normal differences and gives the size of the effect.
* "equivalent": two one-sided t-tests (TOST) at level alpha put the mean difference inside
  ±margin, i.e. the (1 − 2·alpha) t-interval lies inside (−margin, margin). The margin is declared
  before the runs; nothing here chooses it.
* "undecided": neither — too few seeds or too much seed noise to say either. Not evidence of no effect.

Why not a percentile bootstrap over 3 seeds: 3 seeds have only 10 distinct resamples, the 2.5 / 97.5
percentiles of the resampled means collapse to about the smallest and largest seed, and that range
covers the true mean only 1 − 2·(1/2)^3 = 75 % of the time (symmetric noise), not 95 %. The t-interval
has its stated coverage at any n ≥ 2 for normal differences (wide at small n: t_{0.975, 2} = 4.30).
The exact sign-flip test cannot be fooled by small n, it just cannot reject: its smallest two-sided
p-value is 2 / 2^n, so "differ" at alpha = 0.05 needs n ≥ 6 seeds (2/64 = 0.031; n = 3 gives 0.25).

NaN handling: paired functions drop a pair where either value is NaN and report the n that is left;
`logistic_lr50` drops runs with a NaN lr or outcome; `sensitivity_per_seed` leaves out NaN cells
per seed. Infinite values are rejected (clip diverged runs first).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

EXACT_MAX_N = 20           # sign-flip p-value by full enumeration of 2^n patterns up to this n
N_RANDOM_FLIPS = 100_000   # random sign patterns above it
FLIP_SEED = 0              # the fixed seed of those random patterns
_TIE_RTOL = 1e-12          # |S*| ≥ |S| − 1e-12·Σ|d| counts as "as extreme" (rounding of equal sums)


# ---------------------------------------------------------------- Student t without scipy

def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes §6.4)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a}, b={b}, x={x})")


def betainc_reg(a: float, b: float, x: float, xc: float | None = None) -> float:
    """Regularized incomplete beta I_x(a, b) = B(x; a, b) / B(a, b), a, b > 0, 0 ≤ x ≤ 1.

    xc = 1 − x may be passed when it is known more precisely than 1 − x. Continued fraction on
    I_x(a, b) if x < (a+1)/(a+b+2), else on 1 − I_{1−x}(b, a) (where each converges fast)."""
    xc = 1.0 - x if xc is None else xc
    if x <= 0.0:
        return 0.0
    if xc <= 0.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(xc))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, xc) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with df > 0 degrees of freedom: ½·I_{df/(df+t²)}(df/2, ½) for t ≥ 0."""
    if math.isnan(t) or not df > 0:
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * betainc_reg(0.5 * df, 0.5, df / (df + t * t), t * t / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with df degrees of freedom."""
    return t_sf(-t, df)


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with df > 0 degrees of freedom (e.g. t_quantile(0.975, 7) = 2.3646).

    Bisection on the upper tail t_sf (to ~1e-13 relative), using the symmetry t_p = −t_{1−p}."""
    if not (0.0 < p < 1.0) or not df > 0:
        return math.nan
    if p == 0.5:
        return 0.0
    q = 1.0 - p if p > 0.5 else p  # the upper-tail probability of |t|
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > q:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf(mid, df) > q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    t = 0.5 * (lo + hi)
    return t if p > 0.5 else -t


# ---------------------------------------------------------------- paired differences

@dataclass(frozen=True)
class PairedResult:
    """Mean of d = x − y over n complete pairs, its sample sd (ddof 1), the `level` t-interval
    [lo, hi], and the sign-flip p-value of "mean d = 0". is_null marks a measured null (zero by
    construction), name says what was compared."""
    mean: float
    sd: float
    n: int
    lo: float
    hi: float
    p_signflip: float
    level: float
    p_exact: bool = True   # False: p from N_RANDOM_FLIPS random patterns (n > EXACT_MAX_N)
    is_null: bool = False
    name: str = ""

    def text(self, spec: str = "+.3g") -> str:
        """One table cell: '+0.012 [-0.003, +0.027] p=0.031 n=8' (' (null)' appended for a measured null)."""
        p = f"p={self.p_signflip:.3g}" + ("" if self.p_exact else "~")
        s = f"{self.mean:{spec}} [{self.lo:{spec}}, {self.hi:{spec}}] {p} n={self.n}"
        return s + (" (null)" if self.is_null else "")


def _pairs(x, y) -> np.ndarray:
    """d = x − y over the pairs where both are non-NaN; shapes checked, infinities rejected."""
    x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired values need equal lengths (same seeds, same order): {x.size} vs {y.size}")
    if np.isinf(x).any() or np.isinf(y).any():
        raise ValueError("infinite value among the paired values (clip diverged runs before comparing)")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep] - y[keep]


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")


def signflip_p(d, exact_max_n: int = EXACT_MAX_N, n_random: int = N_RANDOM_FLIPS,
               seed: int = FLIP_SEED) -> tuple[float, bool]:
    """Two-sided sign-flip (paired permutation) p-value of "the differences d are symmetric about 0".

    Statistic S = Σ d_i (equivalently the mean). p = #{patterns ε ∈ {±1}^n : |Σ ε_i d_i| ≥ |S|} / 2^n,
    enumerating all 2^n patterns (the observed one included) when n ≤ exact_max_n: exact. Above it,
    p = (1 + #{random patterns as extreme}) / (n_random + 1) over n_random uniform patterns drawn
    with numpy's default_rng(seed): a valid p-value. Returns (p, exact); n = 0 gives (NaN, True).
    Sums equal up to rounding (within 1e-12·Σ|d|) count as ties, i.e. as extreme (conservative)."""
    d = np.asarray(d, dtype=float).ravel()
    n = d.size
    if n == 0:
        return math.nan, True
    s_obs = abs(float(d.sum()))
    thresh = s_obs - _TIE_RTOL * float(np.abs(d).sum())
    if n <= exact_max_n:
        sums = np.zeros(1)
        for v in d:  # all 2^n signed sums by doubling: 8 MB at n = 20
            sums = np.concatenate((sums + v, sums - v))
        return float(np.count_nonzero(np.abs(sums) >= thresh)) / sums.size, True
    rng = np.random.default_rng(seed)
    count, done = 0, 0
    while done < n_random:
        m = min(20_000, n_random - done)
        signs = rng.integers(0, 2, size=(m, n)) * 2 - 1
        count += int(np.count_nonzero(np.abs(signs @ d) >= thresh))
        done += m
    return (count + 1) / (n_random + 1), False


def paired_difference(x, y, level: float = 0.95, name: str = "") -> PairedResult:
    """Paired comparison of two conditions run on the same seeds (x[i], y[i] from seed i): d = x − y.

    mean d̄ = Σd/n, sd s = sqrt(Σ(d − d̄)²/(n−1)), interval d̄ ± t_{(1+level)/2, n−1}·s/√n (assumes
    the d_i are independent and roughly normal), p_signflip as in `signflip_p` (assumes only that d is
    symmetric about 0 under the null; exact for n ≤ 20). Pairs with a NaN on either side are dropped
    and n counts the rest. n < 2: sd, lo, hi are NaN (no spread to estimate); n = 1 still has the
    exact p = 1, n = 0 has mean and p NaN. sd = 0 gives the point interval [d̄, d̄]."""
    _check_level(level)
    d = _pairs(x, y)
    n = int(d.size)
    mean = float(d.mean()) if n else math.nan
    p, exact = signflip_p(d)
    if n < 2:
        return PairedResult(mean, math.nan, n, math.nan, math.nan, p, level, exact, False, name)
    sd = float(d.std(ddof=1))
    half = t_quantile(0.5 + 0.5 * level, n - 1) * sd / math.sqrt(n)
    return PairedResult(mean, sd, n, mean - half, mean + half, p, level, exact, False, name)


def measured_null(x_null_a, x_null_b, level: float = 0.95, name: str = "null") -> PairedResult:
    """`paired_difference` of a comparison that is zero by construction (B − C with B ≡ C, P − N, ...),
    marked is_null=True so a table prints it beside each difference: the spread a real difference has
    to beat. Same formula, assumptions and NaN handling as `paired_difference`."""
    r = paired_difference(x_null_a, x_null_b, level=level, name=name)
    return PairedResult(r.mean, r.sd, r.n, r.lo, r.hi, r.p_signflip, r.level, r.p_exact, True, name)


# ---------------------------------------------------------------- equivalence (TOST)

@dataclass(frozen=True)
class TostResult:
    """TOST of |mean(x − y)| < margin at level alpha: p = max(p_lower, p_upper); equivalent iff the
    (1 − 2·alpha) t-interval [lo, hi] lies inside (−margin, margin) (the same as p < alpha)."""
    mean: float
    lo: float
    hi: float
    margin: float
    p: float
    p_lower: float
    p_upper: float
    equivalent: bool
    alpha: float
    n: int


def tost(x, y, margin: float, level: float = 0.95) -> TostResult:
    """Two one-sided paired t-tests for equivalence of x and y within ±margin (margin declared before
    the runs; never chosen here). alpha = 1 − level.

    With d = x − y, se = s/√n, dof n − 1: p_lower = P(T ≥ (d̄ + margin)/se) tests H0: μ ≤ −margin,
    p_upper = P(T ≤ (d̄ − margin)/se) tests H0: μ ≥ margin; p = max of the two. Equivalent iff
    d̄ ± t_{1−alpha, n−1}·se, the (1 − 2·alpha) interval (90 % at level 0.95), lies strictly inside
    (−margin, margin). Assumes independent, roughly normal d. NaN pairs dropped; n < 2: p NaN, not
    equivalent. sd = 0: the interval is the point d̄ (equivalent iff |d̄| < margin)."""
    _check_level(level)
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"the equivalence margin must be a positive number declared in advance, got {margin}")
    alpha = 1.0 - level
    d = _pairs(x, y)
    n = int(d.size)
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return TostResult(mean, math.nan, math.nan, margin, math.nan, math.nan, math.nan, False, alpha, n)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se > 0:
        p_lower = t_sf((mean + margin) / se, n - 1)
        p_upper = t_cdf((mean - margin) / se, n - 1)
    else:
        p_lower = 0.0 if mean > -margin else 1.0
        p_upper = 0.0 if mean < margin else 1.0
    half = t_quantile(1.0 - alpha, n - 1) * se
    lo, hi = mean - half, mean + half
    return TostResult(mean, lo, hi, margin, max(p_lower, p_upper), p_lower, p_upper,
                      bool(lo > -margin and hi < margin), alpha, n)


# ---------------------------------------------------------------- the verdict

def rule_text(alpha: float = 0.05, margin: float | None = None) -> str:
    """The verdict rule in one line, to print beside every verdict."""
    m = f"±{margin:g}" if margin is not None else "±margin (declared in advance)"
    return (f"verdict: 'differ' if exact sign-flip p < {alpha:g} and the {100 * (1 - alpha):g} % paired "
            f"t-interval excludes 0; 'equivalent' if the {100 * (1 - 2 * alpha):g} % t-interval lies inside "
            f"{m} (TOST, alpha {alpha:g}); else 'undecided'")


def verdict(paired: PairedResult, tost_result: TostResult | None, alpha: float = 0.05) -> str:
    """"differ" if paired.p_signflip < alpha and 0 ∉ [paired.lo, paired.hi]; else "equivalent" if
    tost_result.equivalent; else "undecided" (also for NaN statistics or tost_result None, i.e. no
    margin declared). "differ" is checked first: an effect resolved as nonzero but smaller than the
    margin is reported as a difference (the interval shows its size).

    Raises ValueError if paired.level ≠ 1 − alpha or tost_result.alpha ≠ alpha (the rule fixes
    both), or if the two results are not of the same data (n or mean differ)."""
    if not math.isclose(paired.level, 1.0 - alpha, rel_tol=1e-9):
        raise ValueError(f"paired interval level {paired.level} does not match alpha {alpha} (needs {1 - alpha})")
    if tost_result is not None:
        if not math.isclose(tost_result.alpha, alpha, rel_tol=1e-9):
            raise ValueError(f"TOST alpha {tost_result.alpha} does not match alpha {alpha}")
        same_mean = (math.isnan(paired.mean) and math.isnan(tost_result.mean)) or \
            math.isclose(paired.mean, tost_result.mean, rel_tol=1e-12, abs_tol=1e-300)
        if tost_result.n != paired.n or not same_mean:
            raise ValueError("the paired result and the TOST result are of different data")
    if paired.p_signflip < alpha and (paired.lo > 0 or paired.hi < 0):
        return "differ"
    if tost_result is not None and tost_result.equivalent:
        return "equivalent"
    return "undecided"


# ---------------------------------------------------------------- lr at 50 % failure

@dataclass(frozen=True)
class Lr50Result:
    """lr at 50 % failure and its interval [lo, hi] (lr units; log10_* the same on log10(lr)).

    method "wald-delta": logistic MLE, Wald interval by the delta method. separated=True: no MLE
    exists; [lo, hi] is the bracket between the largest all-success lr and the smallest all-failure
    lr (narrowed to an lr holding both outcomes by its own failure fraction; no interval) and lr50 is
    NaN. reason is empty for a plain fit, else says why a value is NaN or extrapolated. intercept,
    slope: logit P(fail) = intercept + slope·log10(lr) (NaN when not fitted). falling: failure falls
    with lr (a fitted slope < 0, or separated with the failures at the smaller lrs)."""
    lr50: float
    lo: float
    hi: float
    log10_lr50: float
    log10_lo: float
    log10_hi: float
    intercept: float
    slope: float
    separated: bool
    reason: str
    level: float
    n_runs: int
    method: str = "wald-delta"
    falling: bool = False


def _lr50_nan(reason: str, level: float, n: int, lo: float = math.nan, hi: float = math.nan,
              separated: bool = False, method: str = "none", falling: bool = False) -> Lr50Result:
    def lg(v: float) -> float:
        return math.log10(v) if v > 0 else math.nan
    return Lr50Result(math.nan, lo, hi, math.nan, lg(lo), lg(hi), math.nan, math.nan, separated, reason,
                      level, n, method, falling)


def _logistic_mle(x: np.ndarray, y: np.ndarray, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Newton–Raphson (= IRLS for the canonical logit link) with step halving; returns (beta, cov)
    with beta = (a, b) for logit p = a + b·x and cov = (XᵀWX)^−1 at the MLE."""
    X = np.column_stack((np.ones_like(x), x))

    def loglik(beta: np.ndarray) -> float:
        eta = X @ beta
        return float(np.sum(y * eta - np.logaddexp(0.0, eta)))

    beta = np.zeros(2)
    ll = loglik(beta)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(X @ beta)))
        H = X.T @ (X * (p * (1.0 - p))[:, None])
        step = np.linalg.solve(H, X.T @ (y - p))
        t = 1.0
        while loglik(beta + t * step) < ll - 1e-12 and t > 1e-10:
            t *= 0.5
        beta = beta + t * step
        ll = loglik(beta)
        if np.max(np.abs(t * step)) < 1e-10:
            break
    else:
        raise ArithmeticError("logistic regression did not converge (near-separated data?)")
    p = 1.0 / (1.0 + np.exp(-(X @ beta)))
    return beta, np.linalg.inv(X.T @ (X * (p * (1.0 - p))[:, None]))


def logistic_lr50(lrs, failed, level: float = 0.95) -> Lr50Result:
    """Learning rate at which half the runs fail, from a logistic regression of failure (0/1, one per
    run) on x = log10(lr): logit P(fail | x) = a + b·x, x50 = −a/b, lr50 = 10^x50.

    Fit: maximum likelihood by Newton–Raphson/IRLS (x centred for conditioning). Interval: Wald on
    log10(lr50) by the delta method, Var(x50) = (Var a + 2·x50·Cov(a,b) + x50²·Var b) / b², then
    x50 ± z_{(1+level)/2}·se (normal quantile), mapped to lr by 10^(·); it assumes runs independent,
    the logit linear in log10(lr), and enough runs for the MLE to be near normal (it is symmetric in
    log10(lr) and can be optimistic with few runs per lr).

    Special cases (lr50 NaN, reason says which): no runs; a single lr; no run failed or every run
    failed (lr50 outside the grid; lo/hi give the grid's edge it lies beyond); no dependence on lr
    (slope 0); complete or quasi-complete separation (every failure at a larger lr than every success,
    or the reverse, sharing at most one lr): no MLE exists, separated=True, and [lo, hi] is the
    bracket between the largest lr at which all runs succeeded and the smallest at which all failed
    (NaN on a side with no such lr), narrowed to the shared lr on the side its failure fraction points
    to (fewer than half failed there: lr50 lies beyond it). A fitted lr50 outside the grid is returned
    with a reason saying it is extrapolated (NaN when it is beyond a float's range). Runs with a NaN lr
    or outcome are dropped; lr ≤ 0 or outcomes other than 0/1 raise ValueError."""
    _check_level(level)
    lr = np.asarray(lrs, dtype=float).ravel()
    f = np.asarray(failed, dtype=float).ravel()
    if lr.shape != f.shape:
        raise ValueError(f"one outcome per run: {lr.size} lrs vs {f.size} outcomes")
    keep = ~(np.isnan(lr) | np.isnan(f))
    lr, f = lr[keep], f[keep]
    if np.any(lr <= 0) or np.isinf(lr).any():
        raise ValueError("learning rates must be positive and finite")
    if not np.all((f == 0) | (f == 1)):
        raise ValueError("failed must be 0/1 (or bool) per run")
    n = int(lr.size)
    if n == 0:
        return _lr50_nan("no runs", level, n)
    x = np.log10(lr)
    grid = np.unique(lr)
    if f.sum() == 0:
        return _lr50_nan(f"no run failed: lr50 lies above the grid (> {grid[-1]:g})", level, n, lo=grid[-1])
    if f.sum() == n:
        return _lr50_nan(f"every run failed: lr50 lies below the grid (< {grid[0]:g})", level, n, hi=grid[0])
    if grid.size < 2:
        return _lr50_nan("a single learning rate: no slope to fit", level, n)
    fail_x, ok_x = x[f == 1], x[f == 0]
    all_ok = np.array([np.all(f[lr == g] == 0) for g in grid])
    all_fail = np.array([np.all(f[lr == g] == 1) for g in grid])
    if ok_x.max() <= fail_x.min() or fail_x.max() <= ok_x.min():
        rising = bool(ok_x.max() <= fail_x.min())  # failures at the larger lrs
        if rising:
            lo = float(grid[all_ok].max()) if all_ok.any() else math.nan
            hi = float(grid[all_fail].min()) if all_fail.any() else math.nan
            how = "every failure at a larger lr than every success"
        else:
            lo = float(grid[all_fail].max()) if all_fail.any() else math.nan
            hi = float(grid[all_ok].min()) if all_ok.any() else math.nan
            how = "every failure at a smaller lr than every success"
        mixed = grid[~all_ok & ~all_fail]  # quasi-complete separation: one lr holds both outcomes
        if mixed.size:
            m = float(mixed[0])
            at = lr == m
            k, t = int(f[at].sum()), int(at.sum())
            below, above = ("succeeded", "failed") if rising else ("failed", "succeeded")
            how = ", ".join([f"{k} of {t} failed at {m:g}"] + [f"every run below it {below}"] * bool((grid < m).any())
                            + [f"every run above it {above}"] * bool((grid > m).any()))
            # half fail on the side of m its own failure fraction points to (exactly half: at m, inside the bracket)
            if 2 * k < t:
                lo, hi = (m, hi) if rising else (lo, m)
            elif 2 * k > t:
                lo, hi = (lo, m) if rising else (m, hi)
        where = (f"the bracket puts lr50 between {lo:g} and {hi:g}" if math.isfinite(lo) and math.isfinite(hi) else
                 f"the bracket puts lr50 above {lo:g}" + (", the largest lr fitted" if lo == grid[-1] else "")
                 if math.isfinite(lo) else
                 f"the bracket puts lr50 below {hi:g}" + (", the smallest lr fitted" if hi == grid[0] else ""))
        return _lr50_nan(f"separated ({how}): no MLE; {where} (no interval)", level, n, lo=lo, hi=hi,
                         separated=True, method="bracket", falling=not rising)
    xm = float(x.mean())
    (a, b), cov = _logistic_mle(x - xm, f)
    if abs(b) < 1e-10 * max(1.0, abs(a)):
        return _lr50_nan("failure does not depend on lr (slope 0): no lr50", level, n)
    x50c = -a / b
    var = (cov[0, 0] + 2.0 * x50c * cov[0, 1] + x50c * x50c * cov[1, 1]) / (b * b)
    z = NormalDist().inv_cdf(0.5 + 0.5 * level)
    x50 = x50c + xm
    half = z * math.sqrt(max(var, 0.0))
    reason = ""
    if not (x.min() <= x50 <= x.max()):
        reason = f"lr50 10^{x50:.3g} extrapolated outside the lrs fitted [{grid[0]:g}, {grid[-1]:g}]"
    if not abs(x50) + half < 300:  # the value or its interval beyond a float's range: none to give
        return Lr50Result(math.nan, math.nan, math.nan, x50, x50 - half, x50 + half, float(a - b * xm), float(b),
                          False, reason or f"the interval of log10 lr50 spans ±{half:.3g} decades: unbounded",
                          level, n, falling=b < 0)
    return Lr50Result(10 ** x50, 10 ** (x50 - half), 10 ** (x50 + half), x50, x50 - half, x50 + half,
                      float(a - b * xm), float(b), False, reason, level, n, falling=b < 0)


# ---------------------------------------------------------------- lr sensitivity per seed

def sensitivity_per_seed(L) -> np.ndarray:
    """Wortsman et al. (2023) learning-rate sensitivity, one value per seed: for a [n_lr, n_seed] array
    of final losses (diverged runs already clipped by the caller, e.g. to the initial loss),
    sens[s] = mean over lrs of (L[:, s] − min over lrs of L[:, s]).

    Per seed, so the vectors of two conditions run on the same seeds pair by seed for
    `paired_difference`. NaN cells (a missing lr) are left out of that seed's mean and minimum; a
    seed with no finite cell gives NaN. Comparisons are fair only over the same lr grid. Its mean over
    seeds is ≥ the sensitivity of the seed-mean curve (mean of minima ≤ minimum of means), equally so
    for both conditions of a paired comparison. Infinite values raise ValueError."""
    L = np.asarray(L, dtype=float)
    if L.ndim != 2:
        raise ValueError(f"L must be [n_lr, n_seed], got shape {L.shape}")
    if np.isinf(L).any():
        raise ValueError("infinite loss in L (clip diverged runs before computing sensitivity)")
    out = np.full(L.shape[1], math.nan)
    for s in range(L.shape[1]):
        col = L[:, s][~np.isnan(L[:, s])]
        if col.size:
            out[s] = float(np.mean(col - col.min()))
    return out


# ---------------------------------------------------------------- event counts: Fisher's exact test and its power

def fisher_one_sided_p(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """One-sided Fisher exact p of "a's event rate exceeds b's": with the k = k_a + k_b events fixed, the
    hypergeometric P(K_a ≥ k_a) = Σ_{i ≥ k_a} C(n_a, i)·C(n_b, k − i) / C(n_a + n_b, k). No event at all gives 1."""
    if not (0 <= k_a <= n_a and 0 <= k_b <= n_b):
        raise ValueError(f"event counts must lie in [0, n]: {k_a}/{n_a}, {k_b}/{n_b}")
    k = k_a + k_b
    total = math.comb(n_a + n_b, k)
    return sum(math.comb(n_a, i) * math.comb(n_b, k - i) for i in range(k_a, min(k, n_a) + 1)) / total


def fisher_power(rate_a: float, rate_b: float, n_a: int, n_b: int, alpha: float = 0.05) -> float:
    """Power of the one-sided Fisher test (fisher_one_sided_p < alpha, strictly) when a's runs fail independently
    with probability rate_a and b's with rate_b: Σ over all outcomes (k_a, k_b) of their binomial probabilities
    where the test rejects. Exact (full enumeration of the (n_a + 1)(n_b + 1) outcomes)."""
    if not (0 <= rate_a <= 1 and 0 <= rate_b <= 1):
        raise ValueError(f"rates must lie in [0, 1], got {rate_a}, {rate_b}")

    def binom(n: int, k: int, r: float) -> float:
        return math.comb(n, k) * r ** k * (1 - r) ** (n - k)

    return sum(binom(n_a, ka, rate_a) * binom(n_b, kb, rate_b)
               for ka in range(n_a + 1) for kb in range(n_b + 1) if fisher_one_sided_p(ka, n_a, kb, n_b) < alpha)


def rate_upper(k: int, n: int, level: float = 0.95) -> float:
    """The exact one-sided upper confidence bound (Clopper–Pearson) of an event rate seen k times in n independent
    runs: the rate r at which P(X ≤ k | n, r) = 1 − level (1 when k = n; 1 − (1 − level)^(1/n) when k = 0). How
    large a rate the count still allows: what a count with no events says, where a test between two arms cannot."""
    if not (0 <= k <= n and n >= 1) or not 0 < level < 1:
        raise ValueError(f"need 0 <= k <= n, n >= 1 and 0 < level < 1, got k={k}, n={n}, level={level}")
    if k == n:
        return 1.0

    def cdf(r: float) -> float:  # P(X <= k), decreasing in r; its terms in logs (no overflow at large n)
        if r <= 0.0:
            return 1.0
        lr, l1r = math.log(r), math.log1p(-r)
        return sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lr + (n - i) * l1r)
                   for i in range(k + 1))

    lo, hi = 0.0, 1.0  # not k/n: below level 0.5 the bound lies under k/n
    for _ in range(100):  # bisection to ~1e-30: far below what the bound is printed to
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if cdf(mid) > 1 - level else (lo, mid)
    return 0.5 * (lo + hi)


# ---------------------------------------------------------------- failure by the loss, sensitivity at the own optimum

def failed_by_loss(L, excess: float = 1.0) -> np.ndarray:
    """[n_lr, n_seed] bool: a run failed when its final loss is at least `excess` nats above its seed's best over the
    grid (min over the lrs of that column), or is NaN (stopped). A seed with no finite loss fails everywhere."""
    L = np.asarray(L, dtype=float)
    if L.ndim != 2:
        raise ValueError(f"L must be [n_lr, n_seed], got shape {L.shape}")
    best = np.array([L[np.isfinite(L[:, s]), s].min() if np.isfinite(L[:, s]).any() else math.nan
                     for s in range(L.shape[1])])
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(L) | ~(L < best[None, :] + excess)


@dataclass(frozen=True)
class OwnOptimum:
    """Per seed: the sensitivity around that seed's own best lr, the best lr, and whether it is at the grid's edge."""
    sensitivity: np.ndarray   # [n_seed] mean of (L − L*) over the lrs within ±decades of the seed's best lr
    best_lr: np.ndarray       # [n_seed] the seed's best lr (NaN for a seed with no finite loss)
    at_edge: np.ndarray       # [n_seed] bool: the best lr is the smallest or the largest lr the seed ran
    window: np.ndarray        # [n_seed] how many lrs the ±decades window held
    cut: np.ndarray           # [n_seed] bool: fewer than an inside optimum's window holds on this grid (the grid's
                              # edge within ±decades of the best, or a missing run): the mean is then not comparable


def sensitivity_around_optimum(L, lrs, decades: float = 1.0) -> OwnOptimum:
    """Learning-rate sensitivity measured around each seed's own optimum: for a [n_lr, n_seed] array of final losses
    (diverged runs clipped by the caller, as for sensitivity_per_seed) on the learning rates `lrs` [n_lr], per seed
    s with best lr* = argmin L[:, s]: mean over the lrs with |log10 lr − log10 lr*| ≤ decades of (L − L*).

    Unlike Wortsman's mean over the whole grid it does not grow when the optimum moves toward the grid's edge
    (with L quadratic in log lr, an optimum at the edge of a 6-point grid scores 55/19 ≈ 2.9× a central one under
    Wortsman's mean). But a window the edge cuts holds only one side's far points, so its mean is biased low (the
    same parabola one step from the edge of a 9-point grid: 0.138 against 0.184 inside): `cut` flags every seed
    whose window holds fewer lrs than an inside optimum's would on this grid (from its median log spacing), at_edge
    those whose best is the edge itself. NaN cells are left out (and cut the window)."""
    L = np.asarray(L, dtype=float)
    x = np.log10(np.asarray(lrs, dtype=float))
    if L.ndim != 2 or L.shape[0] != x.size:
        raise ValueError(f"L must be [n_lr, n_seed] with n_lr = {x.size} learning rates, got shape {L.shape}")
    if np.isinf(L).any():
        raise ValueError("infinite loss in L (clip diverged runs before computing sensitivity)")
    n = L.shape[1]
    steps = np.diff(np.unique(x))
    full = 2 * int(math.floor(decades / float(np.median(steps)) + 1e-9)) + 1 if steps.size else 1  # an inside window
    sens, best, edge, win = np.full(n, math.nan), np.full(n, math.nan), np.zeros(n, bool), np.zeros(n, int)
    for s in range(n):
        ok = ~np.isnan(L[:, s])
        if not ok.any():
            continue
        xs, col = x[ok], L[ok, s]
        i = int(np.argmin(col))
        near = np.abs(xs - xs[i]) <= decades + 1e-9
        sens[s] = float(np.mean(col[near] - col[i]))
        best[s] = 10 ** xs[i]
        edge[s] = xs[i] == xs.min() or xs[i] == xs.max()
        win[s] = int(near.sum())
    return OwnOptimum(sens, best, edge, win, win < full)
