"""The bindings' misuse probes of the call itself, one table: a value of the wrong kind for a number, flag,
name or generator, a missing argument, an unknown keyword or one too many, each with the one TypeError
line it must raise, "gaugelab.<function>: <argument> must be ... (got ...)" (pybind11's own message lists
every overload and the call's reprs over several lines). Beside the table, every public function and class
refuses an unknown keyword in one line naming it (the result classes, DriftStats and InvarianceError, have
no constructor and say so). A string where an array is expected is a case of every array argument in
test_bindings_validation.py."""
from __future__ import annotations

import numpy as np
import pytest

from built_module import import_gaugelab

g = import_gaugelab()


def rng():
    return g.Rng(0)


def mult():
    return g.QkMultipliers(2, np.ones(4), np.ones(4))


def head():
    return g.random_head(g.Rng(0), 4, 2, 2)


def set_attr(obj, name, value):
    setattr(obj, name, value)


def W():
    return np.ones((3, 2))


# id -> (call, the whole message)
PROBES = {
    "randn-rows-str": (lambda: g.randn(rng(), "2", 3), "gaugelab.randn: rows must be an integer (got str '2')"),
    "randn-rows-float": (lambda: g.randn(rng(), 2.5, 3), "gaugelab.randn: rows must be an integer (got float 2.5)"),
    "randn-stddev-str": (lambda: g.randn(rng(), 2, 3, stddev="1"),
                         "gaugelab.randn: stddev must be a number (got str '1')"),
    "randn-rng-int": (lambda: g.randn(0, 2, 3), "gaugelab.randn: rng must be a gaugelab.Rng (got int 0)"),
    "randn-cols-missing": (lambda: g.randn(rng(), 2),
                           "gaugelab.randn: cols is missing (the arguments are rng, rows, cols, stddev, dtype)"),
    "random-gl-kappa-none": (lambda: g.random_gl(rng(), 3, None),
                             "gaugelab.random_gl: kappa must be a number (got NoneType None)"),
    "gauge-fix-eps-str": (lambda: g.gauge_fix(mult(), "1e-12"),
                          "gaugelab.gauge_fix: eps must be a number (got str '1e-12')"),
    "gauge-fix-keyword-unknown": (lambda: g.gauge_fix(mult(), epsilon=1e-12),
                                  "gaugelab.gauge_fix: epsilon is not an argument (the arguments are multipliers, eps)"),
    "gauge-fix-given-twice": (lambda: g.gauge_fix(mult(), 1e-12, eps=1e-12),
                              "gaugelab.gauge_fix: eps must be given once (got it by position and by keyword)"),
    "head-logits-causal-str": (lambda: g.head_logits(head(), np.ones((3, 4)), causal="yes"),
                               "gaugelab.head_logits: causal must be True or False (got str 'yes')"),
    "head-logits-too-many": (lambda: g.head_logits(head(), np.ones((3, 4)), True, 1),
                             "gaugelab.head_logits: takes at most 3 positional arguments (the arguments are head, X, "
                             "causal) (got 4)"),
    "head-logits-missing": (lambda: g.head_logits(head()),
                            "gaugelab.head_logits: X is missing (the arguments are head, X, causal)"),
    "correct-qk-mode-int": (lambda: g.correct_qk(W(), W(), W(), W(), mode=3),
                            "gaugelab.correct_qk: mode must be a string (got int 3)"),
    "default-rule-options-int": (lambda: g.default_rule_options(1),
                                 "gaugelab.default_rule_options: name must be a string (got int 1)"),
    "lrm-head-scales-n-heads-str": (lambda: g.lrm_head_scales(np.ones(4), np.ones(4), "2"),
                                    "gaugelab.lrm_head_scales: n_heads must be an integer (got str '2')"),
    "sylvester-rel-tol-str": (lambda: g.solve_sylvester_psd(np.eye(2), np.eye(2), np.ones((2, 2)), "1e-12"),
                              "gaugelab.solve_sylvester_psd: rel_tol must be a number (got str '1e-12')"),
    "rng-seed-str": (lambda: g.Rng("a"), "gaugelab.Rng: seed must be an integer (got str 'a')"),
    "rng-seed-missing": (lambda: g.Rng(), "gaugelab.Rng: seed is missing (the arguments are seed)"),
    "qk-multipliers-n-heads-str": (lambda: g.QkMultipliers("2", np.ones(4), np.ones(4)),
                                   "gaugelab.QkMultipliers_f64: n_heads must be an integer (got str '2')"),
    "qk-multipliers-n-heads-set-str": (lambda: set_attr(mult(), "n_heads", "2"),
                                       "gaugelab.QkMultipliers_f64.n_heads: value must be an integer (got str '2')"),
    "sgd-lr-str": (lambda: g.SgdOptions(lr="0.1"), "gaugelab.SgdOptions.lr: value must be a number (got str '0.1')"),
    "sgd-lr-set-str": (lambda: set_attr(g.SgdOptions(), "lr", "0.1"),
                       "gaugelab.SgdOptions.lr: value must be a number (got str '0.1')"),
    "adamw-bias-correction-str": (lambda: g.AdamWOptions(bias_correction="yes"),
                                  "gaugelab.AdamWOptions.bias_correction: value must be True or False (got str 'yes')"),
    "muon-orthogonaliser-int": (lambda: g.MuonOptions(orthogonaliser=3),
                                "gaugelab.MuonOptions.orthogonaliser: value must be a string (got int 3)"),
    "rule-state-step-str": (lambda: set_attr(g.RuleState(), "step", "1"),
                            "gaugelab.RuleState_f64.step: value must be an integer (got str '1')"),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_probe_raises_one_type_error_line(probe):
    call, message = PROBES[probe]
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == message
    assert e.value.__cause__ is None and e.value.__suppress_context__  # no multi-line context printed above it


def public():
    return sorted(n for n in g.__all__ if callable(getattr(g, n)))


@pytest.mark.parametrize("name", public())
def test_an_unknown_keyword_is_one_line_naming_it(name):
    f = getattr(g, name)
    options = name.endswith("Options")  # keywords set fields: an unknown one is an AttributeError (no such field)
    with pytest.raises(AttributeError if options else TypeError) as e:
        f(bogus_argument=1)
    msg = str(e.value)
    assert "\n" not in msg, msg
    if msg == f"gaugelab._core.{name}: No constructor defined!":
        return
    assert "bogus_argument" in msg, msg
    assert options or msg.startswith((f"gaugelab.{name}", f"{name}() got an unexpected keyword")), msg
