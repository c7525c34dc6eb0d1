#!/usr/bin/env bash
# Start-up of a toy verb: `gaugelab toy relu --steps 1` (one seed, no invariance test), wall time and
# peak memory, on the light front door (no LibTorch) against the same command in gaugelab-torch (the
# same code with the GPT-2 tier linked, i.e. what every verb paid before the split): the peer, measured
# in the same run. Median of 15 runs each; prints the ratio. Target (issue: toys start fast): <= 50 ms
# and <= 50 MB for the light one. Not asserted (a loaded machine measures the machine).
# usage: bench/toy_startup.sh [BUILD_DIR]   (default build)
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
light="$build/gaugelab"
full="$build/gaugelab-torch"
[ -x "$light" ] || { echo "toy_startup: no $light (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(toy relu --steps 1 --seeds 1 --gauges 0 --threads 1)

measure() {  # binary -> "median_ms max_rss_mb"
  local bin=$1 i
  for i in $(seq 15); do
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" "${args[@]}" --out "$tmp/run.h5" --force >/dev/null 2>&1
    cat "$tmp/time"
  done | sort -n | awk '{ t[NR] = $1; m = ($2 > m ? $2 : m) } END { printf "%.0f %.1f\n", 1000 * t[int((NR + 1) / 2)], m / 1024 }'
}

echo "toy_startup: load average $(cut -d' ' -f1-3 /proc/loadavg)"
read -r ms_light mb_light < <(measure "$light")
echo "  gaugelab        toy relu --steps 1: median ${ms_light} ms, peak ${mb_light} MB (target <= 50 ms, <= 50 MB)"
if [ -x "$full" ]; then
  read -r ms_full mb_full < <(measure "$full")
  echo "  gaugelab-torch  toy relu --steps 1: median ${ms_full} ms, peak ${mb_full} MB"
  awk -v a="$ms_full" -v b="$ms_light" -v c="$mb_full" -v d="$mb_light" \
    'BEGIN { printf "  light / torch-linked: %.1fx faster to start, %.1fx less memory\n", (b > 0 ? a / b : 0), c / d }'
fi
