"""Every plotting script declared under analysis/figures/ runs on small fixture logs and writes a non-trivial
output named after itself; every claim rule runs on them too, and the index prints no verdict for them. The fixture logs come from the declared experiments themselves, in
their fast mode (an experiment's "quick" argv, else its normal one), run by the build's gaugelab
(GAUGELAB_BUILD_DIR, default build/). Experiments of verbs this build lacks (e.g. no LibTorch) are
skipped, with the reason."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import figure_decl
import figure_index
import manifest
from script_runner import run_script

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build"))
BINARY = BUILD / "gaugelab"
MIN_BYTES = 400  # a PNG with axes, or a Markdown table with a header, is well above this
EXPERIMENT_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def fixture_logs(tmp_path_factory) -> dict[str, Path | str]:
    """experiment -> its fixture log, or a string saying why it could not be made here."""
    if not BINARY.exists():
        pytest.skip(f"SKIPPED: no gaugelab binary at {BINARY} (build first)")
    d = tmp_path_factory.mktemp("fixture_logs")
    out: dict[str, Path | str] = {}

    def where(name: str) -> Path:
        """What --out takes for experiment `name` here, as make_figures' ROOT / (out_arg or out): a verb that writes a
        directory gets d/NAME; one that writes a file gets d/NAME.h5, or d/NAME/FILE when its log has a folder of its
        own (where a {dir:NAME} argument writes beside it)."""
        exp = manifest.EXPERIMENTS[name]
        if "out_arg" in exp:
            return d / name
        own = Path(exp["out"]).parent.name == name
        return d / name / Path(exp["out"]).name if own else d / f"{name}.h5"

    for name, exp in manifest.EXPERIMENTS.items():
        log, out_arg = where(name), None
        if "out_arg" in exp:  # the verb writes a directory holding the log
            out_arg = where(name)
            log = out_arg / Path(exp["out"]).relative_to(exp["out_arg"])
        log.parent.mkdir(parents=True, exist_ok=True)
        argv = manifest.resolve(exp.get("quick", exp["args"]), where)
        r = subprocess.run([str(BINARY), *argv, "--out", str(out_arg or log), "--force"], cwd=ROOT, capture_output=True,
                           text=True, timeout=EXPERIMENT_TIMEOUT_S)
        if r.returncode == 0 and log.exists():
            out[name] = log
        elif "not built" in r.stderr or "not built" in r.stdout:
            out[name] = f"this build lacks the verb: {(r.stderr or r.stdout).strip()}"
        else:
            raise AssertionError(f"experiment {name} failed (exit {r.returncode}): {' '.join(argv)}\n{r.stderr[-2000:]}")
    return out


FIGURES = manifest.figures()


@pytest.mark.parametrize("script", sorted(FIGURES))
def test_script_runs_on_fixture_logs(script, fixture_logs, tmp_path):
    logs = [fixture_logs[e] for e in FIGURES[script].inputs]
    why = [x for x in logs if isinstance(x, str)]
    if why:
        pytest.skip(f"SKIPPED: {why[0]}")
    if getattr(sys.modules.get(script), "NEEDS_PYTHON_MODULE", False) and not list((BUILD / "python" / "gaugelab").glob("_core*.so")):
        pytest.skip(f"SKIPPED: {script} needs the gaugelab Python module, not built in {BUILD} (pybind11 not found)")
    # the figures folder from --out alone (figstyle.py chose the Agg backend already: no MPLBACKEND in process)
    r = run_script(ROOT / "analysis" / "figures" / f"{script}.py", *map(str, logs), "--out", str(tmp_path), cwd=ROOT,
                   unset=("GAUGELAB_FIGURES",))
    assert r.returncode == 0, f"{script} exited {r.returncode}: {r.stderr[-1500:]}"
    made = [p for p in (tmp_path / f"{script}.png", tmp_path / f"{script}.md") if p.exists()]
    assert made, f"{script} wrote neither {script}.png nor {script}.md"
    for p in made:
        assert p.stat().st_size > MIN_BYTES, f"{p.name} is only {p.stat().st_size} bytes"


@pytest.mark.parametrize("script", sorted(s for s, f in FIGURES.items() if f.claim is not None))
def test_claim_rule_runs_on_fixture_logs_and_the_index_withholds_its_verdict(script, fixture_logs):
    """The rule's code runs on logs of the right kind and returns a Verdict (or fails loudly); the index prints no
    verdict for fixture-sized logs, and the rule's own for an experiment whose fixture is its declared command."""
    fig = FIGURES[script]
    logs = [fixture_logs[e] for e in fig.inputs]
    if any(isinstance(x, str) for x in logs):
        pytest.skip(f"SKIPPED: {next(x for x in logs if isinstance(x, str))}")
    v = fig.claim.decide(logs)
    assert isinstance(v, figure_decl.Verdict) and v.detail
    exps = {e: dict(manifest.EXPERIMENTS[e], out=str(p)) for e, p in zip(fig.inputs, logs)}
    row = figure_index.row_of(fig, exps, Path("/"))
    if any("quick" in manifest.EXPERIMENTS[e] for e in fig.inputs):  # a fixture-sized run set
        assert row.verdict.startswith("no verdict") and "fixture" in row.verdict, row.verdict
    else:  # the fixture is the declared command itself (a toy of seconds): its verdict stands
        assert row.run_set == "declared" and row.verdict == str(v)


