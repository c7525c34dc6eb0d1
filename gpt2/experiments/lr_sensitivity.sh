#!/usr/bin/env bash
# The instability instrument (Wortsman et al. 2023, "Small-scale proxies for large-scale Transformer
# training instabilities"): final validation loss over a log-spaced learning-rate range for each way of
# handling the Q/K gauge, several seeds; analysis/figures/fig_lr_sensitivity.py turns the logs into the loss-vs-lr
# figure, the learning-rate sensitivity with bootstrap intervals and the divergence fraction.
# Resumable (completed or diverged runs are skipped, interrupted ones resumed) and shardable for job
# arrays (SHARD=i/n runs every n-th run from the i-th); JOBS runs in parallel on one machine.
#
# Conditions: keys of gpt2/train/conditions.hpp, passed as --condition KEY (each row fixes its own flags;
# `gaugelab train --help` lists them). A run's directory is <cond>_lr<lr>_s<seed>, with an "M" before the
# key for Muon runs; the analysis reads each run's condition, label and title from its log, never from
# the directory name or the flags.
#   A  multiplier WD on Q/K too           B  no Q/K WD + GaugeFix every step      C  no control
#   D  GaugeFix + the Q/K WD as magnitude control       Dcap  GaugeFix + a cap on each head's s_Q·s_K (4)
#   Q  QK-norm (RMSNorm on q and k per head) under C's settings: the architecture fix, no gauge control
#   QKclip  C + Kimi K2's QK-Clip (tau 100): heads whose largest logit exceeds tau are scaled back
#   E  quotient-aware attention updates (full opposite-Gram correction, damping 1e-3)
#   N  no multipliers at all (nanoGPT's GPT-2), C's settings otherwise: the reference of the projections
#   P  N + the exact gauge-orthogonal gradient projection (seed 001 Remark 51)
#   Pa N + Alg. 2's approximate projection         Pu N + the exact projection of AdamW's update
# OPTIMIZERS: adamw and muon (Muon on the hidden matrices: the grid's lr is AdamW's (the embeddings, norms
#   and multipliers) and 10x it is Muon's (KellerJordan's 0.02 against Adam's 2e-3); under E the
#   opposite-Gram correction acts on Muon's orthogonalised increments). The projections run under AdamW.
# The offset family: from the protocol's balanced start (every multiplier 1) B equals C up to rounding (r_Q and
#   r_K get identical gradients; gpt2/README.md, "Why B = C"), so the gauge handlings are also compared from a
#   start moved along the Q/K gauge orbit (same function, drift 2|log g_h|):
#   EXTRA="--qk-gauge-init 1" ROOT=runs/lr_sensitivity_offset CONDITIONS="A B C D" OPTIMIZERS=adamw (the analysis keys these runs
#   oA, oB, ... and compares them with oA).
#
# Compute budget
#   default (CPU): gpt2/configs/lr-sensitivity-cpu.ini on the Shakespeare corpus, 600 steps of 512
#     tokens, ~55 s per run on an idle core: 14 conditions (A B C D Dcap Q E and their Muon runs) + N P Pa Pu x 8 lrs
#     x 3 seeds = 432 runs ~ 6.6 core-hours (~3 h 20 min with JOBS=2 on 2 idle cores); the offset family
#     A-D x 8 x 3 = 96 runs, ~45 min more. The same model on one GPU: EXTRA="--device cuda" JOBS=8.
#   --demo: conditions A B C, lrs 1e-2 and 1e-1, seed 42, 200 steps (~2 min with JOBS=2).
#   GPUs: CONFIG=gpt2/configs/gpt2-124m-owt.ini DATA=... LAUNCH="torchrun --nproc_per_node=8 --no-python"
#     JOBS=1 EXTRA="--max-iters 5000" runs the same grid at 124M (the budget is then the config's).
# Usage (from the repository root): gpt2/experiments/lr_sensitivity.sh [--demo | --seed-regime]
#   Environment: BUILD, LAUNCH, JOBS (2), SHARD (0/1), CONFIG, DATA (runs/data/shakespeare, prepared
#   here when missing), ROOT (runs/lr_sensitivity[_demo]), LRS, CONDITIONS, OPTIMIZERS, SEEDS, EXTRA (more flags),
#   ANALYSIS_PY (a Python with h5py, default /usr/bin/python3: a cluster's system Python may lack it).
set -euo pipefail
cd "$(dirname "$0")/../.."
source gpt2/experiments/common.sh
JOBS=${JOBS:-2}
SHARD=${SHARD:-0/1}
CONFIG=${CONFIG:-gpt2/configs/lr-sensitivity-cpu.ini}
DATA=${DATA:-runs/data/shakespeare}
EXTRA=${EXTRA:-}
if [ "${1:-}" = "--demo" ]; then
  ROOT=${ROOT:-runs/lr_sensitivity_demo}
  LRS=${LRS:-"1e-2 1e-1"}
  CONDITIONS=${CONDITIONS:-"A B C"}
  OPTIMIZERS=${OPTIMIZERS:-"adamw"}
  SEEDS=${SEEDS:-"42"}
  EXTRA="--max-iters 200 --eval-every 200 --log-heads-every 10 $EXTRA"
