#!/usr/bin/env bash
# The instability instrument (Wortsman et al. 2023, "Small-scale proxies for large-scale Transformer training
# instabilities"): final validation loss over log-spaced learning rates for each way of handling the Q/K gauge,
# several seeds; analysis/figures/fig_lr_sensitivity.py turns the logs into the loss-vs-lr figure and the table of
# per-seed sensitivities, paired differences, the measured null and the verdicts.
#
# The grids are declared once, in analysis/manifest.py (GRIDS: their conditions, optimizers, learning rates, seeds,
# flags and compute budget), and run by the project's one experiment runner, analysis/make_figures.py --grid:
# resumable (finished runs are skipped, interrupted ones resumed from their newest checkpoint) and shardable
# (SHARD=i/n runs every n-th run from the i-th). This script only maps its environment onto that runner.
#
# Usage (from the repository root): gpt2/experiments/lr_sensitivity.sh [--demo | --offset | --seed-regime |
#        --seed-regime-null | --seed-regime-axis-null | --late-instability | --late-instability-null | --frequency]
#   (none)              grid lr_sensitivity: 11 conditions x AdamW and Muon x 8 lrs x 3 seeds (~6.6 core-hours)
#   --offset            grid lr_sensitivity_offset: A-D from a start moved along the Q/K gauge orbit
#   --seed-regime       grid lr_sensitivity_bf16: the seed's bf16, bias-free regime, 6 conditions x 9 lrs (3.73e-4 ..
#                       1.0) x 8 seeds (~11 core-hours emulated; the first grid's 288 runs keep their names)
#   --seed-regime-null  grid lr_sensitivity_bf16_null: its null, C at the seed-regime lr x 8 seeds x --threads 1, 2
#   --seed-regime-axis-null  grid lr_sensitivity_bf16_sens_null: the sensitivities' own null, C x 9 lrs x 8 seeds at
#                       --threads 2, paired with the grid's own C runs (~2 core-hours emulated)
#   --late-instability  grid late_instability_bf16: A B C x 20 seeds at the seed's lr and 20 000-step schedule
#                       (~50 core-hours emulated; resumable from checkpoints every 1 000 steps)
#   --late-instability-null  grid late_instability_bf16_null: its null, its C at the seeds of manifest.LATE_NULL_SEEDS with each step's batch in
#                       two micro-batches, paired with the experiment's own C (~4 core-hours emulated)
#   --frequency         grid gaugefix_frequency_bf16: seed 000's Table 2 in its regime, B with GaugeFix every 10, 100,
#                       1000 steps at the late-instability protocol, seed 1 (~1.5 core-hours emulated)
#   --demo              grid lr_sensitivity_demo: A B C x 2 lrs x 1 seed, 200 steps (~2 min): a slice, no verdict
# A grid run also writes its results ledger, analysis/results/<grid>.csv (commit it: the logs are not committed).
# Environment: BUILD (build), JOBS (2), SHARD (0/1), LAUNCH (a prefix, e.g. "torchrun --nproc_per_node=8
#   --no-python"), and any of CONFIG DATA ROOT LRS CONDITIONS OPTIMIZERS SEEDS (replace the grid's value) or EXTRA
#   (flags added to the grid's own, e.g. EXTRA="--device cuda" JOBS=8 on one GPU), ANALYSIS_PY (a Python with h5py).
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
  "") grid=lr_sensitivity ;;
  --offset) grid=lr_sensitivity_offset ;;
  --seed-regime) grid=lr_sensitivity_bf16 ;;
  --seed-regime-null) grid=lr_sensitivity_bf16_null ;;
  --seed-regime-axis-null) grid=lr_sensitivity_bf16_sens_null ;;
  --frequency) grid=gaugefix_frequency_bf16 ;;
  --late-instability) grid=late_instability_bf16 ;;
  --late-instability-null) grid=late_instability_bf16_null ;;
  --demo) grid=lr_sensitivity_demo ;;
  *) echo "lr_sensitivity.sh: unknown mode '$1' (use --demo, --offset, --seed-regime, --seed-regime-null," \
          "--seed-regime-axis-null, --late-instability, --late-instability-null or --frequency)" >&2; exit 2 ;;
esac
sets=()
for v in CONFIG DATA ROOT LRS CONDITIONS OPTIMIZERS SEEDS; do
  if [ -n "${!v:-}" ]; then sets+=(--set "$(echo "$v" | tr '[:upper:]' '[:lower:]')=${!v}"); fi
done
if [ -n "${EXTRA:-}" ]; then sets+=(--set "extra+=$EXTRA"); fi
exec "${ANALYSIS_PY:-/usr/bin/python3}" analysis/make_figures.py --build "${BUILD:-build}" --grid "$grid" \
  --jobs "${JOBS:-2}" --shard "${SHARD:-0/1}" --launch "${LAUNCH:-}" "${sets[@]}"
