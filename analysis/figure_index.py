#!/usr/bin/env python3
"""The figure index: every figure and table of the five seed documents, the script and logs that
make ours, its status, and the paper's headline number beside ours. `make figures` regenerates
analysis/FIGURES.md from this file and the logs under runs/ (run it alone: figure_index.py).

Statuses: "regenerated" (same protocol, same scale), "small-scale proxy" (same protocol at a scale
this machine can run; the full-scale command is given), "needs external weights" (pretrained
weights cannot be downloaded here: the same script runs on a user's checkpoint). A test
(analysis/tests/test_figure_index.py) fails if an item has no script or its script is undeclared.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "analysis"))

import gaugelab_log as gl  # noqa: E402
import manifest  # noqa: E402


@dataclass
class Item:
    seed: str                     # "000" ... "004"
    label: str                    # the paper's name for it ("Fig. 5", "Table I", "Muon counterexample")
    what: str                     # one line
    script: str                   # analysis/<script>.py, declared in manifest.FIGURES
    status: str                   # regenerated | small-scale proxy | needs external weights
    paper: str                    # the paper's headline number(s)
    ours: Callable[[list[dict]], str] | None = None  # summaries of the script's input logs -> our headline
    full_scale: str = ""          # what regenerates it at the paper's scale, when that is not here
    ours_logs: Callable[[list[Path]], str] | None = None  # for headlines that need more than /summary


def _s(key: str, fmt: str = ".3g", i: int = 0) -> Callable[[list[dict]], str]:
    return lambda sums: format(sums[i][key], fmt)


def _seed000_grid(sums: list[dict]) -> str:
    by = {}
    for s in sums:
        by.setdefault(str(s.get("condition")), []).append(s)
    parts = []
    for c in ("A", "B", "C"):
        if c in by:
            v = [float(x["final_val_loss"]) for x in by[c]]
            d = [float(x["final_drift_max"]) for x in by[c]]
            parts.append(f"{c}: val {sum(v) / len(v):.3f}, drift {sum(d) / len(d):.2g}")
    return "; ".join(parts)


def _merge_barriers(paths: list[Path]) -> str:
    """Mean barrier per alignment level over the QR-slice merge logs."""
    import seed001_merge as sm

    recs = [r for r in sm.load([str(p) for p in paths if Path(p).exists()]) if r["slice"] == "qr"]
    if not recs:
        return "—"
    return ", ".join(f"{sm.LEVEL_LABEL[lv]} {sum(r['levels'][lv]['barrier'] for r in recs) / len(recs):.2f}"
                     for lv in sm.LEVELS if all(lv in r["levels"] for r in recs)) + f" nats ({len(recs)} pairs)"


def _relu_val(lr: float, lam: float) -> Callable[[list[Path]], str]:
    """Mean ± population std of the final validation MSE over the non-diverged seeds of one sweep cell."""
    import numpy as np

    def get(paths: list[Path]) -> str:
        with gl.open_log(paths[0]) as f:
            t = gl.table(f, "runs")
        keep = np.isclose(t["lr"], lr) & np.isclose(t["lambda"], lam) & np.isfinite(t["final_val_mse"])
        keep &= np.array([str(x) != "diverged" for x in t["stability"]])
        v = t["final_val_mse"][keep]
        return f"lr {lr:g}, λ {lam:g}: val {v.mean():.4f} ± {v.std():.4f}"
    return get


FULL_GPT2 = ("gpt2/experiments/ with gpt2/configs/gpt2-124m-owt.ini on 8 GPUs (torchrun or Slurm, README "
             "'GPT-2 runs on a cluster'); the same scripts plot those logs unchanged")
PRETRAINED = ("`gaugelab import` a Hugging Face GPT-2 directory (gpt2 ... gpt2-xl), then "
              "`gaugelab inspect CKPT --out runs/inspect_gpt2.h5`; the tables take that log unchanged")

ITEMS: list[Item] = [
    # seed 004 — soft gauge fixing in ReLU networks
    Item("004", "Fig. 2", "toy regression data set", "fig_seed004_data", "regenerated", "(data only)"),
    Item("004", "Fig. 3 / Table I", "validation MSE vs gauge-fixing strength λ", "table_seed004_lambda", "regenerated",
         "λ=0: val 0.5169 ± 0.0038; λ=0.05: 0.5156 ± 0.0044; λ=0.5: 0.63 ± 0.16",
         ours_logs=lambda p: "; ".join(_relu_val(1e-2, lam)(p) for lam in (0.0, 0.05, 0.5))),
    Item("004", "Fig. 3", "validation MSE vs λ (figure)", "fig_seed004_lambda", "regenerated",
         "mild optimum near λ = 0.05"),
    Item("004", "Fig. 4 / Table II", "learning-rate stress test, baseline vs λ = 0.2", "table_seed004_lr", "regenerated",
         "baseline val 0.5154 / 0.5215 at lr 5e-3 / 2e-2; gauge-fixed stable where the baseline is unstable",
         ours_logs=lambda p: "; ".join(_relu_val(lr, 0.0)(p) for lr in (5e-3, 2e-2))),
    Item("004", "Fig. 4", "learning-rate stress test (figure)", "fig_seed004_lr", "regenerated",
         "gauge fixing expands the stable lr range"),
    Item("004", "Fig. 5", "Δ_inv over 200 random neuron rescalings", "fig_seed004_invariance", "regenerated",
         "min 3.99e-18, median 6.68e-18, max 1.14e-17",
         lambda s: f"min {s[0]['dinv_min']:.3g}, median {s[0]['dinv_median']:.3g}, max {s[0]['dinv_max']:.3g}"),
    Item("004", "beyond the paper", "λ × lr stability map", "fig_seed004_stability_map", "regenerated", "(not in the paper)"),
    Item("004", "step count, principled", "training MSE vs steps; the plateau criterion's T*", "fig_seed004_plateau",
         "regenerated", "(unstated in the paper)"),
    Item("004", "stability boundary, principled", "λ × lr × init scale × ε map with lr·κ = 2 and lr·S = 2 overlaid",
         "fig_seed004_boundary", "regenerated", "gauge fixing widens the stable lr range"),
    Item("004", "stability boundary (table)", "the claim tested: stable fraction vs λ = 0 with 95 % CIs",
         "table_seed004_boundary", "regenerated", "gauge fixing widens the stable lr range"),
    Item("004", "scale drift / eq. (20)", "max abs(v), penalty pull vs task push, eq. (20) vs GD, balance drift",
         "fig_seed004_drift", "regenerated", "the penalty suppresses scale drift (eq. 20)"),
    # seed 003 — quotient updates
    Item("003", "§2 scalar explosion", "one GD step from balanced vs imbalanced factors, K sweep",
         "fig_seed003_factor_scalar", "regenerated", "η = ε = 1e-3, K = 1e6: loss 5e-7 → ≈ 4.98e11",
         lambda s: f"5e-7 → {s[0]['loss_after_imbalanced_sim']:.4g} (closed form {s[0]['loss_after_imbalanced_closed']:.4g})"),
    Item("003", "§3 matrix factors", "GD over gauges of growing κ, with and without opposite-Gram correction",
         "fig_seed003_factor_matrix", "regenerated", "corrected step gauge-independent",
         lambda s: f"motion spread plain {s[0]['motion_spread_plain_max']:.3g}, corrected {s[0]['motion_spread_quotient_max']:.2g}"),
    Item("003", "§6 Muon counterexample", "2×2 counterexample over K, polar and Newton–Schulz",
         "table_seed003_muon", "regenerated", "closed-form m₁, m₂, L_after",
         lambda s: f"closed = simulated to {s[0]['max_rel_err_polar']:.1g} (polar), {s[0]['max_rel_err_ns5']:.1g} (NS5)"),
    Item("003", "§4 weight decay and Grams", "shared shrink damps absolute, not relative, Gram imbalance",
         "fig_seed003_wd_gram", "regenerated", "relative imbalance unchanged",
         lambda s: f"shrink only: relative {s[0]['rel_start_mean']:.3f} → {s[0]['shrink_rel_final_mean']:.3f}"),
    Item("003", "§5 hyperball", "fixed Frobenius radius does not balance the Grams", "fig_seed003_hyperball",
         "regenerated", "imbalance persists",
         lambda s: f"relative imbalance {s[0]['rel_imbalance_start_mean']:.2f} → {s[0]['rel_imbalance_final_mean']:.2f}"),
    Item("003", "§7/§9 head diagnostic", "one-step represented-motion spread vs κ per rule and wrapper",
         "fig_seed003_head_spread", "regenerated", "opposite-Gram SGD at round-off; plain SGD grows with κ",
         lambda s: f"SGD+full ≤ {s[0]['sgd_full_first_order_max_kappa_le_100']:.1g} (κ ≤ 100); plain SGD up to "
                   f"{s[0]['sgd_none_first_order_max']:.2g}; Muon orthogonal {s[0]['muon_none_first_order_max_orthogonal']:.1g}"),
    Item("003", "§7/§9 head diagnostic (table)", "spread table", "table_seed003_head_spread", "regenerated",
         "(as above)"),
    Item("003", "§7 how often", "multi-step separation under the full correction every k steps",
         "fig_seed003_trajectory", "regenerated", "(the seed asks how often the full correction is needed)"),
    Item("003", "§7 state transport", "next-step spread: none / vector / covector transport x with and without correction",
         "table_seed003_transport", "regenerated", "(the seed names the question, gives no numbers)"),
    # seed 000 — GaugeFix-LRM
    Item("000", "Table 1", "final/best val loss, drift, stability for A/B/C × 3 seeds", "table_seed000_main",
         "small-scale proxy", "drift A 0.052, B 0.000, C 0.047; B 1/3 unstable", _seed000_grid, FULL_GPT2),
    Item("000", "Fig. 2", "val loss and drift per condition", "fig_seed000_conditions", "small-scale proxy",
         "all beat nanoGPT 3.12; B drift 0", _seed000_grid, FULL_GPT2),
    Item("000", "Table 2", "GaugeFix frequency N ∈ {1, 10, 100, 1000} + A", "table_seed000_frequency",
         "small-scale proxy", "N = 100 best (3.0326); N ≤ 100 drift 3.5e-7; N = 1000 drift 0.0044", None, FULL_GPT2),
    Item("000", "Fig. 3", "best val loss and drift vs N", "fig_seed000_frequency", "small-scale proxy",
         "(as Table 2)", None, FULL_GPT2),
    Item("000", "§4.2/§4.4 series", "grad norm, s_Q·s_K and drift per step per condition", "fig_seed000_series",
         "small-scale proxy", "grad norm 0.25 → 55-123 (B, seed 123); s_Q·s_K → ~3 (B) vs ~2.5 (A)", None, FULL_GPT2),
    # seed 001 — the attention gauge group
    Item("001", "Tables 3-4", "assumption checks: projection spectra, bilinear-form rank", "table_seed001_assumptions",
         "needs external weights", "σ_min ≥ 0.12, mean κ 2.0-5.5; all layers full rank", None, PRETRAINED),
    Item("001", "Tables 5-7", "valid vs invalid transform errors", "table_seed001_transforms",
         "needs external weights", "valid 1e-6-1e-5; invalid O(1)-O(1e3)",
         lambda s: f"trained tiny: valid ≤ {s[0]['valid_logit_rel_err_max']:.1g}, invalid ≥ {s[0]['invalid_logit_rel_err_min']:.2g}",
         PRETRAINED),
    Item("001", "Tables 5-7 (figure)", "valid vs invalid error distributions", "fig_seed001_valid_vs_invalid",
         "needs external weights", "gap of ≥ 5 orders of magnitude", None, PRETRAINED),
    Item("001", "Tables 8-9", "canonicalisation metrics and exactness", "table_seed001_canonical",
         "needs external weights", "greedy decode identical on 10 prompts",
         lambda s: f"trained tiny: greedy match {s[0]['canonical_greedy_match']:.0%}, max |Δlogit| "
                   f"{s[0]['canonical_max_abs_logit_diff']:.1g}", PRETRAINED),
    Item("001", "Cor. 4, §7.1-7.2", "gauge dimension counts", "table_seed001_counts", "regenerated",
         "98 304 per layer; 1 179 648 for 12 layers",
         lambda s: f"trained tiny (h 4, d_k 16): {s[0]['gauge_dim_per_layer']} per layer (GPT-2 sizes: unit-tested 98 304)"),
    Item("001", "§7.4, Prop. 47, Alg. 3 (figure)", "loss barrier between independently trained models, naive vs aligned",
         "fig_seed001_merge_barrier", "small-scale proxy", "no number: \"naive averaging fails\", alignment should help",
         None, "gaugelab merge-models on any two checkpoints; make figures MERGE=full for 6 pairs of 2000-step models",
         ours_logs=lambda p: _merge_barriers(p)),
    Item("001", "§7.4 (table)", "barrier per level and slice, each alignment step's own contribution",
         "table_seed001_merge_barrier", "small-scale proxy", "no number", None,
         "gaugelab merge-models on any two checkpoints; make figures MERGE=full"),
    Item("001", "Prop. 9, §5.1, §5.3", "curvature along the orbits; full, quotient and gauge-covariant sharpness",
         "table_seed001_sharpness", "small-scale proxy", "vertical curvature 0 at a critical point; sharpness on the quotient",
         lambda s: f"λ_max moves {s[0]['full_change_max']:.0%} under gauges (P·H·P too: {s[0]['quotient_change_max']:.0%}); "
                   f"covariant metric {s[0]['metric_change_max']:.0e}", "gaugelab hessian on any checkpoint"),
    # seed 002 — learnable multipliers
    Item("002", "noise–WD equilibrium", "norm ∝ √(η/λ) under pure noise; a multiplier learns its scale away",
         "fig_seed002_noise_wd", "small-scale proxy", "equilibrium norm ∝ √(η/λ)",
         lambda s: f"exponent in η/λ: AdamW {s[0]['adamw_exponent_ratio_mean']:.3f}",
         "the paper's LLM runs are not reproduced; this is a qualitative proxy"),
]


# Is the paper's claim reproduced by our measurement? yes / no / partly / — (no claim), with the reason;
# separate from whether the item was made (its "ours" column) and from its status (proxy or not).
CLAIMS: dict[tuple[str, str], str] = {
    ("004", "Fig. 2"): "—",
    ("004", "Fig. 3 / Table I"): "no: λ > 0 never helps under our protocol (λ = 0.05 worse, λ = 0.5 unstable)",
    ("004", "Fig. 3"): "no: no optimum near λ = 0.05",
    ("004", "Fig. 4 / Table II"): "no: λ = 0.2 narrows the stable lr range (explicit GD on a stiff penalty)",
    ("004", "Fig. 4"): "no: the opposite of the paper's claim",
    ("004", "Fig. 5"): "yes, by construction (the step count was chosen on this figure); at the plateau step count Δ_inv ≤ 5.1e-15 (fig_seed004_drift: O(1) outputs, rounding-level)",
    ("004", "beyond the paper"): "—",
    ("004", "step count, principled"): "— (the paper's Table I is matched only by nets still at the constant predictor)",
    ("004", "stability boundary, principled"): "partly: never a wider divergence-free lr range; fewer oscillating seeds at "
                                               "small init (σ ≤ 0.3), without divergence only with a bounded ε (0.05)",
    ("004", "stability boundary (table)"): "partly (as the map): stable fraction +0.10 [+0.04, +0.16] at σ 0.1, ε 0.05",
    ("004", "scale drift / eq. (20)"): "partly: λ > 0 removes the initial imbalance (max abs(v) 4 → 0.01); at λ = 0 there "
                                       "is no drift to suppress (max abs(v) stays ≈ 3)",
    ("003", "§2 scalar explosion"): "yes: closed form = simulation",
    ("003", "§3 matrix factors"): "yes: corrected step gauge-independent to round-off",
    ("003", "§6 Muon counterexample"): "yes: closed form = simulation",
    ("003", "§4 weight decay and Grams"): "yes",
    ("003", "§5 hyperball"): "yes",
    ("003", "§7/§9 head diagnostic"): "yes (SGD + full correction; other rules' spreads are problem-specific)",
    ("003", "§7/§9 head diagnostic (table)"): "yes (as above)",
    ("003", "§7 how often"): "— (no claim; measured: every step for general gauges — one uncorrected step in two "
                             "separates by ~0.3 for good; any k for diagonal gauges with the diagonal correction between)",
    ("003", "§7 state transport"): "— (no claim; measured: covector for momentum with the full correction (exact); without it no "
                                   "transport helps; Adam's second moment has none for general gauges)",
    ("000", "Table 1"): "partly: B's drift 0 yes; B's late instability not seen at this scale",
    ("000", "Fig. 2"): "partly: drift yes; losses not comparable (tiny model)",
    ("000", "Table 2"): "no: at this scale N changes the loss by less than the seeds",
    ("000", "Fig. 3"): "no (as Table 2)",
    ("000", "§4.2/§4.4 series"): "no: no spikes; s_Q·s_K reaches 1.09, not ~3",
    ("001", "Tables 3-4"): "partly: assumptions hold on our trained tiny model (no rank-deficient projection, every layer full rank); the pretrained weights are not here",
    ("001", "Tables 5-7"): "yes (trained tiny): valid at rounding, invalid O(1)",
    ("001", "Tables 5-7 (figure)"): "yes (trained tiny)",
    ("001", "Tables 8-9"): "yes (trained tiny): greedy decode identical",
    ("001", "Cor. 4, §7.1-7.2"): "yes",
    ("001", "§7.4, Prop. 47, Alg. 3 (figure)"): "partly: alignment lowers the barrier (residual permutation most, Alg. 3 "
                                               "a little more), but no alignment reaches a barrier-free path at this scale",
    ("001", "§7.4 (table)"): "partly (as the figure); MLP weight matching raises the barrier again here",
    ("001", "Prop. 9, §5.1, §5.3"): "partly: orbit curvature = −∇L·a (0 at a critical point) yes; the Euclidean quotient "
                                    "sharpness is not gauge-invariant — only a gauge-covariant metric makes it so",
    ("002", "noise–WD equilibrium"): "yes: exponent ≈ 0.5",
}


def inputs_of(script: str) -> list[Path]:
    fig = manifest.FIGURES.get(script)
    return [ROOT / manifest.EXPERIMENTS[e]["out"] for e in fig["inputs"]] if fig else []


def ours_of(item: Item) -> tuple[str, str]:
    """(headline, state): state is 'made' when every input log exists, else 'not run yet'."""
    logs = inputs_of(item.script)
    if not logs or not all(p.exists() for p in logs):
        return "—", "not run yet (`make figures`)"
    if item.ours is None and item.ours_logs is None:
        return ("see table" if item.script.startswith("table_") else "see figure"), "made"
    try:
        if item.ours_logs is not None:
            return item.ours_logs(logs), "made"
        sums = []
        for p in logs:
            with gl.open_log(p) as f:
                sums.append(gl.summary(f))
        return item.ours(sums), "made"
    except (gl.LogError, KeyError, ValueError, IndexError) as e:
        return f"(unreadable: {e})", "made"


def render() -> str:
    lines = ["# Figure index (generated by analysis/figure_index.py; do not edit)", "",
             "Every figure and table of the five seed documents: the script that makes ours, the command behind "
             "its logs, its status, and the paper's headline beside ours. `make figures` rebuilds everything "
             "(expensive runs cached under runs/), `make report` renders the narrative notebooks.", ""]
    for seed in ("000", "001", "002", "003", "004"):
        lines += [f"## Seed {seed}", "",
                  "| item | what | script | status | paper | ours | paper's claim reproduced? | logs (commands in "
                  "analysis/manifest.py) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        notes = {}
        for it in (i for i in ITEMS if i.seed == seed):
            ours, state = ours_of(it)
            fig = manifest.FIGURES.get(it.script, {"inputs": []})
            cmds = ", ".join(f"`{manifest.EXPERIMENTS[e]['out']}`" for e in fig["inputs"]) or "—"
            status = it.status
            if it.full_scale:
                mark = notes.setdefault(it.full_scale, "†" * (len(notes) + 1))
                status += " " + mark
            claim = CLAIMS.get((it.seed, it.label), "—")
            lines.append(f"| {it.label} | {it.what} | `{it.script}.py` | {status} | {it.paper} | {ours} ({state}) "
                         f"| {claim} | {cmds} |")
        lines.append("")
        for text, mark in notes.items():
            lines += [f"{mark} Full scale: {text}.", ""]
    lines += instrument_section()
    return "\n".join(lines)


def instrument_section() -> list[str]:
    """Beyond the seeds: the learning-rate-sensitivity grid's table, when `make lr-grid` has made it."""
    out = ["## Beyond the seeds: the instability instrument", "",
           "Learning-rate sensitivity of the Q/K-gauge handlings (A, B, C, D, QK-norm, E; AdamW and Muon) on the "
           "Shakespeare corpus (gpt2/README.md, \"The instability instrument\"; `make lr-grid`, "
           "`analysis/fig_lr_sensitivity.py`). No seed runs this experiment, so there is no paper column; the "
           "seed-000 claim it tests is that GaugeFix alone (B) is less stable than weight decay (A). From the "
           "protocol's balanced start (every multiplier 1, no biases) B ≡ C up to rounding: r_Q and r_K get "
           "identical gradients, so there is no drift to fix (gpt2/README.md, \"Why B ≡ C\"); B − C is the noise "
           "floor and B − A the effect of the Q/K decay. The offset family (prefix \"offset start\") starts each "
           "head off the balanced slice by a pure gauge move (`--qk-gauge-init 1`), so that the handlings have "
           "something to act on.", ""]
    table = Path(os.environ.get("GAUGELAB_FIGURES", ROOT / "figures")) / "table_lr_sensitivity.md"
    if table.exists():
        out += [table.read_text().strip(), ""]
    else:
        out += ["(not made here: run `make lr-grid`, ~1 h on 2 cores)", ""]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "analysis" / "FIGURES.md"))
    a = ap.parse_args()
    Path(a.out).write_text(render())
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
