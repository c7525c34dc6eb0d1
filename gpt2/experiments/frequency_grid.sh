#!/usr/bin/env bash
# Seed 000 Table 2 / Fig. 3: GaugeFix every N in {1, 10, 100, 1000} steps and the condition-A baseline, seed 42
# (5 runs). Declared in analysis/manifest.py (GRIDS seed000_frequency and seed000_frequency_tiny, with their compute
# budgets) and run, resumable, by analysis/make_figures.py --grid.
# Usage: gpt2/experiments/frequency_grid.sh [--tiny]   (from the repository root; BUILD, LAUNCH, DATA as in
# conditions_grid.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
grid=seed000_frequency
if [ "${1:-}" = "--tiny" ]; then grid=seed000_frequency_tiny; fi
sets=()
if [ -n "${DATA:-}" ]; then sets+=(--set "data=$DATA"); fi
exec "${ANALYSIS_PY:-/usr/bin/python3}" analysis/make_figures.py --build "${BUILD:-build}" --grid "$grid" --jobs 1 \
  --launch "${LAUNCH:-}" "${sets[@]}"
