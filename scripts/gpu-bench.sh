#!/usr/bin/env bash
# The GPU issue's one prepared command: on one GPU, in one call, the parity table and gaugelab.torch's
# operator tests on CUDA, and then GPT-2
# 124M bf16 trained by nanoGPT-style PyTorch (eager and torch.compile, the machine's PyTorch:
# tests/reference/nanogpt_ref.py) and by ours (no multipliers, with multipliers, condition B = GaugeFix
# every step), each on the same card, the same batch and the same random-token-free synthetic corpus
# shape, then ours under `torchrun --nproc_per_node=1 --no-python` on NCCL. Every row of ours names its kernels
# (--lm-head-kernel, --ln-kernel, --lrm-kernel: fused), and a row beside each piece keeps ATen's ops for it alone
# (*_aten_ce, *_aten_ln, *_aten_lrm); *_graph rows replay each micro-step from a CUDA graph. Prints one table and
# writes it to $OUT/gpu-bench.md (with every raw line beside it).
#   scripts/gpu-bench.sh                    (after `make build`; BUILD_FIRST=1 builds with JOBS cores)
# On a machine without Debian's -dev packages: DEPS_DEBS=DIR (scripts/gpu-prefix.sh download DIR on Debian 12)
# unpacks them under /tmp and builds against them and the machine's own PyTorch (BUILD_FIRST=1 then builds only
# what this script runs). PACK=1 keeps the work under WORK (/tmp/gpu-bench) and leaves in OUT only the table,
# the stage log and one archive of the text logs, run logs and profile tables (for a trip that takes few files).
# Profiles (scripts/trace_top.py): steps PROFILE_FROM (6) and the next of ours (plain and multipliers) in runs
# of their own after the timed rows, 2 steps of each peer after its timed steps; their top kernels are
# appended to the table, and then the line of a --fit-micro-batch run (the micro-batch the card's probes chose for
# nanoGPT's 480-sequence step; train/micro_batch.hpp).
# Environment: OUT (runs/gpu-bench), BUILD (build), DEVICE (cuda; cpu runs
# the script's mechanics on a machine without a GPU at a tiny size), TORCH_PY (the Python whose torch the
# peers use: the venv's), STEPS (20 timed steps), BATCH (12 sequences of 1024 tokens), PEAK_TFLOPS (989: the
# H100/H200 dense bf16 peak, the MFU denominator), BUILD_FIRST (0), JOBS (nproc), FIT_BY (360: the fitted run is
# left out when more than this many seconds have passed since the build).
# MFU: nanoGPT's estimate, 6N + 12·L·d·T FLOPs per token with N without the position embedding, the same
# count for every row (the same architecture), over PEAK_TFLOPS. Ours: the median of the per-step
# tokens/s the log holds, steps 3 to STEPS-1 (the first steps warm up; the last one evaluates and saves).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu-bench}
PACK=${PACK:-0}
WORK=${WORK:-$([ "$PACK" = 1 ] && echo /tmp/gpu-bench || echo "$OUT")}
BUILD=${BUILD:-build}
BIN="$BUILD/gaugelab"
DEVICE=${DEVICE:-cuda}
TORCH_PY=${TORCH_PY:-$HOME/.cache/gaugelab/venv/bin/python}
ANALYSIS_PY=${ANALYSIS_PY:-/usr/bin/python3}
PEAK_TFLOPS=${PEAK_TFLOPS:-989}
PROFILE_FROM=${PROFILE_FROM:-6}
if [ "$DEVICE" = cpu ]; then  # mechanics only: a tiny model, a few steps
  STEPS=${STEPS:-6}; BATCH=${BATCH:-2}; SIZE=(--n-layer 2 --n-head 2 --n-embd 64 --seq 64); OURS_SIZE=(--model nano --n-embd 64 --block-size 64)
  PROFILE_FROM=$(( PROFILE_FROM < STEPS ? PROFILE_FROM : 2 ))
else
  STEPS=${STEPS:-20}; BATCH=${BATCH:-12}; SIZE=(--n-layer 12 --n-head 12 --n-embd 768 --seq 1024); OURS_SIZE=(--model gpt2 --block-size 1024)
