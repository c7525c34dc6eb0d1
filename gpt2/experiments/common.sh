# Shared by the experiment scripts (conditions_grid.sh, frequency_grid.sh, lr_sensitivity.sh): run one
# training run unless its log says it finished, resuming it when it has checkpoints. Sourced, not run.
#   run_one OUT_DIR ARGS...   (ARGS: everything after `gaugelab train` except --out/--resume/--force)
# A run is finished when its /summary says completed or diverged (a diverged run stops the same way
# every time; its exit status 3 is not an error here).
# Environment: BUILD (default build), LAUNCH (a prefix such as "torchrun --nproc_per_node=8 --no-python";
# empty = one process), ANALYSIS_PY (a Python with h5py, default /usr/bin/python3), RUN_OUTPUT=file
# (the run's output to OUT_DIR.txt instead of the terminal: for runs in parallel).

BUILD=${BUILD:-build}
LAUNCH=${LAUNCH:-}
ANALYSIS_PY=${ANALYSIS_PY:-/usr/bin/python3}

run_finished() {  # 0 if OUT/log.h5 exists with /summary completed = 1 or diverged = 1
  [ -f "$1/log.h5" ] && "$ANALYSIS_PY" - "$1/log.h5" <<'PY' 2>/dev/null
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    a = f["summary"].attrs
    sys.exit(0 if int(a.get("completed", 0)) == 1 or int(a.get("diverged", 0)) == 1 else 1)
PY
}

run_one() {
  local out=$1
  shift
  if run_finished "$out"; then
    echo "[experiments] $out: done, skipped"
    return 0
  fi
  local mode=--force
  [ -d "$out/checkpoints" ] && [ -n "$(ls -A "$out/checkpoints" 2>/dev/null)" ] && mode=--resume
  echo "[experiments] $out: $([ $mode = --resume ] && echo resuming || echo starting)"
  local status=0
  # shellcheck disable=SC2086  # LAUNCH is a word list on purpose
  if [ "${RUN_OUTPUT:-}" = file ]; then
    $LAUNCH "$BUILD/gaugelab" train "$@" --out "$out" $mode > "$out.txt" 2>&1 || status=$?
  else
    $LAUNCH "$BUILD/gaugelab" train "$@" --out "$out" $mode || status=$?
  fi
  [ $status = 0 ] || [ $status = 3 ]  # 3: diverged, logged
}
