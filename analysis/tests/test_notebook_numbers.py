"""No result is typed into the narrative notebooks (notebooks_export/*.py): every number a log can give is rendered
from its log (analysis/notebook_support.py: headline, show_verdict, the tables), so prose cannot contradict the
computed figures. The test finds result-like numbers in the Markdown cells (a decimal fraction, an exponent, a ×10
power, a percentage or a '~' estimate; inline code and section numbers aside) and accepts only the ones listed below,
each with why it is not a result of ours: the paper's own numbers, settings, declared margins. A new one fails
until it is rendered from a log or listed here with its reason."""
from __future__ import annotations

import os
import re
from pathlib import Path

import figure_decl as fd
import figure_index
import manifest
import notebook_support as ns
from conftest import write_example
from py2nb import cells

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks_export"
NUMBER = re.compile(r"(?<![\w.`/§])[~≈]?\s?[−+-]?(?:\d+(?:[.,]\d+)?(?:[eE][−+-]?\d+|·10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?\s?%?|[½⅓⅔¼¾⅕⅛])")

ALLOWED = {
    ("seed000_gaugefix_lrm", "~10"): "the paper's token count (~10B tokens)",
    ("seed000_gaugefix_lrm", "~2.5"): "the paper's run time (~2.5 h on 8×A100)",
    ("seed000_gaugefix_lrm", "0.0000"): "the paper's Table 1 (B's drift)",
    ("seed000_gaugefix_lrm", "3.5e-7"): "the paper's Table 2 (N ≤ 100)",
    ("seed000_gaugefix_lrm", "~0.25"): "the paper's gradient norm before its spike (§4.2)",
    ("seed000_gaugefix_lrm", "1e-3"): "a setting: the float32 grid's smallest learning rate",
    ("seed000_gaugefix_lrm", "0.05"): "the declared equivalence margin (fig_lr_sensitivity.MARGIN)",
    ("seed000_gaugefix_lrm", "3.73e-4"): "a setting: the bf16 grid's smallest learning rate",
    ("seed003_quotient_updates", "5·10⁻⁷"): "the paper's example (loss before the step)",
    ("seed003_quotient_updates", "½"): "the seed's formula f = ½(ab − 1)² and its quoted \"order ½·10¹²\"",
    ("seed002_learnable_multipliers", "½"): "the equilibrium argument's prediction, which the verdict tests",
    ("seed004_soft_gauge_fixing", "1 %"): "the declared plateau criterion T*",
    ("torch_gauge_tools", "~15"): "a run time of the cell, not a result",
}
# The typed numbers the audit found contradicting the computed ones; none may come back.
RETIRED = ("2.4e-2", "2.5e-2", "1.5950", "2.5 → 1.7", "~1.7", "~70 %", "~19 %", "7e-4", "4.7e-3", "1.8e-2")


def result_numbers(text: str) -> list[str]:
    text = re.sub(r"`[^`]*`", "", text)  # code spans: flags, commands, file names
    out = []
    for m in NUMBER.finditer(text):
        tok = m.group().strip()
        if re.search(r"\d\.\d|\d[eE][−+-]?\d|·10|%|^[~≈]|[½⅓⅔¼¾⅕⅛]", tok):  # a vulgar fraction is a value too
            out.append(re.sub(r"\s+", " ", tok))
    return out


def prose(nb: Path) -> str:
    return "\n".join(body for kind, body in cells(nb.read_text()) if kind == "markdown")


def test_the_scanner_sees_typed_results_and_skips_code_and_section_numbers():
    assert result_numbers("drift 2.4e-2 ± 0.5e-2 under A, ~70 % of it, 4.98·10¹¹") == ["2.4e-2", "0.5e-2", "~70 %",
                                                                                      "4.98·10¹¹"]
    assert result_numbers("§7.4 and `--lr 1e-3` and 12 layers") == []
    assert result_numbers("exponents ½ and ¾") == ["½", "¾"]


def test_no_notebook_types_a_result_number():
    found = {(nb.stem, tok) for nb in sorted(NOTEBOOKS.glob("*.py")) for tok in result_numbers(prose(nb))}
    unlisted = sorted(found - set(ALLOWED))
    assert not unlisted, ("numbers typed into notebook prose (render them from the logs with notebook_support, or list "
                          f"them in ALLOWED with why they are not ours): {unlisted}")
    stale = sorted(set(ALLOWED) - found)
    assert not stale, f"ALLOWED lists numbers no notebook has any more: {stale}"


def test_the_audits_contradicting_numbers_are_gone():
    for nb in NOTEBOOKS.glob("*.py"):
        text = prose(nb)
        for n in RETIRED:
            assert n not in text, f"{nb.name} still types {n!r}"


# The same numbers where they were typed into the Markdown documents (READMEs, notes): those the audit found
# contradicting the computed ones in context, less the bare "7e-4", which gpt2/gpu-perf-notes.md uses for a kernel
# twin's error. analysis/FIGURES.md is rendered from logs and is not scanned.
# "19 %" is gpt2/README's form of the retired "~19 %".
RETIRED_IN_DOCS = tuple(n for n in RETIRED if n != "7e-4") + ("19 %",)


def documents(root: Path) -> list[Path]:
    """The Markdown files of the source tree: the walk never enters build folders, run or figure output, hidden
    folders or caches (where runs rename checkpoint folders while it walks); FIGURES.md is rendered, not typed."""
    out = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (d.startswith((".", "build")) or d in ("runs", "figures", "__pycache__"))]
        out += [Path(here) / f for f in files if f.endswith(".md") and f != "FIGURES.md"]
    return out


def test_no_document_types_a_retired_number():
    root = NOTEBOOKS.parent
    docs = documents(root)
    assert root / "README.md" in docs and root / "gpt2" / "README.md" in docs
    found = [(str(p.relative_to(root)), n) for p in docs for n in RETIRED_IN_DOCS if n in p.read_text()]
    assert not found, f"retired numbers typed into documents: {found}"


def test_headline_and_verdict_are_rendered_from_the_log(tmp_path, monkeypatch, capsys):
    log = write_example(tmp_path / "ex.h5")
    monkeypatch.setitem(manifest.EXPERIMENTS, "nb_ex", {"args": ["toy", "example", "--lr", "0.1"], "out": str(log)})
    fig = fd.Figure(seed="004", label="Fig. X", what="w", inputs=("nb_ex",), status="regenerated", paper="p",
                    ours=fd.from_summary(lambda s: f"final loss {s[0]['final_loss']:g}"),
                    claim=fd.Claim(says="s", rule="r", decide=lambda paths: fd.Verdict("yes", "from the log")),
                    script="fig_nb_ex")
    monkeypatch.setattr(manifest, "figures", lambda: {"fig_nb_ex": fig})
    assert ns.headline("fig_nb_ex") == "final loss 0.05"
    monkeypatch.setattr(ns, "RICH", False)
    ns.show_verdict("fig_nb_ex")
    assert "yes: from the log" in capsys.readouterr().out
    log.unlink()
    assert "not run yet" in ns.headline("fig_nb_ex")
    assert figure_index.row_of(fig).state.startswith("not run yet")
