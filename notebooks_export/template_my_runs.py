# %% [markdown]
# # My runs — a template
#
# Copy this file, list your runs in `RUNS` (run directories of `gaugelab train`, or any gaugelab log: toy,
# sweep, diag), and run it as a script (`/usr/bin/python3 notebooks_export/template_my_runs.py`) or as a
# notebook (`/usr/bin/python3 analysis/py2nb.py notebooks_export/template_my_runs.py my_runs.ipynb`, then
# open it in Jupyter). It prints which settings differ between the runs and their summaries (as
# `gaugelab compare`) and draws the standard curves on shared axes (as `gaugelab plot`): loss, validation
# loss, Q/K drift, gradient norm and attention-logit maximum, those the runs hold. The environment variable MY_RUNS (space-separated) overrides `RUNS`;
# figures go to MY_FIGURES (default: figures/my_runs).

# %%
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.environ.get("GAUGELAB_ROOT", "."), "analysis"))
import matplotlib  # noqa: E402

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
import compare_runs  # noqa: E402
import plot_runs  # noqa: E402
import run_set  # noqa: E402

RUNS = os.environ.get("MY_RUNS", "runs/train_A_s42 runs/train_B_s42 runs/train_C_s42").split()
FIGURES = Path(os.environ.get("MY_FIGURES", "figures/my_runs"))

present = [r for r in RUNS if Path(r).exists()]
missing = [r for r in RUNS if not Path(r).exists()]
if missing:
    print("not found (left out):", " ".join(missing))
runs = [run for r in present for run in run_set.load_all(r)]
if not runs:
    sys.exit("no runs to show: set RUNS or MY_RUNS")

# %% [markdown]
# ## What differs, and how each run ended

# %%
header, body = compare_runs.rows(runs)
print(compare_runs.markdown(header, body))

# %% [markdown]
# ## Curves on shared axes (a centred mean of 11 points; the legend holds the settings that differ)

# %%
wanted = [m for m in ("loss", "val_loss", "drift_max", "grad_norm", "attn_logit_max") if m in run_set.series_names(runs)]
fig, labels = plot_runs.draw(runs, plot_runs.choose_metrics(runs, wanted), smooth_n=10)
FIGURES.mkdir(parents=True, exist_ok=True)
plot_runs.save(fig, FIGURES / "curves.png")
print("curves:", FIGURES / "curves.png")
