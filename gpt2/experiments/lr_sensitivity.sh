#!/usr/bin/env bash
# The instability instrument (Wortsman et al. 2023, "Small-scale proxies for large-scale Transformer
# training instabilities"): final validation loss over a log-spaced learning-rate range for each way of
# handling the Q/K gauge, several seeds; analysis/fig_lr_sensitivity.py turns the logs into the loss-vs-lr
# figure, the learning-rate sensitivity with bootstrap intervals and the divergence fraction.
# Resumable (completed or diverged runs are skipped, interrupted ones resumed) and shardable for job
# arrays (SHARD=i/n runs every n-th run from the i-th); JOBS runs in parallel on one machine.
#
# Conditions (a run's name is <cond>_lr<lr>_s<seed>):
#   A  multiplier WD on Q/K too           B  no Q/K WD + GaugeFix every step      C  no control
#   D  GaugeFix + the Q/K WD as magnitude control (--magnitude wd)
#   Dcap  GaugeFix + a cap on each head's s_Q·s_K (--magnitude cap, --qk-cap 4: not function-preserving)
#   Q  QK-norm (RMSNorm on q and k per head) under C's settings: the architecture fix, no gauge control
#   E  quotient-aware attention updates (full opposite-Gram correction, damping 1e-3)
#   N  no multipliers at all (nanoGPT's GPT-2), C's settings otherwise: the reference of the projections
#   P  N + the exact gauge-orthogonal gradient projection (--grad-projection exact, seed 001 Remark 51)
#   Pa N + Alg. 2's approximate projection (--grad-projection approx)
#   Pu N + the exact projection of AdamW's update instead of the gradient (--projection-target update)
#   MA MB MC MD MDcap MQ ME  Muon (--optimizer muon) on the hidden matrices under each of the above: the grid's
#      lr is AdamW's (the embeddings, norms and multipliers) and 10x it is Muon's (KellerJordan's 0.02
#      against Adam's 2e-3); under ME the opposite-Gram correction acts on Muon's orthogonalised increments
# The offset family: from the protocol's balanced start (every multiplier 1) B equals C up to rounding (r_Q and
#   r_K get identical gradients; gpt2/README.md, "Why B = C"), so the gauge handlings are also compared from a
#   start moved along the Q/K gauge orbit (same function, drift 2|log g_h|):
#   EXTRA="--qk-gauge-init 1" ROOT=runs/lr_sensitivity_offset CONDITIONS="A B C D" (the analysis keys these runs
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
# Usage (from the repository root): gpt2/experiments/lr_sensitivity.sh [--demo]
#   Environment: BUILD, LAUNCH, JOBS (2), SHARD (0/1), CONFIG, DATA (runs/data/shakespeare, prepared
#   here when missing), ROOT (runs/lr_sensitivity[_demo]), LRS, CONDITIONS, SEEDS, EXTRA (more flags),
#   ANALYSIS_PY (a Python with h5py, default /usr/bin/python3: a cluster's system Python may lack it).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
LAUNCH=${LAUNCH:-}
JOBS=${JOBS:-2}
SHARD=${SHARD:-0/1}
CONFIG=${CONFIG:-gpt2/configs/lr-sensitivity-cpu.ini}
DATA=${DATA:-runs/data/shakespeare}
EXTRA=${EXTRA:-}
ANALYSIS_PY=${ANALYSIS_PY:-/usr/bin/python3}
if [ "${1:-}" = "--demo" ]; then
  ROOT=${ROOT:-runs/lr_sensitivity_demo}
  LRS=${LRS:-"1e-2 1e-1"}
  CONDITIONS=${CONDITIONS:-"A B C"}
  SEEDS=${SEEDS:-"42"}
  EXTRA="--max-iters 200 --eval-every 200 --log-heads-every 10 $EXTRA"
