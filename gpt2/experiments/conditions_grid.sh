#!/usr/bin/env bash
# Seed 000 Table 1 / Fig. 2: conditions A, B, C x seeds 42, 123, 456 (9 runs), resumable: a rerun
# skips completed runs and resumes interrupted ones from their newest checkpoint.
#
# Compute budget
#   full (default): GPT-2 124M, 20 000 steps x 491 520 tokens (gpt2/configs/gpt2-124m-owt.ini), bf16.
#                   The paper reports ~2.5 h per run on 8 x A100: 9 runs ~ 22.5 h of an 8-GPU node
#                   (~180 GPU-hours). Needs OpenWebText prepared: DATA=path/to/dir with train.bin, val.bin.
#   --tiny:         gpt2/configs/tiny-cpu.ini (2 layers, d 64, 1000 steps of 512 tokens on the synthetic
#                   corpus): ~1-2 min per run on one CPU core, ~15 min for the 9 runs.
# Usage: gpt2/experiments/conditions_grid.sh [--tiny]     (from the repository root)
#   BUILD=build-dir, LAUNCH="torchrun --nproc_per_node=8 --no-python", DATA=... (full mode)
# Logs: runs/seed000_conditions[_tiny]/<A|B|C>_s<seed>/log.h5
set -euo pipefail
cd "$(dirname "$0")/../.."
source gpt2/experiments/common.sh

if [ "${1:-}" = "--tiny" ]; then
  root=runs/seed000_conditions_tiny
  args=(--config gpt2/configs/tiny-cpu.ini)
else
  root=runs/seed000_conditions
  args=(--config gpt2/configs/gpt2-124m-owt.ini --data "${DATA:?set DATA to the prepared OpenWebText directory}")
fi
for seed in 42 123 456; do
  for cond in A B C; do
    run_one "$root/${cond}_s${seed}" "${args[@]}" --condition "$cond" --gaugefix-every 1 --seed "$seed"
  done
done
echo "[experiments] logs under $root/"
