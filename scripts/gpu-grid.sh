#!/usr/bin/env bash
# A time-boxed slice of the GPU learning-rate grids (analysis/manifest.py: lr_sensitivity_gpu, then
# lr_sensitivity_gpu_math, the CUDA-stop test) on a lent GPU machine, in one prepared call: the runs not yet
# finished, JOBS at a time on the card, stopped at BUDGET_S; each finished run's log.h5 and output are copied
# under $OUT/runs/... (what comes back from the machine) to be placed into runs/ here: the grid resumes from
# them next time (finished runs are skipped).
#   scripts/gpu-grid.sh        (after make build; the prepared corpus runs/data/shakespeare carried along)
# Environment: OUT (runs/gpu-grid-out), BUILD (build), BUDGET_S (420), JOBS (8), GRIDS ("lr_sensitivity_gpu
# lr_sensitivity_gpu_math"), SEEDS (a subset of the grid's, e.g. "1 2 3 4": fills whole seeds first),
# ANALYSIS_PY (/usr/bin/python3, with h5py), DEVICE (cuda; cpu runs the mechanics at a tiny size).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu-grid-out}
BUILD=${BUILD:-build}
BUDGET_S=${BUDGET_S:-420}
JOBS=${JOBS:-8}
GRIDS=${GRIDS:-"lr_sensitivity_gpu lr_sensitivity_gpu_math"}
PY=${ANALYSIS_PY:-/usr/bin/python3}
DEVICE=${DEVICE:-cuda}
[ -x "$BUILD/gaugelab" ] || { echo "gpu-grid: $BUILD/gaugelab is missing (make build)" >&2; exit 2; }
[ -f runs/data/shakespeare/train.bin ] || { echo "gpu-grid: runs/data/shakespeare is missing (carry it)" >&2; exit 2; }
mkdir -p "$OUT"
t0=$(date +%s)
sets=()
[ -n "${SEEDS:-}" ] && sets+=(--set "seeds=$SEEDS")
ROOTS="runs/lr_sensitivity_gpu runs/lr_sensitivity_gpu_math"
if [ "$DEVICE" = cpu ]; then  # mechanics only: two tiny runs per grid, under runs/gpu-grid-mechanics
  sets+=(--set "seeds=1" --set "lrs=1e-2" --set "conditions=A B"
         --set "extra=--device cpu --precision fp32 --n-layer 1 --n-embd 32 --n-head 2 --block-size 32 --max-iters 4 --warmup-iters 1 --eval-every 4")
  ROOTS=runs/gpu-grid-mechanics
fi
for g in $GRIDS; do
  left=$((BUDGET_S - ($(date +%s) - t0)))
  [ "$left" -gt 30 ] || break
  echo "[gpu-grid] $g: ${left}s left, $JOBS at a time"
  root=(); [ "$DEVICE" = cpu ] && root=(--set "root=runs/gpu-grid-mechanics/$g")
  # its own process group, so that the budget stops the runner and every run it started (SIGTERM: a run
  # stops after its step; it is not finished, and is not copied back)
  setsid "$PY" analysis/make_figures.py --build "$BUILD" --grid "$g" --jobs "$JOBS" "${sets[@]}" "${root[@]}" \
    > "$OUT/$g.txt" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt "$BUDGET_S" ]; do sleep 2; done
  kill -TERM -- "-$pid" 2>/dev/null && { sleep 20; kill -KILL -- "-$pid" 2>/dev/null; }
  wait "$pid" 2>/dev/null
  tail -n 3 "$OUT/$g.txt"
done
# What comes back: every finished run's log and printout (no checkpoints), by its path under runs/.
n=0
for log in $(find $ROOTS -name log.h5 2>/dev/null); do
  d=$(dirname "$log")
  "$PY" -c "import sys; sys.path.insert(0, 'analysis'); import make_figures as m; from pathlib import Path; \
sys.exit(0 if m.finished(Path(sys.argv[1])) else 1)" "$log" 2>/dev/null || continue  # stopped by the budget: left behind
  mkdir -p "$OUT/$d"
  cp "$log" "$OUT/$d/"
  [ -f "$d.txt" ] && cp "$d.txt" "$OUT/$(dirname "$d")/"
  n=$((n + 1))
done
echo "[gpu-grid] $n finished runs under $OUT/runs (copy them into runs/ on the development machine); $(($(date +%s) - t0)) s"