elif [ "${1:-}" = "--seed-regime" ]; then
  # The seed's own regime: bf16 autocast (master weights, multipliers and AdamW's state in float32, as the
  # seed's), no biases, AdamW; A, B, C against the magnitude controls Dcap, QK-Clip and QK-norm; 8 seeds x 6
  # learning rates (1e-3 and 1.0 left out: under-trained and collapsed for every condition) = 288 runs,
  # ~4-5 core-hours on this CPU. Seeds outermost: after k seeds every condition and lr has those k seeds, so
  # a grid stopped part-way is still paired.
  ROOT=${ROOT:-runs/lr_sensitivity_bf16}
  LRS=${LRS:-"2.68e-3 7.2e-3 1.93e-2 5.18e-2 0.139 0.373"}
  CONDITIONS=${CONDITIONS:-"A B C Dcap QKclip Q"}
  OPTIMIZERS=${OPTIMIZERS:-"adamw"}
  SEEDS=${SEEDS:-"42 123 456 789 1001 2002 3003 4004"}
  EXTRA="--precision bf16 --bias false $EXTRA"
else
  ROOT=${ROOT:-runs/lr_sensitivity}
  # 8 values, log-spaced by 10^(3/7) from 1e-3 to 1 (stable to collapsed for this model).
  LRS=${LRS:-"1e-3 2.68e-3 7.2e-3 1.93e-2 5.18e-2 0.139 0.373 1.0"}
  CONDITIONS=${CONDITIONS:-"A B C D Dcap Q E N P Pa Pu"}
  OPTIMIZERS=${OPTIMIZERS:-"adamw muon"}
  SEEDS=${SEEDS:-"42 123 456"}
fi
if [ ! -f "$DATA/train.bin" ] && [ "$DATA" = runs/data/shakespeare ]; then
  "$BUILD/gaugelab" prepare --corpus shakespeare --out "$DATA" --threads 1 --progress=false
fi
mkdir -p "$ROOT"

optimizer_flags() {  # optimizer lr -> trainer flags (Muon's lr is 10x the grid's)
  if [ "$1" = muon ]; then echo "--optimizer muon --muon-lr $("$ANALYSIS_PY" -c "print($2 * 10)")"; fi
}

run() {  # cond optimizer lr seed
  local min_lr
  min_lr=$("$ANALYSIS_PY" -c "print($3 / 10)")
  # shellcheck disable=SC2046,SC2086  # the optimizer's flags and EXTRA are word lists on purpose
  run_one "$ROOT/$([ "$2" = muon ] && echo M)$1_lr$3_s$4" --config "$CONFIG" --data "$DATA" --lr "$3" \
    --min-lr "$min_lr" --seed "$4" --condition "$1" $(optimizer_flags "$2" "$3") $EXTRA
}
export -f run run_one run_finished optimizer_flags
export BUILD LAUNCH CONFIG DATA EXTRA ROOT ANALYSIS_PY
export RUN_OUTPUT=file

i=0
shard_i=${SHARD%/*}
shard_n=${SHARD#*/}
for seed in $SEEDS; do
  for lr in $LRS; do
    for opt in $OPTIMIZERS; do
      for cond in $CONDITIONS; do
        case $opt:$cond in muon:P*) continue ;; esac  # the projections are AdamW's (seed 001)
        [ $((i % shard_n)) = "$shard_i" ] && echo "$cond $opt $lr $seed"
        i=$((i + 1))
      done
    done
  done
done | xargs -P "$JOBS" -L 1 bash -c 'run "$0" "$1" "$2" "$3"'
