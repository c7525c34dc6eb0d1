"""One declaration per figure (showyourwork-style): every script under analysis/figures/ declares, at its
top, a `FIGURE = Figure(...)` naming the paper item it regenerates, the experiments whose logs it reads
(analysis/manifest.py EXPERIMENTS), the paper's headline, how our headline is read from the logs, and
the claim rule: the written-down test that turns our numbers into "yes / no / partly / undecided".
`collect()` reads those declarations; the manifest (what `make figures` draws), the figure index
(analysis/FIGURES.md) and the tests all take the list from here, so a figure is declared once.

Verdicts are computed, never typed: `Claim.decide` gets the input logs and returns a Verdict whose detail
holds the numbers it rests on. The index prints a verdict only when every input log was made by the
declared command (its "run set"): a fixture or hand-made log of another size gets "no verdict".
"""
from __future__ import annotations

import importlib.util
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

ANALYSIS = Path(__file__).resolve().parent
FIGURES_DIR = ANALYSIS / "figures"

# The words a claim rule may return. "undecided": the rule could not separate the outcomes with these runs
# (too few seeds, too much noise); never read as "no effect". "not testable here": the runs cannot show the
# claim at all (its reference condition shows no effect above the round-off floor the claim declares, or a
# premise the part rests on did not come out yes); never read as "no".
NOT_TESTABLE = "not testable here"
WORDS = ("yes", "no", "partly", "undecided", NOT_TESTABLE, "—")


@dataclass(frozen=True)
class Verdict:
    word: str      # one of WORDS
    detail: str    # the numbers the word rests on, e.g. "λ 0.05 − λ 0: +0.0011 [−0.0008, +0.0030], n 10"

    def __post_init__(self):
        if self.word not in WORDS:
            raise ValueError(f"Verdict: word {self.word!r} is not one of {WORDS}")

    def __str__(self) -> str:
        return f"{self.word}: {self.detail}" if self.detail else self.word


@dataclass(frozen=True)
class Claim:
    """The paper's claim, the rule that decides it (written before looking at the runs it is applied to),
    and the code that applies the rule to the input logs (in the order of Figure.inputs)."""
    says: str                                  # the paper's claim in one line
    rule: str                                  # how our numbers decide it
    decide: Callable[[list[Path]], Verdict]


@dataclass(frozen=True)
class GridClaim:
    """A claim of the paper judged on runs of a declared grid (analysis/manifest.py GRIDS) rather than on the item's
    own inputs: the seed's claim in the seed's regime. `needs`: (grid, settings) pairs whose runs the rule reads
    (manifest.grid(grid, settings) names them); the verdict is computed only when every one of them is here, from
    its logs or its results ledger (analysis/results_ledger.py), and printed with where they came from. `decide`
    gets {grid: [lr_grid.Run]}; `power` (optional) a line printed beside the verdict."""
    label: str                                 # the row's name ("drift, in the seed's regime")
    says: str
    rule: str
    needs: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    decide: Callable[[dict], "Verdict"]
    power: str = ""
    # Optional: whether the claim can show here, decided from fewer runs than the claim needs (`gate_needs`, as
    # `needs`): a "not testable here" Part (or None: it can) given as the verdict as soon as those runs are here, so
    # that runs which could not change a "not testable" are not waited for.
    gate: Callable[[dict], object] | None = None
    gate_needs: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def __post_init__(self):
        if self.gate is not None and not self.gate_needs:
            raise ValueError(f"GridClaim {self.label!r}: a gate needs its runs named (gate_needs)")
        if not {g for g, _ in self.gate_needs} <= {g for g, _ in self.needs}:
            raise ValueError(f"GridClaim {self.label!r}: gate_needs names a grid its needs do not")


@dataclass(frozen=True)
class Figure:
    seed: str                     # "000" ... "004"; "instrument" for results beyond the seeds
    label: str                    # the paper's name for it ("Fig. 5", "Table I", "Muon counterexample")
    what: str                     # one line
    inputs: tuple[str, ...]       # experiment names of analysis/manifest.py, passed as log paths in this order
    status: str                   # regenerated | small-scale proxy | needs external weights | beyond the seeds
    paper: str                    # the paper's headline number(s)
    ours: Callable[[list[Path]], str] | None = None   # input logs -> our headline (None: "see figure/table")
    claim: Claim | None = None    # None: the paper states no claim this item could test
    full_scale: str = ""          # what regenerates it at the paper's scale, when that is not here
    regime: tuple[GridClaim, ...] = ()  # the same paper item's claims judged on a declared grid (the seed's regime)
    script: str = ""              # filled by collect(): the file's stem

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"Figure {self.label!r}: status {self.status!r} is not one of {STATUSES}")
        if not self.inputs:
            raise ValueError(f"Figure {self.label!r}: no inputs declared")


