"""The building blocks of the figures' claim rules (analysis/figure_decl.py): a paired comparison over seeds
turned into one part of a claim, a tolerance check, the gate that makes a part "not testable here" when the
runs cannot show it, and the rule that combines the parts into the verdict. A part is (word, text), word one
of "yes", "no", "undecided" or "not testable here", carrying the p-value of its test when it has one
(Part.p; NaN for an exact check). COMBINE_RULE, PAIRED_RULE and FLOOR_RULE below are the rules, printed once
at the head of the figure index.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

import stats
from figure_decl import NOT_TESTABLE, Verdict

FAMILY_ALPHA = 0.05  # the level of every part, and of the Holm step-down over the parts of a "partly"


class Part(tuple):
    """(word, text), unpackable as a pair, with the p-values of the part's tests: p for "yes" (its effect in the
    claimed direction), p_no for "no" (its effect absent or opposite); NaN for an exact check, which has no test."""

    def __new__(cls, word: str, text: str, p: float = math.nan, p_no: float = math.nan):
        self = super().__new__(cls, (word, text))
        self.p, self.p_no = float(p), float(p_no)
        return self

    @property
    def word(self) -> str:
        return self[0]

    @property
    def text(self) -> str:
        return self[1]


def _p(part, which: str = "p") -> float:
    return float(getattr(part, which, math.nan))


COMBINE_RULE = (
    "a claim's verdict from its parts: every part not testable here → not testable here; every part yes → yes (each "
    "part at its own alpha: a conjunction needs no multiplicity correction); otherwise, the parts that can be tested "
    "all yes → partly; otherwise at least one yes after Holm's step-down over the parts' p-values (family alpha "
    f"{FAMILY_ALPHA:g}; an exact check has no p and counts as it is) → partly; otherwise every testable part no, or "
    "at least one no after Holm's step-down over the parts' p-values for no → no; otherwise undecided")
PAIRED_RULE = (
    "a paired part (x − y over the same seeds, analysis/stats.py): yes when the exact sign-flip p < alpha, the (1 − "
    "alpha) t-interval excludes 0 on the claimed side and the mean difference reaches the declared margin (the "
    "minimum effect of interest: a resolved effect smaller than it is not a yes); no when the interval excludes 0 on "
    "the other side or when the (1 − 2·alpha) interval lies inside ±margin (TOST); undecided else (too few seeds or "
    "too much seed noise — not evidence of no effect); alpha 0.05 unless the rule says otherwise")
FLOOR_RULE = (
    "a part is not testable here when its reference condition shows no effect above the round-off floor the claim "
    "declares for it (the proxy cannot show the claim: never read as no), or when a premise it rests on did not "
    "come out yes; a part that compares in decades a quantity read at the floor below it is testable only when the "
    "outcome it would reject is reachable with the other side at the floor (else a difference of the margin could "
    "not show)")


def paired(x, y, margin: float, name: str, claimed: str = "lower", alpha: float = FAMILY_ALPHA) -> Part:
    """x − y paired by seed (x[i], y[i] from the same seed; NaN drops the pair). `claimed`: the direction
    the paper claims for x against y ("lower" or "higher"). `margin`: the equivalence margin and the minimum
    effect of interest (a "yes" needs |mean| ≥ margin). alpha: the part's level."""
    if claimed not in ("lower", "higher"):
        raise ValueError(f"claimed must be 'lower' or 'higher', got {claimed!r}")
    level = 1.0 - alpha
    pr = stats.paired_difference(x, y, level=level, name=name)
    t = stats.tost(x, y, margin, level=level) if pr.n >= 2 else None
    v = stats.verdict(pr, t, alpha=alpha)
    text = f"{name}: {pr.text('+.3g')}"
    right = (pr.mean < 0) == (claimed == "lower")
    p_yes = pr.p_signflip if right else 1.0
    # the p of "no": the sign-flip p when the effect points the other way, else the TOST p of equivalence
    p_no = min(pr.p_signflip if not right else 1.0, t.p if t is not None and math.isfinite(t.p) else 1.0)
    if v == "differ":
        if not right:
            return Part("no", text, p_yes, pr.p_signflip)
        if abs(pr.mean) >= margin:
            return Part("yes", text, p_yes, p_no)
        if t is not None and t.equivalent:
            return Part("no", text + f", resolved but equivalent within ±{margin:g}", p_yes, t.p)
        return Part("undecided", text + f", resolved but below the minimum effect of interest {margin:g}", p_yes, p_no)
    if v == "equivalent":
        return Part("no", text + f", equivalent within ±{margin:g}", p_yes, t.p)
    return Part("undecided", text + ("" if pr.n >= 2 else " (fewer than 2 seeds)"), p_yes, p_no)