fi
mkdir -p "$OUT" "$WORK"
t0=$(date +%s)
say() { echo "[gpu-bench $(($(date +%s) - t0))s] $*" | tee -a "$WORK/raw.txt"; }
bad=0
pack() {  # PACK=1: the table, the stage log and one archive of the rest (no corpus, checkpoints or raw traces)
  [ "$PACK" = 1 ] || return 0
  cp "$WORK/raw.txt" "$OUT/" 2>/dev/null; [ -f "$WORK/gpu-bench.md" ] && cp "$WORK/gpu-bench.md" "$OUT/"
  tar -C "$WORK" -czf "$OUT/gpu-bench-logs.tar.gz" --exclude=data --exclude=checkpoints --exclude='*.json.gz' \
    --exclude=profile.json --exclude='trace_*.json' . 2>/dev/null
  for t in "$WORK"/trace_ours_plain.json "$WORK"/trace_peer_compile.json; do  # two raw traces, compressed, if small
    [ -f "$t" ] && gzip -c "$t" > "$OUT/$(basename "$t").gz" && [ "$(stat -c %s "$OUT/$(basename "$t").gz")" -lt 15000000 ] \
      || rm -f "$OUT/$(basename "$t").gz"
  done
}
trap pack EXIT

if [ -n "${DEPS_DEBS:-}" ]; then
  say "dependencies: Debian packages from $DEPS_DEBS unpacked under /tmp/gaugelab-prefix"
  eval "$(bash scripts/gpu-prefix.sh env "$DEPS_DEBS" /tmp/gaugelab-prefix)" || { say "unpacking failed"; exit 1; }
