# Shared by the seed-000 experiment scripts: run one training run unless its log says it completed,
# resuming it when it has checkpoints. Sourced, not run.
#   run_one OUT_DIR ARGS...   (ARGS: everything after `gaugelab train` except --out/--resume/--force)
# Environment: BUILD (default build), LAUNCH (a prefix such as
# "torchrun --nproc_per_node=8 --no-python"; empty = one process).

BUILD=${BUILD:-build}
LAUNCH=${LAUNCH:-}

run_completed() {  # 0 if OUT/log.h5 exists with /summary completed = 1
  [ -f "$1/log.h5" ] && /usr/bin/python3 - "$1/log.h5" <<'PY' 2>/dev/null
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    sys.exit(0 if int(f["summary"].attrs.get("completed", 0)) == 1 else 1)
PY
}

run_one() {
  local out=$1
  shift
  if run_completed "$out"; then
    echo "[experiments] $out: completed, skipped"
    return 0
  fi
  local mode=()
  if [ -d "$out/checkpoints" ]; then
    mode=(--resume)
    echo "[experiments] $out: resuming"
  else
    mode=(--force)
    echo "[experiments] $out: starting"
  fi
  # shellcheck disable=SC2086  # LAUNCH is a word list on purpose
  $LAUNCH "$BUILD/gaugelab" train "$@" --out "$out" "${mode[@]}"
}
