# %% [markdown]
# # Seed 002 — learnable multipliers: a small qualitative proxy
#
# The paper's claim concerns LLM pretraining: under weight decay, a matrix driven largely by
# gradient noise settles at an equilibrium norm ∝ √(η/λ) set by the optimizer's hyperparameters
# rather than by the data, and learnable scalar / row / column multipliers let the model learn its
# scale away from that equilibrium. Those runs cannot be reproduced on 2 CPU cores. What we show is
# the mechanism, in the `noise-wd` toy (`toys/noise_wd.cpp`), and — at GPT-2 scale — the multipliers
# themselves are the subject of the seed-000 notebook (GaugeFix-LRM).

# %%
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("GAUGELAB_ROOT", "."), "analysis"))  # run from the repo root, or via make report
from notebook_support import show_figure, show_markdown, show_summary, summary  # noqa: E402

# %%
s = summary("toy_noise_wd")
show_summary(s)
show_figure("fig_seed002_noise_wd")

# %% [markdown]
# **What is compared.** The equilibrium argument predicts exponents ½ of ‖W‖ in η/λ and 0 in ηλ. The
# exponents fitted for SGD (beside its closed form) and AdamW are printed above from the run's log, and the
# claim's verdict in FIGURES.md tests AdamW's against ½ (no exponent of ours is typed here).
#
# **What differs, and why.** The multiplier helps only for targets whose scale lies below the
# equilibrium norm: above it, a larger multiplier scales up the effective step and with it the
# noise, and the plain matrix fits better. The paper's setting (Adam/Muon on transformers, where
# the relevant scales are far below equilibrium) is not this toy's; we report the limit rather
# than choose targets that hide it.
