#!/usr/bin/env bash
# A time-boxed slice of the grids that need a GPU, on a lent GPU machine, in one prepared call: by default
# analysis/manifest.py's GPU_GRIDS in their order (seed 000's late instability first: 60 runs of 20 000 steps, all
# in its committed ledger since 2026-12-02, so skipped; then lr_sensitivity_gpu and its CUDA-stop test
# lr_sensitivity_gpu_math); the runs not yet finished, JOBS at a time on the card, stopped at BUDGET_S. A grid
# declared for the CPU runs with what manifest.GPU_SETS appends (its device), so its runs stay the declared ones.
# Every finished run's log.h5 and printout go into one archive at OUT's top, by their paths under runs/
# (OUT/gpu-grid-runs-1.tar.gz; split into up to 6 of equal shares past 15 MB: a lent machine returns 8 files of
# 16 MiB, 2 folders deep), refreshed after each grid; here `tar -xzf OUT/gpu-grid-runs-N.tar.gz` in the repository
# root puts them into runs/, and the grid resumes from them next time (finished runs are skipped;
# `python3 analysis/results_ledger.py write GRID` puts them into its ledger). A run the budget stops is not finished
# and does not come back (its checkpoints are too large to): OUT/GRID.txt, the grid's printout, ends with the step
# each stopped run had reached, so the next call can size its share.
#   scripts/gpu-grid.sh        (after make build; runs/gpu-carry carried along, for its assets; the call's
#                              own limit at least BUDGET_S + 60: the last grid is stopped, given 20 s, then packed)
# Environment: OUT (runs/gpu-grid-out), BUILD (build), BUDGET_S (420), JOBS (8), GRIDS (manifest.GPU_GRIDS), SEEDS
# (a subset of the grid's, e.g. "1 2 3 4": fills whole seeds first; the runner still skips the runs the committed
# ledger holds), ANALYSIS_PY (else the first of /usr/bin/python3, python3 and the venv's python with numpy
# and h5py), DEVICE (cuda; cpu runs the mechanics at a tiny size). JOBS 8 on an H200: each 20 000-step run of the late
# instability took ~398 s with 8 at a time (2026-11-30), so a 450 s budget finishes 8; a run stopped is lost.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu-grid-out}
BUILD=${BUILD:-build}
BUDGET_S=${BUDGET_S:-420}
JOBS=${JOBS:-8}
PY=${ANALYSIS_PY:-}
if [ -z "$PY" ]; then  # the first Python with numpy and h5py (the card's /usr/bin/python3 had no numpy: 2026-11-30)
  for p in /usr/bin/python3 python3 "$HOME/.cache/gaugelab/venv/bin/python" "$HOME/.cache/gaugelab/venv/bin/python3"; do
    command -v "$p" > /dev/null && "$p" -c 'import numpy, h5py' 2> /dev/null && { PY=$(command -v "$p"); break; }
  done
  [ -n "$PY" ] || { echo "gpu-grid: no Python with numpy and h5py (/usr/bin/python3, python3, the venv): set ANALYSIS_PY" >&2
                    exit 2; }
fi
if [ -z "${GRIDS:-}" ]; then
  GRIDS=$("$PY" -c 'import sys; sys.path.insert(0, "analysis"); import manifest; print(" ".join(manifest.GPU_GRIDS))') \
    || { echo "gpu-grid: analysis/manifest.py's GPU_GRIDS cannot be read with $PY" >&2; exit 2; }
fi
DEVICE=${DEVICE:-cuda}
# each grid's root and, on a card, what a CPU-declared grid appends (manifest.GRIDS, GPU_SETS): one line of the root,
# then a KEY=VALUE line per setting; an unknown grid is refused before anything runs
plan() {
  "$PY" - "$1" <<'PY'
import sys
sys.path.insert(0, "analysis")
import manifest
g = sys.argv[1]
if g not in manifest.GRIDS:
    sys.exit(f"gpu-grid: no grid {g!r} in analysis/manifest.py (GRIDS: {', '.join(manifest.GRIDS)})")
print(manifest.GRIDS[g][0]["root"])
for k, v in manifest.GPU_SETS.get(g, {}).items():
    print(f"{k}={v}")
PY
}
declare -A PLAN
ROOTS=""
for g in $GRIDS; do
  PLAN[$g]=$(plan "$g") || exit 2
  ROOTS="$ROOTS ${PLAN[$g]%%$'\n'*}"
done
echo "[gpu-grid] grids: $GRIDS; roots:$ROOTS"
[ -x "$BUILD/gaugelab" ] || { echo "gpu-grid: $BUILD/gaugelab is missing (make build)" >&2; exit 2; }
# The grids' corpus is prepared here (the runner re-prepares one older than the build, 0.1 s) from the BPE ranks and
# the Shakespeare text: the machine's own (install-deps.sh), else those carried in runs/gpu-carry/assets.
# A GAUGELAB_ASSETS given is used as given. (On the card the text once stood there without the ranks.)
ASSETS=${GAUGELAB_ASSETS:-${GAUGELAB_CACHE:-$HOME/.cache/gaugelab}/assets}
has_assets() { [ -f "$1/gpt2.tiktoken" ] && [ -d "$1/shakespeare" ]; }
if [ -z "${GAUGELAB_ASSETS:-}" ] && ! has_assets "$ASSETS" && has_assets runs/gpu-carry/assets; then
  ASSETS=$PWD/runs/gpu-carry/assets
  export GAUGELAB_ASSETS=$ASSETS