fi
if [ "${BUILD_FIRST:-0}" = 1 ]; then
  TORCH_PREFIX=$("$TORCH_PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  VENV=$("$TORCH_PY" -c 'import sys; print(sys.prefix)')
  say "build: torch $("$TORCH_PY" -c 'import torch; print(torch.__version__)') from $VENV, $(nproc) cores"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" \
    -DGAUGELAB_VENV="$VENV" -DGAUGELAB_ANALYSIS_PYTHON="$TORCH_PY" -DTORCH_CUDA_ARCH_LIST="${CUDA_ARCH:-9.0}" \
    -DGAUGELAB_BUILD_BENCH=OFF $([ "${PY_MODULE:-1}" = 1 ] || echo -DGAUGELAB_PYTHON=OFF) \
    ${GAUGELAB_PREFIX_CMAKE_ARGS:-} > "$WORK/build.txt" 2>&1 \
    && cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target gaugelab gaugelab-torch test_parity \
       >> "$WORK/build.txt" 2>&1 \
    || { say "build failed (tail of build.txt):"; tail -n 30 "$WORK/build.txt"; exit 1; }
  # The Python module (gaugelab.torch's operator tests) where CMake could configure it: its failure costs its row only.
  if ninja -C "$BUILD" -t targets all 2>/dev/null | grep -q '^gaugelab_python:'; then
    cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target gaugelab_python >> "$WORK/build.txt" 2>&1 \
      || say "the Python module did not build (build.txt): the gaugelab.torch row is left out"
  else
    say "the Python module is not configured here ($(grep -m1 'gaugelab Python module' "$WORK/build.txt" || echo 'PY_MODULE=0'))"
  fi
  say "built"
fi
[ -x "$BIN" ] || { echo "gpu-bench: $BIN is missing (make build, or BUILD_FIRST=1)" >&2; exit 2; }
[ "$DEVICE" = cpu ] || nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,power.draw \
  --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$WORK/raw.txt"

# 1. The parity table: every LibTorch gauge op against its core reference, on the CPU and on CUDA.
t_built=$(date +%s)  # FIT_BY counts from here
say "parity table"
if timeout 180 "$BUILD/tests/test_parity" > "$WORK/parity_raw.txt" 2>&1; then say "parity: every row within its tolerance"
else say "parity: FAILED rows (see parity_raw.txt): $(grep -c 'FAILED' "$WORK/parity_raw.txt") failures"; bad=1; fi
grep '^parity |' "$WORK/parity_raw.txt" > "$WORK/parity.txt"

# 1b. gaugelab.torch's operators on the card: each against the core on the same inputs (CPU and CUDA rows),
# gradcheck, GaugeFix/QK-Clip invariants (python/tests/test_torch_ops.py picks CUDA up when present).
if [ -f "$BUILD/python/gaugelab/torch/libgaugelab_torch_ops.so" ] && "$TORCH_PY" -c 'import pytest' 2>/dev/null; then
  say "gaugelab.torch operators (CPU, and CUDA when the card is there)"
  if GAUGELAB_BUILD_DIR="$BUILD" timeout 180 "$TORCH_PY" -m pytest -q -p no:cacheprovider python/tests/test_torch_ops.py \
       > "$WORK/torch_ops.txt" 2>&1; then say "torch ops: $(tail -n 1 "$WORK/torch_ops.txt")"
  else say "torch ops: FAILED (see torch_ops.txt): $(tail -n 1 "$WORK/torch_ops.txt")"; bad=1; fi
else
  say "gaugelab.torch not built or no pytest beside $TORCH_PY: its row is left out"
fi

# 2. The peers, same card, same batch; each then traces 2 more steps (outside its timing).
DATA="$WORK/data"
[ -f "$DATA/train.bin" ] || "$BIN" prepare --synthetic --docs 2000 --seed 1 --out "$DATA" --progress=false > /dev/null
for mode in eager compile; do
  say "peer: nanoGPT $mode"
  timeout 300 "$TORCH_PY" -W ignore tests/reference/nanogpt_ref.py --device "$DEVICE" --dtype bf16 "${SIZE[@]}" --batch "$BATCH" \
    --steps "$STEPS" --warmup 3 --peak-tflops "$PEAK_TFLOPS" --threads "$(nproc)" $([ $mode = compile ] && echo --compile) \
    --profile-out "$WORK/trace_peer_$mode.json" \
    > "$WORK/peer_$mode.json" 2> "$WORK/peer_$mode.err" || { say "peer $mode failed: $(tail -n 1 "$WORK/peer_$mode.err")"; bad=1; }
done

# 3. Ours: no multipliers (condition N), with multipliers (C), and GaugeFix every step (B); then torchrun.
ours() {  # name condition [launcher words...]
  local name=$1 cond=$2; shift 2
  local extra=() steps=$STEPS
  # Profiles run apart from the timed rows: once the profiler has run, CUPTI's hooks stay and slow every later
  # launch (seen on an H200: a launch-bound run fell from 350k to 265k tokens/s after a 2-step window).
  case $name in profile_*) extra=(--profile-from "$PROFILE_FROM" --profile-steps 2); steps=$((PROFILE_FROM + 1)) ;; esac
  # Every row names its kernels (model/kernel_path.hpp); an *_aten_X row keeps ATen's ops for X alone: X's effect.
  local ce=fused ln=fused lrm=fused
  case $name in *aten_ce) ce=aten ;; *aten_ln) ln=aten ;; *aten_lrm) lrm=aten ;; esac
  extra+=(--lm-head-kernel "$ce" --ln-kernel "$ln" --lrm-kernel "$lrm")
  case $name in *_graph) extra+=(--cuda-graph on) ;; esac  # the micro-step replayed from one CUDA graph
  say "ours: $name"
  timeout 300 "$@" "$BIN" train --data "$DATA" "${OURS_SIZE[@]}" --batch-size "$BATCH" --grad-accum 1 --device "$DEVICE" \
    --precision bf16 --max-iters "$steps" --warmup-iters 0 --eval-every 100000 --eval-batches 1 --log-every 1 \
    --log-heads-every 100000 --sample-tokens 0 --ckpt-every 100000 --keep-ckpts 1 --peak-tflops "$PEAK_TFLOPS" \
    --threads "$(nproc)" --condition "$cond" "${extra[@]}" --out "$WORK/ours_$name" --force > "$WORK/ours_$name.txt" 2>&1 \
    || { say "ours $name failed: $(tail -n 1 "$WORK/ours_$name.txt")"; bad=1; }
  [ -f "$WORK/ours_$name/profile.json" ] && mv "$WORK/ours_$name/profile.json" "$WORK/trace_ours_${name#profile_}.json"
}
ours plain N
ours plain_aten_ce N
ours plain_aten_ln N
ours multipliers C
ours multipliers_aten_lrm C
ours gaugefix_B B
if [ "$DEVICE" = cuda ]; then  # a CUDA graph needs the card (the CPU run refuses --cuda-graph on)
  ours plain_graph N
  ours multipliers_graph C
fi
if command -v torchrun > /dev/null || [ -x "$(dirname "$TORCH_PY")/torchrun" ]; then
  TR=$(command -v torchrun || echo "$(dirname "$TORCH_PY")/torchrun")
  BACKEND=$([ "$DEVICE" = cuda ] && echo nccl || echo gloo)
  ours "torchrun_$BACKEND" C "$TR" --nproc_per_node=1 --no-python
else
  say "torchrun not found: the launcher row is left out"; bad=1
