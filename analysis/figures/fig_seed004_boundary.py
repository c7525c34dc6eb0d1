#!/usr/bin/env python3
"""Beyond seed 004, principled: where does soft gauge fixing change GD's stability? The λ × lr map of
diverged / oscillating seeds for every initialisation scale (columns) and ε (rows), trained for the
plateau step count (fig_seed004_plateau), with the explicit-GD stability boundaries overlaid:
lr·maxᵢ κᵢ = 2 (the penalty's stiffest gauge coordinate, eq. 21, at the trained point of the row's smallest
lr; a ▼ per λ row) and lr·S = 2 (S: the Hessian's top eigenvalue of the MSE alone at the trained
point of λ = 0's smallest lr, a dashed line).

Input: the log of `gaugelab sweep relu --eps ... --init-scale ... --lambda ... --lr ... --sharpness` (experiment
relu_boundary): /tables/points, /tables/runs and /tables/run_series.
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import numpy as np

import figstyle
import seed004_relu as s4
import table_seed004_boundary
from figure_decl import Figure


FIGURE = Figure(seed="004", label="stability boundary, principled",
                what="λ × lr × init scale × ε map with lr·κ = 2 and lr·S = 2 overlaid", inputs=("relu_boundary", "relu_boundary_dense"),
                status="regenerated", paper="gauge fixing widens the stable lr range", claim=table_seed004_boundary.CLAIM)


def grid(runs: dict, key: str) -> list[float]:
    return sorted({float(v) for v in runs[key]}) if key in runs else []


def main(path: str) -> None:
    pts, cfg = s4.sweep_points(path, made_by="make figures (experiment relu_boundary)")
    runs, series = s4.sweep_runs(path), s4.run_series(path)
    settings = cfg["settings"]
    lrs, lams = grid(runs, "lr"), grid(runs, "lambda")
    inits = grid(runs, "init-scale") or [float(settings["init-scale"])]
    epss = grid(runs, "eps") or [float(settings["eps"])]
    col = {k: np.asarray(runs[k]) for k in runs}
    n = len(col["row"])
    init_of = col["init-scale"].astype(float) if "init-scale" in col else np.full(n, inits[0])
    eps_of = col["eps"].astype(float) if "eps" in col else np.full(n, epss[0])
    # the last logged kappa_max of every run (its trained point)
    last_kappa = np.full(n, np.nan)
    order = np.lexsort((series["step"], series["run"]))
    run_sorted = series["run"][order]
    last = np.r_[np.nonzero(np.diff(run_sorted))[0], len(order) - 1]
    last_kappa[run_sorted[last].astype(int)] = series["kappa_max"][order][last]
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    fig, axes = plt.subplots(len(epss), len(inits), figsize=(3.3 * len(inits) + 1.2, 2.5 * len(epss) + 0.8),
                             squeeze=False, sharex=True, sharey=True)
    cmap = ListedColormap(plt.get_cmap("Reds")(np.linspace(0.0, 0.85, 256)))
    rows_txt = []
    for a, eps in enumerate(epss):
        for b, init in enumerate(inits):
            ax = axes[a][b]
            bad = np.full((len(lams), len(lrs)), np.nan)
            for i, lam in enumerate(lams):
                for j, lr in enumerate(lrs):
                    m = (np.isclose(col["lambda"].astype(float), lam) & np.isclose(col["lr"].astype(float), lr)
                         & np.isclose(init_of, init) & np.isclose(eps_of, eps))
                    if not m.any():
                        continue
                    st = col["stability"][m]
                    nd, no = int((st == "diverged").sum()), int((st == "oscillating").sum())
                    bad[i, j] = (nd + no) / m.sum()
                    ax.text(j, i, f"{nd}/{no}", ha="center", va="center", fontsize=6,
                            color="w" if bad[i, j] > 0.6 else "k")
                # the penalty's boundary: 2 / κ_max at the trained point of this row's smallest lr (median over seeds)
                m0 = (np.isclose(col["lambda"].astype(float), lam) & np.isclose(col["lr"].astype(float), lrs[0])
                      & np.isclose(init_of, init) & np.isclose(eps_of, eps))
                k = np.nanmedian(last_kappa[m0]) if m0.any() else np.nan
                if lam > 0 and np.isfinite(k) and k > 0 and lrs[0] <= 2 / k <= lrs[-1]:  # none beyond the grid
                    x = np.interp(np.log(2 / k), np.log(lrs), np.arange(len(lrs)))
                    ax.plot(x, i + 0.38, "v", color="C0", ms=6, clip_on=False)
            im = ax.imshow(bad, origin="lower", aspect="auto", cmap=cmap, vmin=0, vmax=1)
            # the task's boundary: 2 / S_task at λ = 0's smallest lr
            m0 = (np.isclose(col["lambda"].astype(float), 0.0) & np.isclose(col["lr"].astype(float), lrs[0])
                  & np.isclose(init_of, init) & np.isclose(eps_of, eps))
            if "sharpness_task_final" in col and m0.any():
                s_task = np.nanmedian(col["sharpness_task_final"][m0].astype(float))
                if lrs[0] <= 2 / s_task <= lrs[-1]:
                    ax.axvline(np.interp(np.log(2 / s_task), np.log(lrs), np.arange(len(lrs))), color="C2", ls="--", lw=1.2)
                rows_txt.append((eps, init, 2 / s_task, k))
            ax.set_title(f"init σ = {init:g}, ε = {eps:g}", fontsize=8)
            ax.set_xticks(range(len(lrs)), [f"{v:g}" for v in lrs], rotation=60, fontsize=7)
            ax.set_yticks(range(len(lams)), [f"{v:g}" for v in lams], fontsize=7)
            if a == len(epss) - 1:
                ax.set_xlabel("learning rate")
            if b == 0:
                ax.set_ylabel("λ")
    fig.colorbar(im, ax=axes, label="fraction of seeds diverged or oscillating", shrink=0.8)
    axes[0][0].plot([], [], "v", color="C0", label="lr·max κ = 2 (penalty)")
    axes[0][0].plot([], [], "--", color="C2", label="lr·S_task = 2 (MSE)")
    fig.legend(loc="upper center", ncol=2, fontsize=8, frameon=False, bbox_to_anchor=(0.45, 1.02))
    caption = f"""
Beyond seed 004, the stability boundary: for every initialisation scale σ (columns: every weight and bias N(0, σ²))
and ε of eq. (9) (rows), the λ × lr map of seeds diverged / oscillating (cell text "d/o" of {cfg['seeds']} seeds; colour:
their fraction), each trained {settings['steps']} steps (the plateau count, fig_seed004_plateau). Overlays, the
explicit-GD stability conditions at the trained point of each row's smallest lr (median over seeds): ▼ where
lr·maxᵢ κᵢ = 2 for that λ (none: beyond the grid; κᵢ = (2λ/H)[(n₁ᵢ+ε)⁻² + (n₂ᵢ+ε)⁻²], the penalty's stiffest gauge coordinate), dashed where
lr·S = 2 (S: top Hessian eigenvalue of the MSE at λ = 0). Beyond a ▼ a gauge-fixed run can only stay stable by moving
its small norms up (GD's edge of stability: the final lr·S of every surviving run at lr ≥ 0.02 is ≈ 2, see
table_seed004_boundary). {s4.protocol(settings, cfg['seeds'])}
"""
    figstyle.save(fig, "fig_seed004_boundary", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/relu_boundary.h5",
                                           null="runs/relu_boundary_dense.h5").log)
