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

sys.path.insert(0, os.path.join(os.environ.get("GAUGELAB_ROOT", "."), "analysis"))  # run from the repo root, or via make report
from notebook_support import show_figure, show_table, show_verdict  # noqa: E402

# %% [markdown]
# ## Fig. 2 — the data

# %%
show_figure("fig_seed004_data")

# %% [markdown]
# ## Our protocol, one choice at a time
#
# Our default run beside the same run with one choice changed (data, noise, sample count, initialisation, steps),
# and the step-count rule applied to its candidates; the argument from these rows is toys/README.md's "Protocol".

# %%
show_table("table_seed004_protocol")

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

# %% [markdown]
# ## Principled: how many steps, where is the stability boundary, does λ widen it?
# The paper's Table I is matched only by nets still at the constant predictor (300 steps). Trained to the
# plateau instead (T*: doubling the steps gains < 1 % of the training MSE), the λ × lr × initialisation × ε map
# tests the paper's claim, that λ > 0 keeps training stable at larger learning rates: per cell, the stable
# learning rates of each seed against λ = 0, paired by seed; the verdict below is computed from the logs and says
# which cells come out yes, no or undecided (no finding of ours is typed here). The overlays are the explicit-GD
# conditions lr·max κ = 2 (the penalty, eq. 21) and lr·S = 2 (the MSE's top Hessian eigenvalue).

# %%
show_figure("fig_seed004_plateau")
show_figure("fig_seed004_boundary")
show_table("table_seed004_boundary")
show_verdict("table_seed004_boundary")

# %% [markdown]
# ## Scale drift and eq. (20) during training
# Without the penalty the initial imbalance stays (there is no drift to suppress at this scale); with it the gauge
# coordinates relax, after first kicks where lr·κ ≫ 2. How closely eq. (20) predicts one GD step of v once
# lr·κ < 2 is the figure's panel (c); the verdict rests on the drift at λ = 0 first (without it, there is nothing
# for the penalty to suppress: those parts are then not testable here).

# %%
show_figure("fig_seed004_drift")
show_verdict("fig_seed004_drift")
