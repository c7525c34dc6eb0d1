#!/usr/bin/env bash
# `make bench`: every benchmark in turn — each bench/*.sh script (given the build directory) and
# each program the build put under BUILD/bench/. Benchmarks print ratios (against a peer measured
# in the same run, or between thread counts); nothing here asserts a speed.
# usage: scripts/bench.sh [BUILD_DIR]   (default build)
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (other work on the cores skews every ratio)"
ran=0
failed=0
run() {
  echo
  echo "== $*"
  if "$@"; then :; else
    echo "bench: '$*' failed"
    failed=$((failed + 1))
  fi
  ran=$((ran + 1))
}
for script in bench/*.sh; do
  [ -f "$script" ] && run bash "$script" "$build"
done
if [ -d "$build/bench" ]; then
  for program in "$build"/bench/*; do
    [ -f "$program" ] && [ -x "$program" ] && run "$program"
  done
fi
echo
echo "bench: $ran benchmark(s) run, $failed failed"
[ "$failed" -eq 0 ]
