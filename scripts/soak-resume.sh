#!/usr/bin/env bash
# Kill-and-resume soak: SIGKILLs a training run and a sweep at random moments, resumes each, and compares
# every logged value of the finished run with an uninterrupted one (scripts/soak_compare.py: same bits,
# wall-clock series aside).
#   scripts/soak-resume.sh N      N kills of each workload (rounds of 1-5 kills until N are spent, at most
#                                 3N rounds; a round whose run ends in error stops that workload)
# Settings: BUILD (default build), SOAK_DIR (default BUILD/soak), SOAK_SEED (default 1), SOAK_WORKLOADS
# ("train sweep"; train needs the LibTorch build). Prints one line per round and a total; exit 1 if any
# round's log differs or a run fails in a way other than the kill.
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-10}
[[ "$N" =~ ^[0-9]+$ ]] && [ "$N" -ge 1 ] || { echo "soak: N must be a positive integer, not '$N'" >&2; exit 2; }
BUILD=${BUILD:-build}
BIN="$BUILD/gaugelab"
ROOT=${SOAK_DIR:-$BUILD/soak}
WORKLOADS=${SOAK_WORKLOADS:-"train sweep"}
PY=${ANALYSIS_PY:-/usr/bin/python3}
RANDOM=${SOAK_SEED:-1}
[ -x "$BIN" ] || { echo "soak: $BIN is missing (make build)" >&2; exit 2; }
rm -rf "$ROOT"
mkdir -p "$ROOT"

# Runs a command in the background, SIGKILLs it after MS milliseconds if it still runs.
# Returns 0 if it finished by itself with exit 0, 10 if killed, else its exit status.
run_or_kill() {
  local ms=$1; shift
  "$@" >>"$ROOT/children.log" 2>&1 &
  local pid=$! waited=0
  while [ $waited -lt "$ms" ]; do
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; return $?; fi
    sleep 0.05
    waited=$((waited + 50))
  done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 10; fi
  wait "$pid"
}

train_cmd() {  # OUT [extra...]
  local out=$1; shift
  echo "$BIN" train --data "$ROOT/data" --out "$out" --model nano --n-embd 32 --block-size 32 --compact-vocab \
    --batch-size 4 --eval-batches 2 --threads 1 --peak-tflops 1 --log-every 100000 --lr 3e-3 --warmup-iters 5 \
    --max-iters 600 --ckpt-every 25 --eval-every 25 --log-heads-every 5 --condition B --gaugefix-every 3 "$@"
}
sweep_cmd() {  # OUT
  echo "$BIN" sweep relu --lr 1e-3,3e-3,1e-2 --lambda 0,0.1 --seeds 6 --steps 4000 --hidden 16 --threads 1 \
    --flush-s 0.2 --out "$1"
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# The kill window from the reference run's wall time (since START_MS): a kill lands anywhere from the
# first tenth of the run to its end, on whatever machine this is.
window() {
  local ms=$(( $(now_ms) - $1 ))
  lo=$(( ms / 10 )); hi=$ms
  [ $hi -gt $((lo + 50)) ] || hi=$((lo + 50))
  echo "soak $w: the uninterrupted run took $ms ms; kills land in [$lo, $hi) ms"
}

total_bad=0
for w in $WORKLOADS; do
  case $w in
    train)
      if ! "$BIN" train --describe-options >/dev/null 2>&1; then echo "soak train: skipped (built without LibTorch)"; continue; fi
      "$BIN" prepare --synthetic --docs 300 --seed 1 --out "$ROOT/data" >/dev/null 2>&1 || { echo "soak: prepare failed" >&2; exit 1; }
      ref="$ROOT/train_ref"; t=$(now_ms)
      $(train_cmd "$ref") >/dev/null 2>&1 || { echo "soak: the reference train run failed" >&2; exit 1; }
      ref_log="$ref/log.h5"; window "$t" ;;
    sweep)
      ref="$ROOT/sweep_ref.h5"; t=$(now_ms)
      $(sweep_cmd "$ref") >/dev/null 2>&1 || { echo "soak: the reference sweep failed" >&2; exit 1; }
      ref_log="$ref"; window "$t" ;;
    *) echo "soak: unknown workload '$w' (train, sweep)" >&2; exit 2 ;;
  esac
  kills=0 rounds=0 identical=0 t0=$(date +%s)
  # At most 3N rounds: a round whose run outpaces every kill time spends none (a fast machine).
  while [ $kills -lt "$N" ] && [ $rounds -lt $((3 * N)) ]; do
    rounds=$((rounds + 1))
    out="$ROOT/${w}_round$rounds"; [ $w = sweep ] && out="$out.h5"
    want=$((1 + RANDOM % 5)); [ $((kills + want)) -gt "$N" ] && want=$((N - kills))
    got=0 status=0 first=1
    while :; do
      if [ $w = train ]; then
        if [ $first = 1 ]; then cmd=$(train_cmd "$out"); else cmd=$(train_cmd "$out" --resume); fi
      else
        cmd=$(sweep_cmd "$out")  # rerunning the same sweep resumes it
      fi
      first=0
      if [ $got -lt $want ]; then ms=$((lo + RANDOM % (hi - lo))); else ms=600000; fi
      run_or_kill "$ms" $cmd; status=$?
      if [ $status = 10 ]; then got=$((got + 1)); continue; fi
      break
    done
    kills=$((kills + got))
    if [ $status != 0 ]; then
      echo "soak $w round $rounds: after $got kill(s) the run ended with exit $status (see $ROOT/children.log)"
      total_bad=$((total_bad + 1)); break  # a failing workload stops here; its folder is kept
    fi
    verdict=$("$PY" scripts/soak_compare.py "$ref_log" "$( [ $w = train ] && echo "$out/log.h5" || echo "$out")")
    [ $? = 0 ] && identical=$((identical + 1)) || total_bad=$((total_bad + 1))
    echo "soak $w round $rounds: $got kill(s), $verdict"
    rm -rf "$out"
  done
  echo "soak $w: $kills kills in $rounds rounds, $identical/$rounds logs identical to the uninterrupted run ($(( $(date +%s) - t0 )) s, load $(cut -d' ' -f1 /proc/loadavg))"
done
[ $total_bad = 0 ]
