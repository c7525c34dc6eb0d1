# %% [markdown]
# # Seed 004 — scale redundancy and soft gauge fixing in ReLU networks: paper vs ours
#
# Terin studies a one-hidden-layer ReLU network f(x) = W₂σ(W₁x + b₁) + b₂ (H = 20) whose neuron-wise
# rescalings are an exact symmetry, and a soft gauge-fixing penalty G(θ) that balances incoming and
# outgoing norms. Plain full-batch GD on a noisy 1-D regression; Table I / Fig. 3 sweep the penalty
# strength λ, Table II / Fig. 4 stress the learning rate, Fig. 5 checks invariance under 200 random
# rescalings. The paper leaves the noise level, sample counts, initialisation, ε, step count, seeds
# and the stability rule unstated: our choices and their reasons are in `toys/README.md`, each a
# flag of `gaugelab toy relu`.

# %%
import os
import sys
from pathlib import Path

# The repository root: $GAUGELAB_ROOT (set by `make report`), else the nearest parent of the working
# directory holding analysis/manifest.py.
ROOT = Path(os.environ.get("GAUGELAB_ROOT") or Path.cwd()).resolve()
while not (ROOT / "analysis" / "manifest.py").exists() and ROOT != ROOT.parent:
    ROOT = ROOT.parent
sys.path.insert(0, str(ROOT / "analysis"))
from notebook_support import show_figure, show_markdown, show_table, summary  # noqa: E402

# %% [markdown]
# ## Fig. 2 — the data

# %%
show_figure("fig_seed004_data")

# %% [markdown]
# ## Table I and Fig. 3 — gauge-fixing strength λ

# %%
show_table("table_seed004_lambda")
show_figure("fig_seed004_lambda")

# %% [markdown]
# ## Table II and Fig. 4 — learning-rate stress test

# %%
show_table("table_seed004_lr")
show_figure("fig_seed004_lr")

# %% [markdown]
# ## Fig. 5 — invariance under random rescalings

# %%
show_figure("fig_seed004_invariance")

# %% [markdown]
# ## Beyond the paper — the λ × lr stability map

# %%
show_figure("fig_seed004_stability_map")