else
  ROOT=${ROOT:-runs/lr_sensitivity}
  # 8 values, log-spaced by 10^(3/7) from 1e-3 to 1 (stable to collapsed for this model).
  LRS=${LRS:-"1e-3 2.68e-3 7.2e-3 1.93e-2 5.18e-2 0.139 0.373 1.0"}
  CONDITIONS=${CONDITIONS:-"A B C D Dcap Q E N P Pa Pu MA MB MC MD MDcap MQ ME"}
  SEEDS=${SEEDS:-"42 123 456"}
fi
if [ ! -f "$DATA/train.bin" ] && [ "$DATA" = runs/data/shakespeare ]; then
  "$BUILD/gaugelab" prepare --corpus shakespeare --out "$DATA" --threads 1 --progress=false
fi
mkdir -p "$ROOT"

flags_of() {  # condition -> trainer flags
  case $1 in
    A) echo "--condition A" ;;
    B) echo "--condition B --gaugefix-every 1" ;;
    C) echo "--condition C" ;;
    D) echo "--condition D --gaugefix-every 1 --magnitude wd" ;;
    Dcap) echo "--condition D --gaugefix-every 1 --magnitude cap --qk-cap 4" ;;
    Q) echo "--condition C --qk-norm rms" ;;
    E) echo "--condition E" ;;
    N) echo "--condition C --multipliers none" ;;
    P) echo "--condition C --multipliers none --grad-projection exact" ;;
    Pa) echo "--condition C --multipliers none --grad-projection approx" ;;
    Pu) echo "--condition C --multipliers none --grad-projection exact --projection-target update" ;;
    M*) echo "$(flags_of "${1#M}" "$2") --optimizer muon --muon-lr $("$ANALYSIS_PY" -c "print($2 * 10)")" ;;
    *) echo "unknown condition $1" >&2; exit 2 ;;
  esac
}

finished() {  # 0 if OUT/log.h5 says completed or diverged
  [ -f "$1/log.h5" ] && "$ANALYSIS_PY" - "$1/log.h5" <<'PY' 2>/dev/null
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    a = f["summary"].attrs
    sys.exit(0 if int(a.get("completed", 0)) == 1 or int(a.get("diverged", 0)) == 1 else 1)
PY
}

run() {  # cond lr seed
  local out="$ROOT/$1_lr$2_s$3"
  if finished "$out"; then echo "[lr-sensitivity] $out: done, skipped"; return 0; fi
  local mode=--force
  [ -d "$out/checkpoints" ] && [ -n "$(ls "$out/checkpoints" 2>/dev/null)" ] && mode=--resume
  local min_lr
  min_lr=$("$ANALYSIS_PY" -c "print($2 / 10)")
  echo "[lr-sensitivity] $out: $([ $mode = --resume ] && echo resuming || echo starting)"
  # shellcheck disable=SC2086  # LAUNCH, EXTRA and the flags are word lists on purpose
  $LAUNCH "$BUILD/gaugelab" train --config "$CONFIG" --data "$DATA" --lr "$2" --min-lr "$min_lr" --seed "$3" \
    $(flags_of "$1" "$2") $EXTRA --out "$out" $mode > "$out.txt" 2>&1 || [ $? = 3 ]  # 3: diverged, logged
}
export -f run finished flags_of
export BUILD LAUNCH CONFIG DATA EXTRA ROOT ANALYSIS_PY

i=0
shard_i=${SHARD%/*}
shard_n=${SHARD#*/}
for seed in $SEEDS; do
  for lr in $LRS; do
    for cond in $CONDITIONS; do
      [ $((i % shard_n)) = "$shard_i" ] && echo "$cond $lr $seed"
      i=$((i + 1))
    done
  done
done | xargs -P "$JOBS" -L 1 bash -c 'run "$0" "$1" "$2"'
echo "[lr-sensitivity] logs under $ROOT/; analysis: $ANALYSIS_PY analysis/fig_lr_sensitivity.py $ROOT"
