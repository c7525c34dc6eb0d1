#!/usr/bin/env bash
# Seed 000 Table 1 / Fig. 2: conditions A, B, C x seeds 42, 123, 456 (9 runs), GaugeFix every step. Declared in
# analysis/manifest.py (GRIDS seed000_conditions and seed000_conditions_tiny, with their compute budgets) and run,
# resumable, by analysis/make_figures.py --grid.
#   full (default): GPT-2 124M, 20 000 steps x 491 520 tokens, bf16 (~180 GPU-hours); DATA=the prepared OpenWebText
#                   directory, LAUNCH="torchrun --nproc_per_node=8 --no-python"
#   --tiny:         gpt2/configs/tiny-cpu.ini on the synthetic corpus, ~15 min for the 9 runs on one core
# Usage: gpt2/experiments/conditions_grid.sh [--tiny]   (from the repository root; BUILD, LAUNCH, DATA)
set -euo pipefail
cd "$(dirname "$0")/../.."
grid=seed000_conditions
if [ "${1:-}" = "--tiny" ]; then grid=seed000_conditions_tiny; fi
sets=()
if [ -n "${DATA:-}" ]; then sets+=(--set "data=$DATA"); fi
exec "${ANALYSIS_PY:-/usr/bin/python3}" analysis/make_figures.py --build "${BUILD:-build}" --grid "$grid" --jobs 1 \
  --launch "${LAUNCH:-}" "${sets[@]}"
