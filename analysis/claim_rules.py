"""The building blocks of the figures' claim rules (analysis/figure_decl.py): a paired comparison over seeds
turned into one part of a claim, a tolerance check, and the rule that combines the parts into the verdict.
A part is (word, text) with word "yes", "no" or "undecided"; COMBINE_RULE and PAIRED_RULE below are the
rules, printed once at the head of the figure index.
"""
from __future__ import annotations

import math

import numpy as np

import stats
from figure_decl import Verdict

Part = tuple[str, str]

COMBINE_RULE = ("a claim's verdict from its parts: every part yes → yes; at least one yes → partly; otherwise at "
                "least one no → no; otherwise undecided")
PAIRED_RULE = ("a paired part (x − y over the same seeds, analysis/stats.py): yes when the exact sign-flip p < alpha "
               "and the (1 − alpha) t-interval excludes 0 on the claimed side; no when it does so on the other side or "
               "when the (1 − 2·alpha) interval lies inside the declared ±margin (TOST); undecided else (too few seeds "
               "or too much seed noise — not evidence of no effect); alpha 0.05 unless the rule says otherwise")


def paired(x, y, margin: float, name: str, claimed: str = "lower", alpha: float = 0.05) -> Part:
    """x − y paired by seed (x[i], y[i] from the same seed; NaN drops the pair). `claimed`: the direction
    the paper claims for x against y ("lower" or "higher"). alpha: the rule's level (a Bonferroni-corrected
    one where several comparisons decide one claim)."""
    if claimed not in ("lower", "higher"):
        raise ValueError(f"claimed must be 'lower' or 'higher', got {claimed!r}")
    level = 1.0 - alpha
    pr = stats.paired_difference(x, y, level=level, name=name)
    t = stats.tost(x, y, margin, level=level) if pr.n >= 2 else None
    v = stats.verdict(pr, t, alpha=alpha)
    text = f"{name}: {pr.text('+.3g')}"
    if v == "differ":
        right = (pr.mean < 0) == (claimed == "lower")
        return ("yes" if right else "no"), text
    if v == "equivalent":
        return "no", text + f", equivalent within ±{margin:g}"
    return "undecided", text + ("" if pr.n >= 2 else " (fewer than 2 seeds)")


def within(value: float, bound: float, name: str, fmt: str = ".2g") -> Part:
    """'yes' when |value| ≤ bound (a round-off or tolerance check), 'no' when it exceeds it or is not finite."""
    ok = math.isfinite(value) and abs(value) <= bound
    return ("yes" if ok else "no"), f"{name} {value:{fmt}} {'≤' if ok else '>'} {bound:g}"


def at_least(value: float, bound: float, name: str, fmt: str = ".3g") -> Part:
    ok = math.isfinite(value) and value >= bound
    return ("yes" if ok else "no"), f"{name} {value:{fmt}} {'≥' if ok else '<'} {bound:g}"


def combine(parts: list[Part]) -> Verdict:
    """The verdict of a claim from its parts (the module's rule)."""
    words = [w for w, _ in parts]
    if not parts:
        return Verdict("undecided", "no part could be evaluated")
    if all(w == "yes" for w in words):
        word = "yes"
    elif "yes" in words:
        word = "partly"
    elif "no" in words:
        word = "no"
    else:
        word = "undecided"
    return Verdict(word, "; ".join(f"{t} ({w})" for w, t in parts))


def by_seed(values, seeds) -> np.ndarray:
    """values ordered by their seeds (ascending), so that two conditions' arrays pair seed by seed."""
    order = np.argsort(np.asarray(seeds))
    return np.asarray(values, dtype=float)[order]


def combine_many(parts: list[tuple[str, Part]], shown: int = 4) -> Verdict:
    """combine() over many labelled parts (label, part), with a short detail: counts per word and the first
    `shown` labels of each word (the full list is the figure's own table)."""
    v = combine([p for _, p in parts])
    bits = []
    for word in ("yes", "no", "undecided"):
        labels = [lab for lab, (w, _) in parts if w == word]
        if labels:
            more = f", … (+{len(labels) - shown})" if len(labels) > shown else ""
            bits.append(f"{word} {len(labels)}/{len(parts)}: " + ", ".join(labels[:shown]) + more)
    return Verdict(v.word, "; ".join(bits))


def fisher_more_often(k_a: int, n_a: int, k_b: int, n_b: int, name: str, alpha: float = 0.05) -> Part:
    """'yes' when a's event count k_a/n_a exceeds b's by the one-sided Fisher exact test at alpha, else
    'undecided' (a count test cannot show that two rates are equal)."""
    from math import comb

    k = k_a + k_b
    total = comb(n_a + n_b, k)
    p = sum(comb(n_a, i) * comb(n_b, k - i) for i in range(k_a, min(k, n_a) + 1)) / total if total else 1.0
    return ("yes" if p < alpha else "undecided"), f"{name}: {k_a}/{n_a} vs {k_b}/{n_b}, one-sided Fisher p={p:.3g}"