# Where an item's full-scale version comes from, when it is not run here (the index's "†" notes).
FULL_GPT2 = ("gpt2/experiments/ with gpt2/configs/gpt2-124m-owt.ini on 8 GPUs (torchrun or Slurm, README "
             "'GPT-2 runs on a cluster'); the same scripts plot those logs unchanged")
PRETRAINED = ("`gaugelab import` a Hugging Face GPT-2 directory (gpt2 ... gpt2-xl), then "
              "`gaugelab inspect CKPT --out runs/inspect_gpt2.h5`; the tables take that log unchanged")

STATUSES = ("regenerated", "small-scale proxy", "needs external weights", "beyond the seeds")


def summaries(paths: list[Path]) -> list[dict]:
    """The /summary of each log, in order."""
    import gaugelab_log as gl

    out = []
    for p in paths:
        with gl.open_log(p) as f:
            out.append(gl.summary(f))
    return out


def from_summary(fn: Callable[[list[dict]], str]) -> Callable[[list[Path]], str]:
    """An `ours` (or part of a `decide`) that needs only the logs' summaries."""
    return lambda paths: fn(summaries(paths))


def collect(folder: Path = FIGURES_DIR) -> dict[str, Figure]:
    """script stem -> its declaration, for every fig_*/table_* script in `folder` (sorted by name). A script
    without a FIGURE, or whose FIGURE is not a Figure, is an error naming the file."""
    for p in (str(ANALYSIS), str(folder)):
        if p not in sys.path:
            sys.path.insert(0, p)
    out: dict[str, Figure] = {}
    for path in sorted(folder.glob("*.py")):
        if not path.stem.startswith(("fig_", "table_")):
            continue
        mod = sys.modules.get(path.stem)
        if mod is None or Path(getattr(mod, "__file__", "")).resolve() != path.resolve():
            spec = importlib.util.spec_from_file_location(path.stem, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = mod
            spec.loader.exec_module(mod)
        fig = getattr(mod, "FIGURE", None)
        if not isinstance(fig, Figure):
            raise ValueError(f"{path}: declares no FIGURE = Figure(...) at its top")
        out[path.stem] = replace(fig, script=path.stem)
    return out


# --- the run set: which command made a log -------------------------------------------------------------

def _without_out(tokens: list[str]) -> list[str]:
    """A command's tokens after the binary, less the `--out X` and `--force` the runners append."""
    out, skip = [], False
    for t in tokens[1:]:
        if skip:
            skip = False
        elif t == "--out":
            skip = True
        elif t != "--force" and not t.startswith("--out="):
            out.append(t)
    return out


def _same(args: list[str], tokens: list[str]) -> bool:
    """Whether `tokens` is `args` with each "{run:NAME}..." or "{dir:NAME}..." argument standing for any path."""
    if len(args) != len(tokens):
        return False
    def one(a: str, t: str) -> bool:
        ref = "{run:" if "{run:" in a else "{dir:" if "{dir:" in a else None
        if ref is None:
            return a == t
        head, tail = a.split(ref, 1)[0], a.split("}", 1)[1]
        return t.startswith(head) and t.endswith(tail) and len(t) > len(head) + len(tail)
    return all(one(a, t) for a, t in zip(args, tokens))


def run_set_of(experiment: dict, command: str) -> str:
    """'declared' when `command` (a log's provenance) is the experiment's declared argv, 'fixture' when it is
    its quick argv (seconds-long, for tests), else 'other'."""
    try:
        tokens = _without_out(shlex.split(command))
    except ValueError:
        return "other"
    if _same(experiment["args"], tokens):
        return "declared"
    if "quick" in experiment and _same(experiment["quick"], tokens):
        return "fixture"
    return "other"


def run_set(inputs: list[str], paths: list[Path], experiments: dict) -> str:
    """'declared' only when every input log was made by its declared command; else the first other kind."""
    import gaugelab_log as gl

    kinds = []
    for name, p in zip(inputs, paths):
        with gl.open_log(p) as f:
            kinds.append(run_set_of(experiments[name], str(gl.provenance(f).get("command", ""))))
    return next((k for k in kinds if k != "declared"), "declared")


@dataclass
class Row:
    """What the index prints for one figure."""
    figure: Figure
    ours: str
    state: str                       # "made" | "not run yet (...)"
    verdict: str
    run_set: str = ""
