#!/usr/bin/env bash
# Seed 000 Table 2 / Fig. 3: GaugeFix every N in {1, 10, 100, 1000} steps (condition B) plus the
# condition-A baseline, seed 42 (5 runs), resumable like conditions_grid.sh.
#
# Compute budget
#   full (default): 5 runs of GPT-2 124M x 20 000 steps (gpt2-124m-owt.ini): ~12.5 h of an 8 x A100 node
#                   (~100 GPU-hours); N = 1 and condition A are the same runs as in conditions_grid.sh
#                   and are not repeated if that grid's logs are linked here.
#   --tiny:         tiny-cpu.ini, 1000 steps each: ~1-2 min per run on one core, ~8 min in all. At 1000 steps
#                   N = 1000 fixes once, after the last step (the drift it reports is then ~0; its effect
#                   shows in the drift series before that step).
# Usage: gpt2/experiments/frequency_grid.sh [--tiny]   (BUILD, LAUNCH, DATA as in conditions_grid.sh)
# Logs: runs/seed000_frequency[_tiny]/N<N>/log.h5 and .../A/log.h5
set -euo pipefail
cd "$(dirname "$0")/../.."
source gpt2/experiments/common.sh

if [ "${1:-}" = "--tiny" ]; then
  root=runs/seed000_frequency_tiny
  args=(--config gpt2/configs/tiny-cpu.ini)
else
  root=runs/seed000_frequency
  args=(--config gpt2/configs/gpt2-124m-owt.ini --data "${DATA:?set DATA to the prepared OpenWebText directory}")
fi
for n in 1 10 100 1000; do
  run_one "$root/N$n" "${args[@]}" --condition B --gaugefix-every "$n" --seed 42
done
run_one "$root/A" "${args[@]}" --condition A --seed 42
echo "[experiments] logs under $root/"
