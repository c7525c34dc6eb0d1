"""The figure index is built from one declaration per figure: every script under analysis/figures/ declares a
Figure whose inputs are declared experiments, no plotting script sits outside that folder, every seed has
items, and verdicts are computed — printed only for logs of the declared run set, never for a fixture's."""
from __future__ import annotations

from pathlib import Path

import pytest

import claim_rules as cr
import figure_decl as fd
import figure_index
import manifest
from conftest import write_example

ANALYSIS = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def figures():
    return manifest.figures()


def test_every_script_declares_a_figure_of_declared_experiments(figures):
    on_disk = {p.stem for p in (ANALYSIS / "figures").glob("*.py") if p.stem.startswith(("fig_", "table_"))}
    assert set(figures) == on_disk
    for script, fig in figures.items():
        assert fig.script == script
        for e in fig.inputs:
            assert e in manifest.EXPERIMENTS, f"{script}: input {e!r} is not a declared experiment"


def test_no_plotting_script_outside_the_figures_folder():
    stray = sorted(p.name for p in ANALYSIS.glob("*.py") if p.stem.startswith(("fig_", "table_")))
    assert not stray, "plotting scripts outside analysis/figures/ (never drawn by make figures): " + ", ".join(stray)


def test_every_seed_has_items_and_proxies_say_what_makes_them_at_full_scale(figures):
    assert {f.seed for f in figures.values()} >= set(figure_index.SEEDS)
    for f in figures.values():
        if f.status in ("small-scale proxy", "needs external weights"):
            assert f.full_scale, f"{f.script}: a proxy or external item must say what regenerates it at full scale"


def test_a_script_without_a_declaration_is_refused(tmp_path):
    (tmp_path / "fig_nothing.py").write_text("X = 1\n")
    with pytest.raises(ValueError, match="declares no FIGURE"):
        fd.collect(tmp_path)


def test_a_declaration_with_an_unknown_status_or_word_is_refused():
    with pytest.raises(ValueError, match="status"):
        fd.Figure(seed="004", label="x", what="x", inputs=("toy_relu",), status="done", paper="")
    with pytest.raises(ValueError, match="word"):
        fd.Verdict("reproduced", "")


def test_index_renders_every_declared_script_and_the_rules(figures):
    text = figure_index.render(figures)
    for script in figures:
        assert f"`figures/{script}.py`" in text
    assert "paper's claim reproduced? (computed)" in text
    assert cr.COMBINE_RULE in text and cr.PAIRED_RULE in text and cr.FLOOR_RULE in text


@pytest.mark.parametrize("command,expected", [
    ("gaugelab toy example --lr 0.1 --out /x/y.h5 --force", "declared"),
    ("gaugelab toy example --lr 0.1 --steps 3 --out /x/y.h5 --force", "fixture"),
    ("gaugelab toy example --lr 0.2 --out /x/y.h5", "other"),
    ("gaugelab merge /runs/a/checkpoints/step_1 --out m", "other"),
])
def test_run_set_of_a_command(command, expected):
    exp = {"args": ["toy", "example", "--lr", "0.1"], "quick": ["toy", "example", "--lr", "0.1", "--steps", "3"]}
    assert fd.run_set_of(exp, command) == expected


def test_run_argument_stands_for_any_run_directory_with_its_suffix():
    exp = {"args": ["merge", "{run:a}/checkpoints/step_1"]}
    assert fd.run_set_of(exp, "gaugelab merge /r/a/checkpoints/step_1 --out m --force") == "declared"
    assert fd.run_set_of(exp, "gaugelab merge /r/a/checkpoints/step_2 --out m --force") == "other"


def test_verdict_is_printed_for_the_declared_run_set_only(tmp_path):
    """The example log's command is `gaugelab toy example --lr 0.1`: declared for one experiment table, a fixture
    for another. The claim's rule runs only in the first case."""
    write_example(tmp_path / "ex.h5")
    calls = []

    def decide(paths):
        calls.append(paths)
        return fd.Verdict("yes", "final_loss 0.05")

    fig = fd.Figure(seed="004", label="t", what="t", inputs=("ex",), status="regenerated", paper="p",
                    claim=fd.Claim(says="s", rule="r", decide=decide), script="fig_t")
    declared = {"ex": {"args": ["toy", "example", "--lr", "0.1"], "out": "ex.h5"}}
    row = figure_index.row_of(fig, declared, tmp_path)
    assert row.verdict == "yes: final_loss 0.05" and row.run_set == "declared" and len(calls) == 1
    fixture = {"ex": {"args": ["toy", "example", "--lr", "1"], "quick": ["toy", "example", "--lr", "0.1"], "out": "ex.h5"}}
    row = figure_index.row_of(fig, fixture, tmp_path)
    assert row.verdict.startswith("no verdict") and "fixture" in row.verdict and len(calls) == 1
    missing = {"ex": {"args": [], "out": "absent.h5"}}
    assert figure_index.row_of(fig, missing, tmp_path).state.startswith("not run yet")


def test_every_rule_declared_in_a_script_is_the_one_analysis_FIGURES_md_prints():
    """A rule changed in its script and not in the committed index would leave FIGURES.md stating another rule than
    the one its verdicts come from: every claim's and every regime claim's rule appears there verbatim."""
    text = (Path(__file__).resolve().parents[1] / "FIGURES.md").read_text()
    stale = [(name, what) for name, fig in manifest.figures().items()
             for what, rule in ([("claim", fig.claim.rule)] if fig.claim else []) + [(g.label, g.rule) for g in fig.regime]
             if rule not in text]
    assert not stale, f"rules not in analysis/FIGURES.md as declared (render the index and splice them): {stale}"
