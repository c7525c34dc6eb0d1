#!/usr/bin/env bash
# Sweep speed-up from 1 to 2 threads: the same relu sweep (rows are independent runs, OpenMP
# dynamic schedule) on --threads 1 and --threads 2, timed by the sweep itself (its /summary
# elapsed_s: running and writing the rows, without process start-up). Prints the ratio from one
# run of each; the target is >= 1.8x on an otherwise idle 2-core machine. Not asserted: the load
# average printed beside it says how much other work shared the cores.
# usage: bench/sweep_threads.sh [BUILD_DIR]   (default build)
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
gaugelab="$build/gaugelab"
[ -x "$gaugelab" ] || { echo "sweep_threads: no $gaugelab (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 3 x 2 grid x 10 seeds = 60 rows of 5000 GD steps: a few seconds on one thread.
args=(sweep relu --lr 5e-3,1e-2,2e-2 --lambda 0,0.2 --seeds 10 --steps 5000 --progress-s 1000)
rows=60

elapsed() {  # threads -> seconds the sweep reports
  "$gaugelab" "${args[@]}" --threads "$1" --out "$tmp/t$1.h5" 2>/dev/null | awk '$1 == "elapsed_s" { print $2 }'
}

load1=$(cut -d' ' -f1 /proc/loadavg)
t1=$(elapsed 1)
load2=$(cut -d' ' -f1 /proc/loadavg)
t2=$(elapsed 2)
awk -v t1="$t1" -v t2="$t2" -v rows="$rows" -v l1="$load1" -v l2="$load2" -v cores="$(nproc)" 'BEGIN {
  printf "sweep relu, %d rows x 5000 steps: 1 thread %.2f s (%.1f rows/s), 2 threads %.2f s (%.1f rows/s)\n",
         rows, t1, rows / t1, t2, rows / t2
  printf "sweep speed-up 1 -> 2 threads: %.2fx (target >= 1.8x; load average before the runs %s, %s on %d cores)\n",
         t1 / t2, l1, l2, cores
}'
