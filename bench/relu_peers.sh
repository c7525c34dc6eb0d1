#!/usr/bin/env bash
# The relu toy against its peers, on one core (taskset to CPU 0), as a user runs it: `gaugelab toy relu`
# (process wall time, start-up and log writing included; --gauges 0) for 1 and 10 seeds, against the same
# protocol in JAX (jax.jit of a lax.scan over steps, vmap over seeds; compile time excluded, the peer's best
# case) and NumPy (bench/reference/relu_gd.py). Targets (issue: the toy tier as an instrument): >= 5x JAX on
# the 10-seed run and >= 50x NumPy per core (bench/toys_relu prints the per-core kernel ratio and the FMA-peak
# fraction). Not asserted. JAX comes from the bench venv (GAUGELAB_BENCH_PEERS=1 scripts/install-deps.sh);
# without it that peer is skipped, said so.
# usage: bench/relu_peers.sh [BUILD_DIR]   (default build)
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
gaugelab="$build/gaugelab"
[ -x "$gaugelab" ] || { echo "relu_peers: no $gaugelab (build first)" >&2; exit 1; }
jax_py=${GAUGELAB_BENCH_VENV:-$HOME/.cache/gaugelab/bench-venv}/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
steps=100000
one_core() { taskset -c 0 "$@"; }

ours() {  # seeds log_every -> seed-steps/s (wall time of the whole process)
  local TIMEFORMAT='%R' t
  t=$( { time one_core "$gaugelab" toy relu --seeds "$1" --steps "$steps" --gauges 0 --threads 1 --log-every "$2" \
          --out "$tmp/r.h5" --force >/dev/null 2>&1; } 2>&1)
  awk -v s="$1" -v n="$steps" -v t="$t" 'BEGIN { printf "%.0f", s * n / t }'
}

echo "relu_peers: one core (CPU 0), N = 200, H = 20, lambda 0, $steps steps; load average $(cut -d' ' -f1-3 /proc/loadavg)"
o1=$(ours 1 "$steps"); o10=$(ours 10 "$steps"); o10l=$(ours 10 10)
echo "  gaugelab toy relu, 1 seed:   $o1 steps/s (start-up and log included)"
echo "  gaugelab toy relu, 10 seeds: $o10 seed-steps/s; with the default series every 10 steps: $o10l"
np=$(OPENBLAS_NUM_THREADS=1 one_core /usr/bin/python3 bench/reference/relu_gd.py --steps 3000 | awk '/steps_per_s/ { print $2 }')
echo "  NumPy:                       $np steps/s -> gaugelab 1 seed / NumPy: $(awk -v a="$o1" -v b="$np" 'BEGIN { printf "%.1f", a / b }')x (target >= 50x)"
if [ -x "$jax_py" ] && "$jax_py" -c "import jax" 2>/dev/null; then
  j1=$(one_core "$jax_py" bench/reference/relu_gd_jax.py --seeds 1 --steps 20000 | awk '/seed_steps_per_s/ { print $2 }')
  j10=$(one_core "$jax_py" bench/reference/relu_gd_jax.py --seeds 10 --steps 20000 | awk '/seed_steps_per_s/ { print $2 }')
  echo "  JAX (jit + scan + vmap, compile excluded): 1 seed $j1, 10 seeds $j10 seed-steps/s"
  awk -v a="$o1" -v b="$j1" -v c="$o10" -v d="$j10" -v e="$o10l" \
    'BEGIN { printf "  gaugelab / JAX: 1 seed %.1fx, 10 seeds %.1fx (target >= 5x), 10 seeds with series %.1fx\n", a / b, c / d, e / d }'
else
  echo "  JAX peer skipped: no jax in $jax_py (GAUGELAB_BENCH_PEERS=1 scripts/install-deps.sh installs it)"
fi
