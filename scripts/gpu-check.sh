#!/usr/bin/env bash
# The CUDA acceptance check: what CI (no GPU) cannot run. On a machine with a GPU, after `make build`
# (or any build against that machine's PyTorch):
#   scripts/gpu-check.sh [OUT_DIR]          (default runs/gpu-check)
# The corpus: DATA (runs/data/shakespeare), prepared where missing from the installed assets
# (scripts/install-deps.sh). A GPU machine has neither the assets nor a network: prepare it here
# (`build/gaugelab prepare --corpus shakespeare --out runs/data/shakespeare`, ~6 MB) and carry that ignored folder.
# Environment: BUILD (build), DATA (runs/data/shakespeare), ANALYSIS_PY (a Python
# with h5py and numpy; default /usr/bin/python3), STAGES ("parity resume eval gpt2"), GPT2_STEPS (20),
# GPT2_ACCUM (4), PEAK_TFLOPS (989: an H100/H200's dense bf16 peak, for the MFU line), DEVICE (cuda; cpu
# runs the script's own mechanics on a machine without a GPU, every comparison then exact).
# Stages, each printing one line per check and a verdict; exit 1 if any check fails:
#   parity  every gauge handling (A, B, C, D, E, QK-norm, Muon under A and B) trained 60 steps in float32
#           from one seed on the CPU and on CUDA (the lr-sensitivity model); per-step training losses and the
#           final validation loss compared (scripts/gpu_check_compare.py states the bounds and why).
#   resume  on CUDA, a run SIGKILLed after its step-20 checkpoint and resumed, against the uninterrupted
#           run: the same bits (scripts/soak_compare.py), or the largest difference if not.
#   eval    a checkpoint trained on CUDA evaluated by `gaugelab eval` on the CPU and on CUDA.
#   gpt2    GPT-2 124M (gpt2-124m-owt.ini: bf16, 12 x 1024 tokens x GPT2_ACCUM) for GPT2_STEPS steps:
#           tokens/s and MFU from the run's own log.
set -uo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-runs/gpu-check}
BUILD=${BUILD:-build}
BIN="$BUILD/gaugelab"
DATA=${DATA:-runs/data/shakespeare}
PY=${ANALYSIS_PY:-/usr/bin/python3}
STAGES=${STAGES:-"parity resume eval gpt2"}
GPT2_STEPS=${GPT2_STEPS:-20}
GPT2_ACCUM=${GPT2_ACCUM:-4}
PEAK_TFLOPS=${PEAK_TFLOPS:-989}
DEVICE=${DEVICE:-cuda}
[ -x "$BIN" ] || { echo "gpu-check: $BIN is missing (make build)" >&2; exit 2; }
"$PY" -c 'import h5py, numpy' 2>/dev/null || { echo "gpu-check: $PY lacks h5py/numpy (set ANALYSIS_PY)" >&2; exit 2; }
mkdir -p "$DIR"
if [ ! -f "$DATA/train.bin" ] && ! "$BIN" prepare --corpus shakespeare --out "$DATA" --progress=false > "$DIR/prepare.txt" 2>&1; then
  echo "gpu-check: no corpus at $DATA and none to prepare here ($(tail -n 1 "$DIR/prepare.txt")): prepare it where" \
    "the assets are (build/gaugelab prepare --corpus shakespeare --out $DATA) and carry it" >&2
  exit 2
fi
bad=0
t0=$(date +%s)
say() { echo "[gpu-check $(($(date +%s) - t0))s] $*"; }

small_exec() {  # DEVICE OUT FLAGS...: the lr-sensitivity model, 60 steps, float32 (replaces the shell)
  local dev=$1 out=$2; shift 2
  exec "$BIN" train --config gpt2/configs/lr-sensitivity-cpu.ini --data "$DATA" --device "$dev" --precision fp32 \
    --max-iters 60 --warmup-iters 10 --eval-every 60 --log-every 1000 --log-heads-every 10 --ckpt-every 20 \
    --keep-ckpts 3 --lr 7.2e-3 --min-lr 7.2e-4 --seed 42 "$@" --out "$out" >>"$out.txt" 2>&1
}
small() { rm -rf "$2" "$2.txt"; (small_exec "$@" --force); }