fi
has_assets "$ASSETS" \
  || { echo "gpu-grid: no BPE ranks or Shakespeare text under $ASSETS (carry runs/gpu-carry: gpu-bench.sh --carry)" >&2
       exit 2; }
mkdir -p "$OUT"
t0=$(date +%s)
sets=()
[ -n "${SEEDS:-}" ] && sets+=(--set "seeds=$SEEDS")
if [ "$DEVICE" = cpu ]; then  # mechanics only: two tiny runs per grid, under runs/gpu-grid-mechanics
  sets+=(--set "seeds=1" --set "lrs=1e-2" --set "conditions=A B"
         --set "extra=--device cpu --precision fp32 --n-layer 1 --n-embd 32 --n-head 2 --block-size 32 --max-iters 4 --warmup-iters 1 --eval-every 4")
  ROOTS=runs/gpu-grid-mechanics
fi
n=0 parts=0 dropped=0
pack() {  # every finished run's log and printout (no checkpoints), by its path under runs/: one archive, or up
  # to 6 of equal shares when one would pass 15 MB compressed (the logs compress ~30x, so rarely)
  local list all size k i f log
  list=$(mktemp) all=$(mktemp)
  # one Python for all: the runs whose log says they completed or diverged (the budget's stops are left behind)
  find $ROOTS -name log.h5 2>/dev/null | sort | "$PY" -c "import sys; sys.path.insert(0, 'analysis')
import make_figures as m
from pathlib import Path
for p in sys.stdin.read().split():
    if m.finished(Path(p)):
        print(p)" > "$list"
  n=$(grep -c '' "$list") parts=0 dropped=0
  while read -r log; do echo "$log"; [ -f "$(dirname "$log").txt" ] && echo "$(dirname "$log").txt"; done < "$list" > "$all"
  if [ "$n" -gt 0 ]; then
    tar -czf "$OUT/.grid.tmp" -T "$all"
    size=$(stat -c %s "$OUT/.grid.tmp")
    k=$(( size / 14000000 + 1 ))
    if [ $k = 1 ]; then
      mv -f "$OUT/.grid.tmp" "$OUT/gpu-grid-runs-1.tar.gz"; parts=1
    else  # k archives of the runs in order, n/k runs each; past 6 the rest stay behind (named in the last line)
      rm -f "$OUT/.grid.tmp"
      [ $k -le 6 ] || { dropped=$(( n - n * 6 / k )); k=6; }
      for i in $(seq 1 $k); do
        sed -n "$(( (i - 1) * (n - dropped) / k + 1 )),$(( i * (n - dropped) / k ))p" "$list" | while read -r log; do
          echo "$log"; [ -f "$(dirname "$log").txt" ] && echo "$(dirname "$log").txt"; done > "$all"
        tar -czf "$OUT/.grid.tmp" -T "$all" && mv -f "$OUT/.grid.tmp" "$OUT/gpu-grid-runs-$i.tar.gz"
      done
      parts=$k
    fi
  fi
  rm -f "$list" "$all"
  for f in "$OUT"/gpu-grid-runs-*.tar.gz; do  # an earlier pack's higher-numbered archives
    [ -f "$f" ] || continue
    k=${f##*-}; k=${k%.tar.gz}
    [ "$k" -le "$parts" ] || rm -f "$f"
  done
}
stopped() {  # GRID: a line per run of it that started and did not finish: the last step its printout shows
  local r; r=$([ "$DEVICE" = cpu ] && echo "runs/gpu-grid-mechanics/$1" || echo "${PLAN[$1]%%$'\n'*}")
  "$PY" - "$r" <<'PY'
import re, sys
from pathlib import Path
sys.path.insert(0, "analysis")
import make_figures as m
for txt in sorted(Path(sys.argv[1]).glob("*.txt")):
    run = txt.with_suffix("")
    if (run / "log.h5").exists() and m.finished(run / "log.h5"):
        continue
    steps = [ln for ln in txt.read_text(errors="replace").splitlines() if re.match(r"step \d+/\d+", ln)]
    print(f"[gpu-grid] stopped: {run}: {steps[-1][:120] if steps else 'no step printed'}")
PY
}
for g in $GRIDS; do
  left=$((BUDGET_S - ($(date +%s) - t0)))
  [ "$left" -gt 30 ] || break
  echo "[gpu-grid] $g: ${left}s left, $JOBS at a time"
  root=() gsets=()
  if [ "$DEVICE" = cpu ]; then
    root=(--set "root=runs/gpu-grid-mechanics/$g")
  else
    while IFS= read -r kv; do [ -z "$kv" ] || gsets+=(--set "$kv"); done < <(tail -n +2 <<< "${PLAN[$g]}")
  fi
  # its own process group, so that the budget stops the runner and every run it started (SIGTERM: a run
  # stops after its step; it is not finished, and is not copied back)
  setsid "$PY" analysis/make_figures.py --build "$BUILD" --grid "$g" --jobs "$JOBS" "${sets[@]}" "${gsets[@]}" "${root[@]}" \
    > "$OUT/$g.txt" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt "$BUDGET_S" ]; do sleep 2; done
  kill -TERM -- "-$pid" 2>/dev/null && { sleep 20; kill -KILL -- "-$pid" 2>/dev/null; }
  wait "$pid" 2>/dev/null
  stopped "$g" >> "$OUT/$g.txt"
  tail -n 3 "$OUT/$g.txt"
  pack
done
pack
echo "[gpu-grid] $n finished runs in $parts archive(s) $OUT/gpu-grid-runs-*.tar.gz$([ "$dropped" = 0 ] || echo "; $dropped left out (over 6 archives)") (tar -xzf each in the repository root); $(($(date +%s) - t0)) s"