def test_a_seed004_sweep_that_held_a_point_setting_at_one_value_selects_as_one_that_swept_it(fixture_logs):
    """The dense-pass nulls run λ = 0 alone, so their log has no λ column: sweep_runs fills it from the settings."""
    import seed004_relu as s4
    if not isinstance(fixture_logs["relu_tables_dense"], Path):
        pytest.skip(fixture_logs["relu_tables_dense"])
    runs = s4.sweep_runs(str(fixture_logs["relu_tables_dense"]))
    assert set(runs["lambda"]) == {0.0}
    both = s4.cell_by_seed(runs, "final_val_mse", lr=1e-2, **{"lambda": 0.0})
    assert len(both) == 3 and np.isfinite(both).all()
    assert s4.cell_by_seed(runs, "final_val_mse", lr=1e-2, **{"lambda": 0.05}).size == 0


def test_a_run_reference_names_the_run_and_a_dir_reference_the_folder_beside_its_log():
    where = {"merge600_canon_s123": Path("/r/runs/merge600_canon_s123/inspect.h5"), "t": Path("/r/runs/t")}
    assert manifest.resolve(["{dir:merge600_canon_s123}/gram/checkpoint", "{run:t}/checkpoints/x", "plain"],
                            where.__getitem__) == ["/r/runs/merge600_canon_s123/gram/checkpoint",
                                                   "/r/runs/t/checkpoints/x", "plain"]


def test_the_merge_null_pairs_each_pair_with_its_moved_twin_and_stays_out_of_the_experiment():
    import seed001_merge as sm
    lv = lambda b: {"attention": {"barrier": b}}  # noqa: E731
    recs = [{"pair": "merge600_train_s42 / merge600_train_s123", "slice": "qr", "moved": False, "levels": lv(0.4)},
            {"pair": "merge600_train_s42 / merge600_train_s123", "slice": "gram", "moved": False, "levels": lv(0.9)},
            {"pair": "merge600_train_s42 / merge600_canon_s123", "slice": "qr", "moved": True, "levels": lv(0.4 + 1e-7)},
            {"pair": "merge600_train_s42 / merge600_train_s456", "slice": "qr", "moved": False, "levels": lv(0.5)}]
    own, moved, pairs = sm.moved_pairs(recs, "attention")
    assert pairs == ["merge600_train_s42 / merge600_train_s123"] and own.tolist() == [0.4] and moved.tolist() == [0.4 + 1e-7]
    assert [r["moved"] for r in sm.experiment(recs)] == [False, False, False]


def test_the_merge_null_fixture_pairs_with_the_experiment_and_reads_the_same_aligned_barrier(fixture_logs):
    """The fixture's merges with B moved along its orbit (manifest._merge_null) are recognised as such, pair with the
    experiment's own merges, and read their aligned barrier up to float32 rounding: the null is zero by construction."""
    import seed001_merge as sm
    names = list(manifest.MERGE_RUNS + manifest.MERGE_NULL_RUNS)
    missing = [fixture_logs[n] for n in names if not isinstance(fixture_logs[n], Path)]
    if missing:
        pytest.skip(missing[0])
    recs = sm.load([str(fixture_logs[n]) for n in names])
    assert sum(r["moved"] for r in recs) == len(manifest.MERGE_NULL_RUNS)
    own, moved, pairs = sm.moved_pairs(recs, "attention")
    assert len(pairs) == len(manifest.MERGE_NULL_RUNS) >= 1
    assert np.abs(own - moved).max() <= 1e-5, (own, moved)
    naive_own, naive_moved, _ = sm.moved_pairs(recs, "none")
    assert np.abs(naive_own - naive_moved).max() > 1e-5  # the naive barrier reads B's point: the move is real


def test_the_step_count_rule_picks_the_largest_count_inside_fig5s_interval():
    """toys/README.md's rule for seed 004's step count, as table_seed004_protocol applies it to the logs."""
    figure_decl.collect()  # loads every figure script as a module under its stem (or finds it loaded)
    rule = sys.modules["table_seed004_protocol"].step_rule
    assert rule({100: 5e-18, 300: 7e-18, 1000: 2.4e-17}) == 300
    assert rule({100: 5e-18, 300: 7e-18, 1000: 1.1e-17}) == 1000  # 1.1e-17 lies under Fig. 5's max 1.14e-17
    assert rule({100: 3e-18, 300: 2e-17}) is None