fi
# --fit-micro-batch on (train/micro_batch.hpp) at nanoGPT's global batch (BATCH x 40 sequences; the CPU run: x 4):
# the probes on the card, one of them out of memory where the whole step does not fit; one step, for the line only.
FIT_ACCUM=$([ "$DEVICE" = cuda ] && echo 40 || echo 4)
if [ $(($(date +%s) - t_built)) -lt "${FIT_BY:-360}" ]; then
  say "ours: fit (--fit-micro-batch on, $BATCH x $FIT_ACCUM sequences per step)"
  timeout 120 "$BIN" train --data "$DATA" "${OURS_SIZE[@]}" --batch-size "$BATCH" --grad-accum "$FIT_ACCUM" \
    --fit-micro-batch on --device "$DEVICE" --precision bf16 --max-iters 1 --warmup-iters 0 --eval-batches 1 \
    --sample-tokens 0 --peak-tflops "$PEAK_TFLOPS" --threads "$(nproc)" --condition N --lm-head-kernel fused --ln-kernel fused \
    --out "$WORK/ours_fit" --force > "$WORK/ours_fit.txt" 2>&1 \
    || { say "ours fit failed: $(tail -n 1 "$WORK/ours_fit.txt")"; bad=1; }
else
  say "ours: fit left out (past FIT_BY=${FIT_BY:-360} s)"
fi
ours profile_plain N        # the profiles (not rows of the table)
ours profile_multipliers C

# 4. One table, then the profiles' top kernels.
"$ANALYSIS_PY" - "$WORK" "$DEVICE" "$PEAK_TFLOPS" "$STEPS" <<'PY' | tee "$WORK/gpu-bench.md"
import json, math, os, statistics, sys
out, device, peak, steps = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
rows, fpt = [], None
for mode in ("eager", "compile"):
    try:
        j = json.loads(open(f"{out}/peer_{mode}.json").read().strip().splitlines()[-1])
    except Exception as e:  # a failed peer: its row says so
        rows.append((f"nanoGPT {mode} (PyTorch)", math.nan, math.nan, None, math.nan, math.nan)); continue
    fpt = j["flops_per_token"]
    rows.append((f"nanoGPT {mode} (PyTorch {j['torch']})", j["tokens_per_s"], j.get("mfu") or math.nan,
                 j.get("peak_mem_gb"), j["first_loss"], j["loss"]))
import h5py  # ANALYSIS_PY: a Python with h5py (the table needs no torch)
for name in ("plain", "plain_aten_ce", "plain_aten_ln", "multipliers", "multipliers_aten_lrm", "plain_graph", "multipliers_graph", "gaugefix_B", "torchrun_nccl", "torchrun_gloo"):
    log = f"{out}/ours_{name}/log.h5"
    if not os.path.exists(log):
        continue
    with h5py.File(log, "r") as f:
        tps = f["series/tokens_per_s"][:]
        loss = f["series/loss"][:]
        mem = float(f["summary"].attrs.get("peak_mem_gb", math.nan))  # the CUDA allocator's peak (NaN on the CPU)
    timed = tps[2:steps - 1] if steps > 4 else tps
    med = float(statistics.median(timed))
    rows.append((f"ours {name}", med, fpt * med / (peak * 1e12) if fpt else math.nan, mem if mem == mem else None,
                 float(loss[0]), float(loss[-1])))
base = next((r[1] for r in rows if r[0].startswith("nanoGPT compile") and r[1] == r[1]), math.nan)
print(f"| {device}, bf16 | tokens/s | vs nanoGPT+compile | MFU (peak {peak:g} TFLOP/s) | peak memory GB | loss at step 1 | last loss |")
print("|---|---|---|---|---|---|---|")
for n, t, m, mem, l0, l1 in rows:
    print(f"| {n} | {t:,.0f} | {t / base:.2f}x | {100 * m:.1f} % | {'-' if mem is None else f'{mem:.1f}'} | {l0:.3f} | {l1:.3f} |")
print(f"\nMFU: 6N + 12·L·d·T FLOPs per token ({fpt:.4g}, nanoGPT's count, the same for every row); ours: median "
      f"per-step tokens/s of steps 3..{steps - 1}; peers: mean over the timed steps. Loss at step 1 ~ ln(vocab) for "
      "both (same model shape, different draws: the peers train on random tokens, ours on the synthetic corpus).")
PY
grep -h '^fitted ' "$WORK/ours_fit.txt" 2>/dev/null | sed 's/^/\n/' | tee -a "$WORK/gpu-bench.md"
for t in peer_eager peer_compile ours_plain ours_multipliers; do
  [ -f "$WORK/trace_$t.json" ] || continue
  { echo; "$ANALYSIS_PY" scripts/trace_top.py "$WORK/trace_$t.json" --top 12 --steps 2 --title "profile: $t (2 steps)"; } \
    | tee -a "$WORK/gpu-bench.md"
done
say "done: gpu-bench.md, parity rows in parity.txt$([ $bad = 0 ] || echo '; SOME STAGES FAILED')"
exit $bad
