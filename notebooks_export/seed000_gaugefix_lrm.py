# %% [markdown]
# # Seed 000 — GaugeFix-LRM: paper vs ours
#
# The paper trains GPT-2 124M with learnable multipliers (LRM) on OpenWebText (~10B tokens, 8×A100,
# 3 seeds) under three conditions: **A** weight decay on every multiplier, **B** no weight decay on
# the Q/K multipliers and the function-preserving GaugeFix g = √((s_Q+ε)/(s_K+ε)) (r_Q/g, r_K·g, Q/K
# biases alike) every N steps, **C** neither. It reports final/best validation loss, the final Q/K
# drift max |log(s_Q/s_K)|, stability (Table 1, Fig. 2), a frequency sweep N ∈ {1, 10, 100, 1000}
# (Table 2, Fig. 3), and in words the gradient-norm spikes and the growth of s_Q·s_K.
#
# **Scale.** Those runs need GPUs. Here the same trainer (`gaugelab train`, the same code path a
# cluster runs under torchrun/Slurm) runs the `tiny-cpu` config on the built-in synthetic corpus
# (whose next tokens need attention, so Q/K multipliers do learn). Absolute losses are therefore not
# comparable; what can be compared is the mechanism the paper names: drift after each fix under B, drift
# under A and C, its size under A vs C, and the frequency dependence between fixes, where the runs make
# drift at all (the verdicts below say where they do not). The full-scale path: `gpt2/experiments/` with
# `gpt2/configs/gpt2-124m-owt.ini` (README, "GPT-2 runs").

# %%
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("GAUGELAB_ROOT", "."), "analysis"))  # run from the repo root, or via make report
from notebook_support import show_figure, show_headline, show_table, show_verdict  # noqa: E402

# %% [markdown]
# ## Table 1 and Fig. 2 — conditions A, B, C

# %%
show_table("table_seed000_main")
show_figure("fig_seed000_conditions")
show_headline("table_seed000_main")
show_verdict("table_seed000_main")

# %% [markdown]
# ## Table 2 and Fig. 3 — GaugeFix frequency

# %%
show_table("table_seed000_frequency")
show_figure("fig_seed000_frequency")
show_verdict("table_seed000_frequency")

# %% [markdown]
# ## The time series the paper describes in words

# %%
show_figure("fig_seed000_series")
show_verdict("fig_seed000_series")

# %% [markdown]
# ## Where ours differs, and why
#
# - **Scale and data**: tiny model, synthetic corpus, minutes of CPU; the paper: 124M, OpenWebText,
#   ~2.5 h on 8×A100 per run. Validation losses live on different scales (the figure gives the paper
#   its own axis); the comparison is between conditions.
# - **Drift under B**: the paper reports 0.0000 (and 3.5e-7 for N ≤ 100). Ours is at round-off on the
#   steps right after a fix (the fix makes s_Q = s_K up to ε and rounding); sampled between fixes it
#   measures the drift accumulated over fewer than N optimizer steps. The trainer logs `after_fix`
#   so the two readings can be separated.
# - **What the tiny runs show**: their drift, losses and s_Q·s_K per condition and seed are in Table 1 and
#   the figures above, computed from the logs (no number of them is typed here). In float32 from the
#   balanced start every condition's drift stays at round-off (r_Q and r_K get identical gradients,
#   gpt2/README.md "Why B ≡ C"), so these runs cannot show the paper's drift claim: the verdicts above say
#   "not testable here" with the reason, and the claim is judged in the seed's regime (bf16) instead.
# - **Frequency (Table 2)**: the paper reports max drift 3.5e-7 for every N ≤ 100. Drift sampled right
#   after a fix is at round-off whatever N is (sampled every 10 steps, every sample of N = 10 falls just after one), so
#   the runs sample every 7 steps, between fixes; the table's last column keeps only those samples, and
#   shows whether the drift between fixes grows with N. We suspect the paper's N ≤ 100 rows share the
#   aliasing (its sampling cadence is not stated). In the seed's regime (bf16, its lr and 20 000 steps) the
#   claim is judged only where the drift that grows between two fixes 1000 steps apart could show it; the
#   verdict under Table 2 says whether it can, from the late-instability runs' condition C.
# - **Stability**: the paper's seed-123 spike (grad norm ~0.25 → 55-123 after step 15 000) is a
#   late-training, long-schedule event; our rule (grad norm above k × its running median after
#   warm-up, gpt2/README.md) is applied identically. The tiny proxy's few-minute schedule cannot reach
#   that regime; the late-instability experiment (bf16, the seed's lr and 20 000-step schedule, 20 seeds
#   per arm) can, and its verdict, with its power, is printed with Table 1 above. We report what our runs
#   show, not the paper's labels.

# %% [markdown]
# ## Beyond the paper: learning-rate sensitivity (the instability instrument)
#
# At the tiny scale A, B and C end at the same loss, so the seed's stability claims need an instrument:
# Wortsman et al.'s small-scale proxy, the learning-rate sensitivity (gpt2/README.md, "The instability
# instrument"). `make lr-grid` runs it in full on the Shakespeare corpus (2 layers, d 64, 600 steps,
# 8 learning rates from 1e-3 to 1, 3 seeds; `make figures` draws a 6-run slice here instead). A grid's
# per-run results are kept in `analysis/results/<grid>.csv` (its results ledger), so they outlive its logs.
#
# No number or verdict of the instrument is typed here: the tables below are written by
# `analysis/figures/fig_lr_sensitivity.py` from the logs, and each names its run set. Per condition they give
# the LR sensitivity per seed (mean excess of the final validation loss over the best learning rate), its
# difference to A paired by seed with a t-interval and an exact sign-flip p-value, and the verdict of the
# rule written before the runs (differ / equivalent within the declared margin of 0.05 nats / undecided; no
# verdict below 8 seeds). In float32 the grid's measured null is B − C, zero by construction from the
# balanced start (every multiplier 1, no biases: r_Q and r_K of a head get identical gradients, so GaugeFix has
# nothing to fix; gpt2/README.md, "Why B ≡ C"). In bf16 it is not zero by construction: rounding breaks the tie
# between r_Q and r_K, which GaugeFix removes in B and nothing removes in C, so there B − C is GaugeFix's effect, and
# the null is the same condition under two thread counts (at the seed's lr and length: the same condition with
# each step's batch in two micro-batches); its row, with Table 1's, says whether the drift there is large enough
# for either to show.
#
# - **The float32 grid** (`make lr-grid`: A, B, C, D, Dcap, QK-norm, E under AdamW and Muon, 3 seeds, and
#   from a gauge-offset start): 3 seeds are below the verdict floor, so it prints intervals, not verdicts.
# - **The seed's regime** (`make lr-grid-bf16`: bf16 autocast with multipliers and optimizer state in
#   float32, no biases; A, B, C, Dcap, QK-Clip, QK-norm; 8 seeds × 9 learning rates from 3.73e-4 to 1, so
#   that every optimum is inside the grid and the top can fail): the verdicts, the final Q/K drift of every
#   condition, and its median at the learning rate seed 000's drift claim is judged at (the claim's verdict
#   is printed with Table 1 above, beside the grid's thread-count null and the late-instability experiment with its
#   own null).
#
# These are single-architecture, 600-step measurements of a 2-layer model.

# %%
show_table("table_lr_sensitivity")

# %%
show_table("lr_bf16/table_lr_sensitivity")

# %%
show_figure("fig_lr_sensitivity")
