#!/usr/bin/env python3
"""Seed 004's protocol, one change at a time: our default `gaugelab toy relu` (λ = 0, lr 1e-2, 10 seeds) beside the
same run with one protocol choice changed (analysis/manifest.py RELU_PROTOCOL), the step-count rule applied to its
candidates, and Tables I-II's grid again with a larger ε. The evidence toys/README.md's "Protocol" section argues from.

Input: the logs of experiment toy_relu, then of each relu_protocol_* in RELU_PROTOCOL's order, then relu_tables_eps002
(a sweep). Writes table_seed004_protocol.md.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import manifest
import figstyle
import gaugelab_log as gl
import seed004_relu as s4
from figure_decl import Figure, summaries

INPUTS = ("toy_relu", *(f"relu_protocol_{k}" for k in manifest.RELU_PROTOCOL), "relu_tables_eps002")


def step_rule(by_steps: dict[int, float]) -> int | None:
    """The step-count rule (toys/README.md): the largest candidate count whose Δ_inv median (the first seed's 200
    rescalings) lies in Fig. 5's [min, max]; None when none does."""
    lo, hi = s4.PAPER_FIG5["min"], s4.PAPER_FIG5["max"]
    inside = [t for t, med in by_steps.items() if lo <= med <= hi]
    return max(inside) if inside else None


def _candidates(paths) -> dict[int, float]:
    """steps (each candidate log's own) -> its Δ_inv median, over RELU_STEP_CANDIDATES."""
    at = dict(zip(INPUTS[:-1], paths[:-1]))
    out = {}
    for name in manifest.RELU_STEP_CANDIDATES:
        out[cfg_steps(at[name])] = float(summaries([at[name]])[0]["dinv_median"])
    return dict(sorted(out.items()))


def _ours(paths) -> str:
    picked = step_rule(_candidates(paths))
    return (f"the step-count rule picks {picked if picked is not None else 'none of the candidates'} (the default "
            f"{cfg_steps(paths[0])})")


FIGURE = Figure(
    seed="004", label="protocol (ours)", what="our default protocol beside one change at a time; the step-count rule",
    inputs=INPUTS, status="beyond the seeds",
    paper=(f"states H = 20, the target and intervals, plain GD, MSE + λG; λ = 0: train {s4.PAPER_TABLE1[0.0][0]:g}, "
           f"val {s4.PAPER_TABLE1[0.0][2]:g}; Fig. 5 Δ_inv in [{s4.PAPER_FIG5['min']:g}, {s4.PAPER_FIG5['max']:g}]"),
    ours=_ours)


def main(*paths: str) -> None:
    for name, p in zip(INPUTS, paths):
        gl.require(p, made_by=f"make figures (experiment {name})")
    if len(paths) != len(INPUTS):
        raise SystemExit(f"table_seed004_protocol.py: {len(INPUTS)} logs expected ({', '.join(INPUTS)}), "
                         f"{len(paths)} given")
    s = summaries(list(paths[:-1]))
    lines = ["| protocol (the change from the default) | flags | train MSE | val MSE | Δ_inv median (first seed) | "
             "stability | seeds diverged |", "|---|---|---|---|---|---|---|"]
    rows = [("**default**", "", s[0])] + [(what, " ".join(flags), si) for (what, flags), si
                                          in zip(manifest.RELU_PROTOCOL.values(), s[1:])]
    for what, flags, si in rows:
        lines.append(f"| {what} | {f'`{flags}`' if flags else '—'} | "
                     f"{s4.mean_std(si['final_train_mse_mean'], si['final_train_mse_std'])} | "
                     f"{s4.mean_std(si['final_val_mse_mean'], si['final_val_mse_std'])} | {si['dinv_median']:.2g} | "
                     f"{si['stability']} | {int(si['seeds_diverged'])} |")
    cand = _candidates(list(paths))
    picked = step_rule(cand)
    lo, hi = s4.PAPER_FIG5["min"], s4.PAPER_FIG5["max"]
    rule = ", ".join(f"{t} → {m:.2g}" for t, m in cand.items())
    pts, cfg = s4.sweep_points(paths[-1], made_by="make figures (experiment relu_tables_eps002)")
    stable = sum(1 for st in pts["stability"] if st == "stable")
    i = s4.point_index(pts, lr=1e-2, **{"lambda": 0.5})
    i0 = s4.point_index(pts, lr=1e-2, **{"lambda": 0.0})
    eps = (f"With ε = {cfg['settings']['eps']:g} on Tables I-II's grid (experiment relu_tables_eps002): {stable} of "
           f"{len(pts['point'])} points stable; val MSE at lr 1e-2: λ = 0: {pts['final_val_mse_mean'][i0]:.4f}, "
           f"λ = 0.5: {pts['final_val_mse_mean'][i]:.4f}." if i is not None and i0 is not None else "")
    caption = f"""
Seed 004's protocol, one choice at a time (the last row: the first protocol's five together), each row a
`gaugelab toy relu` at λ = 0, lr = 1e-2 (the default's other settings; mean ± population std over the seeds that
did not diverge). A constant predictor scores
{s[0]['const_train_mse_mean']:.4f} (train) and {s[0]['const_val_mse_mean']:.4f} (validation) on the default's data.
The step-count rule: the largest of the candidate counts whose Δ_inv median (the first seed's rescalings) lies in
Fig. 5's [{lo:g}, {hi:g}]: {rule}; it picks {picked if picked is not None else 'none'} (the default runs
{cfg_steps(paths[0])}). {eps} The argument from these rows is
toys/README.md's "Protocol" section; the paper states none of these choices.
"""
    figstyle.save_table("table_seed004_protocol", "\n".join(lines) + "\n\n" + caption.strip())


def cfg_steps(path: str) -> int:
    """The steps a `toy relu` log ran (its resolved settings)."""
    with gl.open_log(path) as f:
        return int(gl.provenance(f)["config"]["steps"])


if __name__ == "__main__":
    figstyle.run(main, *figstyle.parse_args(__doc__, many=True).logs)
