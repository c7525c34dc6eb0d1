#!/usr/bin/env python3
"""Seed 004 Fig. 2: the toy regression data set (training samples on [-2, 2], the noiseless target on
the validation grid over [-3, 3]), with the first seed's trained net on the same grid.

Input: the log of `gaugelab toy relu --save-data` (/arrays x_train, y_train, x_val, f_val, pred_val).
"""
from __future__ import annotations

import _analysis  # noqa: F401  (analysis/ on the import path)

import figstyle
import gaugelab_log as gl
import seed004_relu as s4
from figure_decl import Figure


FIGURE = Figure(seed="004", label="Fig. 2", what="toy regression data set", inputs=("relu_data",),
                status="regenerated", paper="(data only)")


def main(path: str) -> None:
    gl.require(path, made_by="gaugelab toy relu --save-data --out " + path)
    with gl.open_log(path) as f:
        a = {k: gl.array(f, k) for k in ("x_train", "y_train", "x_val", "f_val", "pred_val")}
        cfg = gl.provenance(f)["config"]
        summ = gl.summary(f)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.scatter(a["x_train"], a["y_train"], s=9, alpha=0.6, label=f"training samples (n = {len(a['x_train'])})")
    ax.plot(a["x_val"], a["f_val"], "k-", lw=1.4, label="noiseless target on the validation grid")
    if len(a["pred_val"]):
        ax.plot(a["x_val"], a["pred_val"], "C3--", lw=1.2, label=f"trained net, seed {cfg['seed']} (ours)")
    for x in (cfg["train-lo"], cfg["train-hi"]):
        ax.axvline(x, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, frameon=False)  # off the samples
    ax.set_title("seed 004 Fig. 2: y = sin(2.5x) + 0.2cos(6x) + 0.1x + η")
    caption = f"""
Seed 004 Fig. 2 (regenerated from the log). Training samples x ~ U[{cfg['train-lo']:g}, {cfg['train-hi']:g}] with
Gaussian noise σ = {cfg['noise-std']:g}; the black curve is the noiseless target on the {cfg['n-val']}-point validation
grid over [{cfg['val-lo']:g}, {cfg['val-hi']:g}] (validation targets {'noisy' if cfg['val-noise'] else 'noiseless'}, as the
paper's caption reads). Dashed: our trained net of the first seed after {cfg['steps']} GD steps at lr = {cfg['lr']:g},
λ = {cfg['lambda']:g} — still close to the constant predictor, which is what the paper's Table I numbers imply
(train MSE {summ['final_train_mse_mean']:.4f} vs the constant predictor's {summ['const_train_mse_mean']:.4f} on these
points; validation {summ['final_val_mse_mean']:.4f} vs {summ['const_val_mse_mean']:.4f}). The paper shows the data only;
its σ and sample count are unstated (ours: toys/README.md). {s4.differences()}
"""
    figstyle.save(fig, "fig_seed004_data", caption)


if __name__ == "__main__":
    figstyle.run(main, figstyle.parse_args(__doc__, default="runs/relu_data.h5").log)
