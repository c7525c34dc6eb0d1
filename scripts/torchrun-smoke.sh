#!/usr/bin/env bash
# Smoke run of data-parallel training under torchrun on one machine: 2 ranks on the CPU, Gloo over
# loopback, the tiny config on the synthetic corpus for a few steps. Not run in CI (it needs the
# trainer, a prepared corpus and a minute); it shows the command line a cluster run uses:
#   torchrun --nproc_per_node=N --no-python BUILD/gaugelab train ...
# torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; gaugelab reads them
# (gpt2/dist/data_parallel.hpp), rank 0 alone writes the log and checkpoints under --out.
# Multi-node: run the same line on every node with --nnodes=K --node_rank=I
# --master_addr=HOST --master_port=PORT instead of --standalone (or launch with srun: Slurm's
# SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID are read directly, one task per GPU).
# usage: scripts/torchrun-smoke.sh [BUILD_DIR] [OUT_DIR] [extra train flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-runs/torchrun-smoke}
shift $(( $# < 2 ? $# : 2 ))
venv=${GAUGELAB_VENV:-$HOME/.cache/gaugelab/venv}
torchrun=${TORCHRUN:-$venv/bin/torchrun}
data=${GAUGELAB_SMOKE_DATA:-runs/data/synthetic}

[ -x "$build/gaugelab" ] || { echo "torchrun-smoke: no $build/gaugelab (build it first)" >&2; exit 1; }
[ -x "$torchrun" ] || { echo "torchrun-smoke: no torchrun at $torchrun (set TORCHRUN)" >&2; exit 1; }
if [ ! -d "$data" ]; then
  echo "torchrun-smoke: preparing the synthetic corpus in $data"
  "$build/gaugelab" prepare --synthetic --out "$data"
fi

# --standalone: a local rendezvous on a free port. OMP_NUM_THREADS=1 per rank keeps 2 ranks on 2 cores.
# GLOO_SOCKET_IFNAME=lo: Gloo binds to loopback (on a cluster, name the fabric's interface instead).
set -x
OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=lo "$torchrun" --standalone --nproc_per_node=2 --no-python \
  "$build/gaugelab" train --config gpt2/configs/tiny-cpu.ini --data "$data" --condition B \
  --gaugefix-every 10 --max-iters 20 --warmup-iters 5 --eval-every 10 --eval-batches 4 --threads 1 \
  --seed 42 --out "$out" "$@"