def within(value: float, bound: float, name: str, fmt: str = ".2g") -> Part:
    """'yes' when |value| ≤ bound (a round-off or tolerance check), 'no' when it exceeds it or is not finite."""
    ok = math.isfinite(value) and abs(value) <= bound
    return Part("yes" if ok else "no", f"{name} {value:{fmt}} {'≤' if ok else '>'} {bound:g}")


def at_least(value: float, bound: float, name: str, fmt: str = ".3g") -> Part:
    ok = math.isfinite(value) and value >= bound
    return Part("yes" if ok else "no", f"{name} {value:{fmt}} {'≥' if ok else '<'} {bound:g}")


# --- "not testable here" ---------------------------------------------------------------------------------------

def above_floor(value: float, floor: float, name: str, cannot: str) -> Part | None:
    """None when the reference effect `value` lies above its declared round-off `floor`; else the part "not
    testable here" with the reason, e.g. "A's final drift (largest over seeds) 7.6e-08 ≤ floor 1e-05: the proxy
    cannot show drift"."""
    if math.isfinite(value) and value > floor:
        return None
    return Part(NOT_TESTABLE, f"{name} {value:.2g} ≤ floor {floor:g}: {cannot}")


def premise(part: Part, name: str) -> Part | None:
    """None when the premise `part` came out yes; else "not testable here", naming the premise and its word."""
    if part[0] == "yes":
        return None
    return Part(NOT_TESTABLE, f"its premise ({name}) is {part[0]}, not yes")


def unless(blocker: Part | None, make: Callable[[], Part]) -> Part:
    """The part `make()` computes, or `blocker` (a not-testable part from above_floor / premise) when there is one."""
    return blocker if blocker is not None else make()


# --- combining the parts ---------------------------------------------------------------------------------------

def holm_survivors(parts: list, alpha: float = FAMILY_ALPHA, which: str = "p") -> list[bool]:
    """Per part: whether Holm's step-down at family level alpha rejects its null, over the parts that carry a p-value
    `which` ("p": for yes, "p_no": for no), sorted ascending, the i-th of m at alpha/(m − i), stopping at the first
    that fails. Parts without that p: False."""
    tested = sorted((i for i, p in enumerate(parts) if math.isfinite(_p(p, which))), key=lambda i: _p(parts[i], which))
    out = [False] * len(parts)
    m = len(tested)
    for rank, i in enumerate(tested):
        if _p(parts[i], which) > alpha / (m - rank):
            break
        out[i] = True
    return out


def _held(testable: list, word: str, alpha: float) -> tuple[bool, dict]:
    """(whether some part with `word` holds after Holm — an exact check's counts as it is —, notes for the parts
    of that word that do not)."""
    which = "p" if word == "yes" else "p_no"
    survives = holm_survivors(testable, alpha, which)
    m = sum(math.isfinite(_p(q, which)) for q in testable)
    held, notes = False, {}
    for p, ok in zip(testable, survives):
        if p[0] != word:
            continue
        if not math.isfinite(_p(p, which)) or ok:
            held = True
        else:
            notes[id(p)] = f"{word} at its own alpha, not after Holm over {m} parts"
    return held, notes


def combine(parts: list, alpha: float = FAMILY_ALPHA) -> Verdict:
    """The verdict of a claim from its parts (COMBINE_RULE)."""
    if not parts:
        return Verdict("undecided", "no part could be evaluated")
    words = [p[0] for p in parts]
    if all(w == NOT_TESTABLE for w in words):
        return Verdict(NOT_TESTABLE, "; ".join(dict.fromkeys(p[1] for p in parts)))  # one reason once
    testable = [p for p in parts if p[0] != NOT_TESTABLE]
    yes_held, yes_notes = _held(testable, "yes", alpha)
    no_held, no_notes = _held(testable, "no", alpha)
    notes = {}
    if all(w == "yes" for w in words):
        word = "yes"
    elif all(p[0] == "yes" for p in testable):
        word = "partly"
    elif yes_held:
        word, notes = "partly", yes_notes
    elif all(p[0] == "no" for p in testable):
        word = "no"
    elif no_held:
        word, notes = "no", {**yes_notes, **no_notes}
    else:
        word, notes = "undecided", {**yes_notes, **no_notes}
    return Verdict(word, "; ".join(f"{p[1]} ({notes.get(id(p), p[0])})" for p in parts))


def by_seed(values, seeds) -> np.ndarray:
    """values ordered by their seeds (ascending), so that two conditions' arrays pair seed by seed."""
    order = np.argsort(np.asarray(seeds))
    return np.asarray(values, dtype=float)[order]