if [[ " $STAGES " == *" parity "* ]]; then
  say "parity: CPU (float32, 1 thread each) against CUDA (float32), 60 steps, lr 7.2e-3, seed 42"
  declare -A FLAGS=(
    [A]="--condition A" [B]="--condition B --gaugefix-every 1" [C]="--condition C"
    [D]="--condition D --gaugefix-every 1" [E]="--condition E"
    [Q]="--condition Q"
    [MA]="--condition A --optimizer muon --muon-lr 7.2e-2"
    [MB]="--condition B --gaugefix-every 1 --optimizer muon --muon-lr 7.2e-2")
  pids=()
  for c in "${!FLAGS[@]}"; do
    # shellcheck disable=SC2086
    small cpu "$DIR/parity_${c}_cpu" ${FLAGS[$c]} &
    pids+=($!)
    # shellcheck disable=SC2086
    small "$DEVICE" "$DIR/parity_${c}_cuda" ${FLAGS[$c]} &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || bad=1; done
  [ $bad = 0 ] || { say "parity: a run failed:"; tail -n 3 "$DIR"/parity_*.txt; }
  for c in A B C D E Q MA MB; do
    "$PY" scripts/gpu_check_compare.py "$c" "$DIR/parity_${c}_cpu/log.h5" "$DIR/parity_${c}_cuda/log.h5" || bad=1
  done
fi

if [[ " $STAGES " == *" resume "* ]]; then
  say "resume: CUDA run of 60 steps SIGKILLed after its step-20 checkpoint, resumed; against the uninterrupted run"
  ref="$DIR/parity_B_cuda"
  [ -f "$ref/log.h5" ] || small "$DEVICE" "$ref" --condition B --gaugefix-every 1 || bad=1
  cut="$DIR/resume_B_cuda"
  rm -rf "$cut" "$cut.txt"
  (small_exec "$DEVICE" "$cut" --condition B --gaugefix-every 1 --force) &
  pid=$!  # the trainer itself (the subshell execs it)
  for _ in $(seq 1 2000); do
    [ -d "$cut/checkpoints/step_00000020" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
  done
  kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
  (small_exec "$DEVICE" "$cut" --condition B --gaugefix-every 1 --resume) || { bad=1; tail -n 3 "$cut.txt"; }
  grep -h "resumed from" "$cut.txt" | sed 's/.*; resumed/  resumed/' | head -n 1
  if ! "$PY" scripts/soak_compare.py "$ref/log.h5" "$cut/log.h5"; then
    "$PY" scripts/gpu_check_compare.py resume "$ref/log.h5" "$cut/log.h5" --early 60 --early-tol 1e-4 || bad=1
  fi
fi

if [[ " $STAGES " == *" eval "* ]]; then
  say "eval: the CUDA-trained parity_A checkpoint evaluated on the CPU and on CUDA"
  ck=$(ls -d "$DIR"/parity_A_cuda/checkpoints/* 2>/dev/null | sort | tail -n 1)
  if [ -z "$ck" ]; then
    say "eval: no checkpoint under $DIR/parity_A_cuda"; bad=1
  else
    for dev in cpu "$DEVICE"; do
      "$BIN" eval --checkpoint "$ck" --data "$DATA/val.bin" --device "$dev" --batches 16 --threads 1 >"$DIR/eval_$dev.txt" 2>&1 || bad=1
      echo "  eval on $dev: $(grep -h "val loss" "$DIR/eval_$dev.txt")"
    done
  fi
fi

if [[ " $STAGES " == *" gpt2 "* ]]; then
  say "gpt2: 124M, bf16, 12 x 1024 x $GPT2_ACCUM tokens/step, $GPT2_STEPS steps"
  g="$DIR/gpt2_124m"
  "$BIN" train --config gpt2/configs/gpt2-124m-owt.ini --data "$DATA" --device "$DEVICE" --grad-accum "$GPT2_ACCUM" \
    --max-iters "$GPT2_STEPS" --warmup-iters 5 --eval-every "$GPT2_STEPS" --eval-batches 8 --log-every 5 \
    --ckpt-every "$GPT2_STEPS" --keep-ckpts 1 --peak-tflops "$PEAK_TFLOPS" --out "$g" --force >"$g.txt" 2>&1 \
    || { bad=1; tail -n 5 "$g.txt"; }
  head -n 12 "$g.txt"
  tail -n 4 "$g.txt"
  "$PY" - "$g/log.h5" <<'PY' || bad=1
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    tps = np.asarray(f["series/tokens_per_s"][...]); loss = np.asarray(f["series/loss"][...])
    s = dict(f["summary"].attrs)
steady = tps[len(tps) // 4:]
print(f"  124M: loss {loss[0]:.3f} -> {loss[-1]:.3f}; tokens/s median {np.median(steady):,.0f} "
      f"(steps {len(tps) // 4 + 1}-{len(tps)}); final val {float(s.get('final_val_loss', float('nan'))):.4f}")
sys.exit(0 if np.isfinite(loss).all() and loss[-1] < loss[0] else 1)
PY
fi

say "$([ $bad = 0 ] && echo "all checks passed" || echo "SOME CHECKS FAILED")"
exit $bad