def combine_many(parts: list[tuple[str, Part]], shown: int = 4, alpha: float = FAMILY_ALPHA) -> Verdict:
    """combine() over many labelled parts (label, part), with a short detail: counts per word and the first
    `shown` labels of each word (the full list is the figure's own table)."""
    v = combine([p for _, p in parts], alpha)
    bits = []
    testable = [p for _, p in parts if p[0] != NOT_TESTABLE]
    for word in ("yes", "no", "undecided", NOT_TESTABLE):
        labels = [lab for lab, p in parts if p[0] == word]
        if labels:
            more = f", … (+{len(labels) - shown})" if len(labels) > shown else ""
            bits.append(f"{word} {len(labels)}/{len(parts)}: " + ", ".join(labels[:shown]) + more)
    for word in ("yes", "no"):
        dropped = len(_held(testable, word, alpha)[1])
        if dropped and not all(p[0] == word for p in testable):
            bits.append(f"of the {word}, {dropped} not after Holm over the parts")
    if v.word == NOT_TESTABLE:
        bits.append(parts[0][1][1])
    return Verdict(v.word, "; ".join(bits))


def fisher_more_often(k_a: int, n_a: int, k_b: int, n_b: int, name: str, alpha: float = FAMILY_ALPHA,
                      bound_a: str = "") -> Part:
    """'yes' when a's event count k_a/n_a exceeds b's by the one-sided Fisher exact test at alpha, else
    'undecided' (a count test cannot show that two rates are equal). `bound_a` (a's name for its rate): the text
    also gives a's exact one-sided (1 − alpha) upper bound on its rate, what an undecided count still allows."""
    p = stats.fisher_one_sided_p(k_a, n_a, k_b, n_b)
    text = f"{name}: {k_a}/{n_a} vs {k_b}/{n_b}, one-sided Fisher p={p:.3g}"
    if bound_a:
        text += f" ({bound_a} ≤ {stats.rate_upper(k_a, n_a, 1.0 - alpha):.2g}, exact one-sided {1.0 - alpha:.0%} bound)"
    return Part("yes" if p < alpha else "undecided", text, p)


def equivalent(x, y, margin: float, name: str, alpha: float = FAMILY_ALPHA) -> Part:
    """x − y paired by seed, where two ways of computing the same thing are claimed to agree (not zero by
    construction, so unlike null_part a small resolved difference is allowed): 'yes' when TOST puts the mean inside
    ±margin, 'no' when the paired (1 − alpha) interval lies wholly outside ±margin (resolved beyond it), else
    'undecided'."""
    pr = stats.paired_difference(x, y, level=1.0 - alpha, name=name)
    t = stats.tost(x, y, margin, level=1.0 - alpha) if pr.n >= 2 else None
    if t is not None and t.equivalent:
        return Part("yes", f"{name}: {pr.text('+.3g')}, inside ±{margin:g}")
    if pr.n >= 2 and (pr.lo > margin or pr.hi < -margin):
        return Part("no", f"{name}: {pr.text('+.3g')}, resolved beyond ±{margin:g}")
    return Part("undecided", f"{name}: {pr.text('+.3g')}" + ("" if pr.n >= 2 else " (fewer than 2 seeds)"))


def null_part(x, y, margin: float, name: str, alpha: float = FAMILY_ALPHA) -> Part:
    """A measured null (x − y zero by construction, paired by seed) checked as one: 'yes' when TOST puts it inside
    ±margin (it behaves as a null), 'no' when it is resolved away from 0 (the construction does not hold: the
    differences it stands beside are not cleanly measured), else 'undecided'."""
    pr = stats.measured_null(x, y, level=1.0 - alpha, name=name)
    t = stats.tost(x, y, margin, level=1.0 - alpha) if pr.n >= 2 else None
    v = stats.verdict(pr, t, alpha=alpha)
    word = {"equivalent": "yes", "differ": "no"}.get(v, "undecided")
    tail = {"yes": f", zero within ±{margin:g}", "no": ", resolved away from 0"}.get(word, "")
    return Part(word, f"{name}: {pr.text('+.3g')}{tail}")


def beside(verdict: Verdict, name: str, text: str) -> Verdict:
    """`verdict` with its measured null (`name`: what is compared; `text`: what it read) printed beside it, never a
    part of it: the word is the verdict's. The null is a comparison zero by construction in the row's regime, so that
    a reader sees the spread or round-off a measured effect there has to beat."""
    return Verdict(verdict.word, f"{verdict.detail}; beside it, the measured null ({name}): {text}")


def beside_null(verdict: Verdict, x, y, name: str) -> Verdict:
    """`beside` with x − y paired by seed (stats.measured_null)."""
    return beside(verdict, name, stats.measured_null(x, y, name=name).text("+.2g"))


def beside_value(verdict: Verdict, name: str, value: float, fmt: str = ".2g") -> Verdict:
    """`beside` with one value the same run measured (e.g. a spread over gauges the method is equivariant to)."""
    return beside(verdict, name, f"{value:{fmt}}")
