#!/usr/bin/env bash
# The GPU issue's bench on one lent GPU, as stages under one time budget, for a call killed at its wall limit
# that returns at most 8 files (each <= 16 MiB, <= 2 folders deep) from OUT.
#   scripts/gpu-bench.sh                       every stage (STAGES=a,b,...: a subset, in the order below)
#   scripts/gpu-bench.sh --remaining SUMMARY   the stages SUMMARY has no "passed" line for (one that FAILED: again
#                                              under CUDA_LAUNCH_BLOCKING=1); WORK is kept: both calls' rows
#   scripts/gpu-bench.sh --carry [DIR]         here: what the GPU machine lacks into DIR (runs/gpu-carry, ignored):
#                                              DIR/debs (gpu-prefix.sh download), DIR/data (the corpus), DIR/assets
#                                              (the BPE ranks and the Shakespeare text: gpu-grid.sh prepares its
#                                              corpus from them)
# OUT, refreshed after every stage (written under a temporary name, then renamed):
#   summary.txt   a machine line at second 0, then one line per stage as it ends: "<s>s <stage> passed <numbers>",
#                 "... FAILED <why>" or "... skipped (<why>)"; twin checks "<s>s twin A=B PASS|FAIL|NOT-COMPARED ...";
#                 last a "done" line
#   gpu-bench.md  the table so far (a dead row shown dead), twin verdicts, the fitted line, the profiles' tops
#   logs.tar.gz   the rest of WORK (text logs, log.h5 files, the peers' JSON, the kernel check)
#   trace_ours_plain.json.gz, trace_peer_compile.json.gz   raw profiles, each when under 15 MB
# Stages in order, with the seconds each reserves (H200, 16 cores; a stage that does not fit in what is left of
# BUDGET is skipped): kernel-check (beside the build; the timed rows wait for it), build (~200; runs with 30 s left:
# ninja keeps what it built for the next call), parity 40, plain,
# multipliers, multipliers_aten_lrm, plain_aten_ln 25 each, plain_graph, multipliers_graph 35, peer_compile 90,
# profile_plain, profile_multipliers 35, plain_aten_ce, gaugefix_B 25, peer_eager 35, torchrun 35, fit 60, oom 25,
# torch_ops 90, cuda_tests 150 (builds test_gpt2 and test_train: not yet timed on a card).
# Every command is limited to what is left and killed hard GRACE s after its SIGTERM. Rows: GPT-2 124M, bf16, STEPS
# steps of BATCH x 1024 tokens, no checkpoint (--ckpt-every 0), on the corpus DATA, whose windows the nanoGPT peers
# read too (tests/reference/nanogpt_ref.py --data). Twins (scripts/gpu_bench_rows.py): *_aten_lrm and *_graph
# against their row, step-1 loss bit-equal; plain_aten_ln 1e-3 and plain_aten_ce 2e-2 against plain; all within
# 2e-2 at step STEPS.
# Environment: OUT (runs/gpu-bench), WORK (/tmp/gpu-bench; emptied unless --remaining), BUDGET (450), GRACE (15),
# BUILD (build), SKIP_BUILD (0), JOBS (nproc), DEVICE (cuda; cpu: the mechanics at a tiny size), TORCH_PY (else the
# first of python3 and ~/.cache/gaugelab/venv/bin/python whose torch imports), ANALYSIS_PY (else the first with
# h5py; none: the printed lines are read), STEPS (20), BATCH (12), SEED (0), PEAK_TFLOPS (989), DATA
# (runs/gpu-carry/data; prepared where missing), DEPS_DEBS (.deb files unpacked under DEPS_PREFIX,
# /tmp/gaugelab-prefix), KERNEL_CHECK (scripts/gpu-kernel-check.sh), ROW_ARGS_<stage> (more flags for that row),
# CMAKE_EXTRA (more -D settings where BUILD is configured afresh: -DGAUGELAB_CUDA_AT_START=ON links the CUDA half).
#
# Each call runs in a copy of the repository's tree; ignored folders travel only when named.
# Here first: make build && bash scripts/gpu-bench.sh --carry      (runs/gpu-carry, ~27 MB, travels with each call)
# Call 1 (wall limit 480 s):
#   DEPS_DEBS=runs/gpu-carry/debs BUDGET=450 OUT="$OUT" bash scripts/gpu-bench.sh
# Call 2 (limit 240 s), issued at once on the still-warm machine:
#   DEPS_DEBS=runs/gpu-carry/debs BUDGET=220 OUT="$OUT" bash scripts/gpu-bench.sh --remaining /tmp/gpu-bench/summary.txt
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
t0=$(date +%s)
ORDER=(kernel-check build parity plain multipliers multipliers_aten_lrm plain_aten_ln plain_graph multipliers_graph
  peer_compile profile_plain profile_multipliers plain_aten_ce gaugefix_B peer_eager torchrun fit oom torch_ops
  cuda_tests)
declare -A COST=([kernel-check]=0 [build]=30 [parity]=40 [plain_graph]=35 [multipliers_graph]=35 [peer_compile]=90
  [profile_plain]=35 [profile_multipliers]=35 [peer_eager]=35 [torchrun]=35 [fit]=60 [torch_ops]=90 [cuda_tests]=150)
OUT=${OUT:-runs/gpu-bench}
WORK=${WORK:-/tmp/gpu-bench}
BUDGET=${BUDGET:-450}
GRACE=${GRACE:-15}
BUILD=${BUILD:-build}
BIN="$BUILD/gaugelab"
DEVICE=${DEVICE:-cuda}
SEED=${SEED:-0}
PEAK_TFLOPS=${PEAK_TFLOPS:-989}
JOBS=${JOBS:-$(nproc)}
KERNEL_CHECK=${KERNEL_CHECK:-}
if [ "$DEVICE" = cpu ]; then  # the mechanics only: a tiny model in float32 (bf16 on a CPU is slow), every estimate 5 s
  STEPS=${STEPS:-6}; BATCH=${BATCH:-2}; PROFILE_FROM=2; PRECISION=fp32; THREADS=${THREADS:-1}
  SIZE=(--n-layer 2 --n-head 2 --n-embd 64 --seq 64); OURS_SIZE=(--model nano --n-embd 64 --block-size 64)
  for s in "${ORDER[@]}"; do COST[$s]=5; done; COST[kernel-check]=0
else
  STEPS=${STEPS:-20}; BATCH=${BATCH:-12}; PROFILE_FROM=6; PRECISION=bf16; THREADS=${THREADS:-$(nproc)}
  SIZE=(--n-layer 12 --n-head 12 --n-embd 768 --seq 1024); OURS_SIZE=(--model gpt2 --block-size 1024)
  KERNEL_CHECK=${KERNEL_CHECK:-scripts/gpu-kernel-check.sh}
fi
DATA=${DATA:-runs/gpu-carry/data}
prepare_data() {  # DIR: the bench's corpus (synthetic, 2000 documents: ~370k tokens)
  "$BIN" prepare --synthetic --docs 2000 --seed 1 --out "$1" --force --progress=false
}
PREV=
if [ "${1:-}" = --remaining ]; then
  PREV=${2:?usage: gpu-bench.sh [--remaining PREVIOUS_SUMMARY]}
elif [ "${1:-}" = --carry ]; then
  dir=${2:-runs/gpu-carry}
  assets=${GAUGELAB_ASSETS:-${GAUGELAB_CACHE:-$HOME/.cache/gaugelab}/assets}  # where install-deps.sh put them
  [ -f "$assets/gpt2.tiktoken" ] && [ -d "$assets/shakespeare" ] \
    || { echo "gpu-bench: --carry: no BPE ranks or Shakespeare text under $assets (scripts/install-deps.sh)" >&2; exit 1; }
  bash scripts/gpu-prefix.sh download "$dir/debs" > /dev/null && prepare_data "$dir/data" > /dev/null \
    || { echo "gpu-bench: --carry failed (above); $BIN prepares the corpus: make build first" >&2; exit 1; }
  rm -rf "$dir/assets" && mkdir -p "$dir/assets" && cp -r "$assets/gpt2.tiktoken" "$assets/shakespeare" "$dir/assets/" \
    || { echo "gpu-bench: --carry: copying $assets into $dir/assets failed" >&2; exit 1; }
  echo "gpu-bench: $dir holds $(ls "$dir/debs" | wc -l) packages, the corpus and the assets ($(du -sh "$dir" | cut -f1)): carry it"
  exit 0
elif [ $# -gt 0 ]; then
  echo "usage: gpu-bench.sh [--remaining PREVIOUS_SUMMARY | --carry [DIR]] (settings: see its header)" >&2
  exit 2
fi

# WORK holds every log; OUT only what comes back. Rows that an earlier call left running (killed at its limit,
# their timeout in a process group of its own) are ended first: they would hold the card.
mkdir -p "$WORK" "$OUT" || { echo "gpu-bench: cannot create $WORK or $OUT" >&2; exit 2; }
if [ -f "$WORK/pids" ]; then
  while read -r p; do
    grep -qa timeout "/proc/$p/cmdline" 2>/dev/null && kill -KILL -- "-$p" 2>/dev/null
  done < "$WORK/pids"
  rm -f "$WORK/pids"
fi
if [ -z "$PREV" ] && [ "${KEEP_WORK:-0}" != 1 ]; then
  find "$WORK" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
fi
rm -f "$OUT"/summary.txt "$OUT"/gpu-bench.md "$OUT"/logs.tar.gz "$OUT"/trace_*.json.gz "$OUT"/.*.tmp
elapsed() { echo $(($(date +%s) - t0)); }
left() { echo $((BUDGET - $(elapsed))); }
line() {  # one summary line, on stdout, in OUT (this call's) and in WORK (every call's since WORK was emptied)
  local l; l="$(elapsed)s $*"
  echo "$l"; echo "$l" >> "$OUT/summary.txt"; echo "$l" >> "$WORK/summary.txt"
}

# Second 0: the machine, the Pythons. A TORCH_PY given is described from its packages' metadata (importing torch
# takes seconds); one looked for is the first whose torch imports, described by that import.
py_has() { "$1" -c "import $2" > /dev/null 2>&1; }
PYINFO='import sys, importlib.metadata as m
def v(p):
    try:
        return p + " " + (m.version(p) if p != "torch" or "torch" not in sys.modules else
                          sys.modules["torch"].__version__ + " (cuda " + str(sys.modules["torch"].version.cuda) + ")")
    except m.PackageNotFoundError:
        return "NO " + p
print("python", sys.version.split()[0] + ",", ", ".join(v(p) for p in ("torch", "h5py", "numpy")))'
if [ -z "${TORCH_PY:-}" ]; then
  for p in python3 "$HOME/.cache/gaugelab/venv/bin/python"; do
    command -v "$p" > /dev/null || continue
    pyinfo=$("$p" -c "import torch; $PYINFO" 2>/dev/null) && { TORCH_PY=$(command -v "$p"); break; }
  done
  TORCH_PY=${TORCH_PY:-python3}
  pyinfo=${pyinfo:-"no torch in python3 or $HOME/.cache/gaugelab/venv/bin/python (set TORCH_PY)"}
else
  pyinfo=$("$TORCH_PY" -c "$PYINFO" 2>&1 | tail -n 1)
fi
if [ -z "${ANALYSIS_PY:-}" ]; then
  for p in "$TORCH_PY" /usr/bin/python3 python3; do
    if command -v "$p" > /dev/null && py_has "$p" h5py; then ANALYSIS_PY=$p; break; fi
  done
fi
ANALYSIS_PY=${ANALYSIS_PY:-$TORCH_PY}  # no h5py anywhere: gpu_bench_rows.py reads the printed lines
if [ "$DEVICE" = cpu ]; then gpu="no GPU (DEVICE=cpu)"
elif command -v nvidia-smi > /dev/null; then
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)
else gpu="no nvidia-smi"; fi
line "machine $gpu; $(nproc) cores; $TORCH_PY: $pyinfo; analysis $ANALYSIS_PY; nvcc $(nvcc --version 2>/dev/null \
  | sed -n 's/.*release \([0-9.]*\).*/\1/p' || true); $(cmake --version 2>/dev/null | head -n 1); budget $BUDGET s"
[ "$("$ANALYSIS_PY" -c 'print(1)' 2>/dev/null)" = 1 ] || { line "FAILED: no Python at $ANALYSIS_PY"; exit 2; }

# The stages to run: STAGES, less what PREV passed (and the build when its binary is there), less the build
# under SKIP_BUILD=1.
declare -A WANT BLOCKING
IFS=, read -r -a chosen <<< "${STAGES:-$(IFS=,; echo "${ORDER[*]}")}"
for s in "${chosen[@]}"; do
  [[ " ${ORDER[*]} " == *" $s "* ]] || { line "FAILED: unknown stage '$s' in STAGES"; exit 2; }
  WANT[$s]=1
done
if [ -n "$PREV" ]; then
  if [ -f "$PREV" ]; then
    for s in "${ORDER[@]}"; do
      grep -Eq "^[0-9]+s $s passed" "$PREV" && unset "WANT[$s]"
      case $s in build|kernel-check) ;; *) grep -Eq "^[0-9]+s $s FAILED" "$PREV" && BLOCKING[$s]=1 ;; esac
    done
    [ -x "$BIN" ] || WANT[build]=1  # a fresh machine: the rows need the binary again
    [ -n "${CMAKE_EXTRA:-}" ] && WANT[build]=1  # new settings: configured and built again
  else
    line "remaining: $PREV is missing (a fresh machine?): every chosen stage runs"
  fi
fi
[ "${SKIP_BUILD:-0}" = 1 ] && unset "WANT[build]"

# Dependencies the machine lacks (scripts/gpu-prefix.sh), every call: the binary loads their libraries.
if [ -n "${DEPS_DEBS:-}" ]; then
  PREFIX=${DEPS_PREFIX:-/tmp/gaugelab-prefix}
  if exports=$(bash scripts/gpu-prefix.sh env "$DEPS_DEBS" "$PREFIX" 2> "$WORK/deps.txt") && eval "$exports" \
     && [[ ":${CMAKE_PREFIX_PATH:-}:" == *":$PREFIX/usr:"* && "${LD_LIBRARY_PATH:-}" == *"$PREFIX/"* ]]; then
    line "deps passed ($(ls "$DEPS_DEBS"/*.deb | wc -l) packages under $PREFIX)"
  else
    line "deps FAILED ($(tail -n 1 "$WORK/deps.txt" 2>/dev/null || echo 'gpu-prefix.sh printed no exports'))"
  fi
fi

# What comes back, refreshed after every stage (one at a time: the kernel check's stage ends in the background).
pack() {
  (
    command -v flock > /dev/null && flock 9
    tar -C "$WORK" -czf "$OUT/.logs.tmp" --warning=no-file-changed --exclude=./data --exclude='*/checkpoints' \
      --exclude='trace_*.json' --exclude=profile.json --exclude=.pack.lock --exclude=pids . 2>/dev/null
    if [ $? -le 1 ]; then  # 1: a file changed as it was read (the kernel check's log); the archive is whole
      if [ "$(stat -c %s "$OUT/.logs.tmp")" -gt 15000000 ]; then  # too large: the text logs only
        (cd "$WORK" && find . -path ./data -prune -o -type f \( -name '*.txt' -o -name '*.json' -o -name '*.md' \) \
          ! -name 'trace_*' -print | tar -czf "$OUT/.logs.tmp" -T - 2>/dev/null)
      fi
      mv -f "$OUT/.logs.tmp" "$OUT/logs.tar.gz"
    else
      rm -f "$OUT/.logs.tmp"
    fi
    "$ANALYSIS_PY" scripts/gpu_bench_rows.py table "$WORK" "$DEVICE" "$PEAK_TFLOPS" "$STEPS" > "$WORK/gpu-bench.md" 2>&1
    cat "$WORK"/fitted.txt "$WORK"/top_*.txt 2>/dev/null >> "$WORK/gpu-bench.md"
    cp "$WORK/gpu-bench.md" "$OUT/.md.tmp" && mv -f "$OUT/.md.tmp" "$OUT/gpu-bench.md"
    for t in trace_ours_plain trace_peer_compile; do
      [ -f "$WORK/$t.json" ] && [ ! -f "$OUT/$t.json.gz" ] || continue
      gzip -c "$WORK/$t.json" > "$OUT/.trace.tmp"
      if [ "$(stat -c %s "$OUT/.trace.tmp")" -lt 15000000 ]; then mv -f "$OUT/.trace.tmp" "$OUT/$t.json.gz"; else rm -f "$OUT/.trace.tmp"; fi
    done
  ) 9> "$WORK/.pack.lock"
}

# run_cmd LOG CMD...: CMD under the stage's limit (what is left of the budget, less GRACE), killed hard GRACE s after
# its SIGTERM, its output into LOG; its timeout's process id recorded for the next call. Returns CMD's status
# (124: stopped at the limit, 137: killed hard).
LIMIT=0
relimit() {  # LIMIT anew from what is left (after a first command of the stage); false when nothing is left
  LIMIT=$(( $(left) - GRACE ))
  [ "$LIMIT" -gt 0 ] || { REASON="no time left in the budget"; return 1; }
}
run_cmd() {
  local log=$1; shift
  timeout -k "$GRACE" "$LIMIT" "$@" > "$log" 2>&1 &
  local pid=$!
  echo "$pid" >> "$WORK/pids"
  wait "$pid"
}
why_failed() {  # STATUS LOG: the reason of a failed command, one line
  case $1 in
    124) echo "stopped at its limit of $LIMIT s" ;;
    137) echo "killed hard $GRACE s after its limit of $LIMIT s" ;;
    *) echo "exit $1: $(grep -v '^\s*$' "$2" 2>/dev/null | tail -n 1 | cut -c1-200)" ;;
  esac
}

# stage NAME: runs stage_NAME when chosen and its estimate fits; one summary line; then pack. stage_NAME sets
# REASON and returns 0 (passed) or not (FAILED), or sets SKIPPED.
stage() {
  local name=$1 fn=stage_${1//-/_}
  [ -n "${WANT[$name]:-}" ] || return 0
  local cost=${COST[$name]:-25} l; l=$(left)
  if [ "$cost" -gt "$l" ] || [ "$l" -le "$GRACE" ]; then
    line "$name skipped (budget: needs ~$cost s, $l s left)"; pack; return 0
  fi
  LIMIT=$((l - GRACE)); REASON=; SKIPPED=
  local start; start=$(elapsed)
  if [ -n "${BLOCKING[$name]:-}" ]; then CUDA_LAUNCH_BLOCKING=1 "$fn"; else "$fn"; fi
  local rc=$? took=$(($(elapsed) - start))
  local tag; tag=$([ -n "${BLOCKING[$name]:-}" ] && echo ", CUDA_LAUNCH_BLOCKING=1")
  if [ -n "$SKIPPED" ]; then line "$name skipped ($SKIPPED)"
  elif [ $rc = 0 ]; then line "$name passed $REASON (${took} s$tag)"
  else line "$name FAILED $REASON (${took} s$tag)"; fi
  [ -n "$SKIPPED" ] || twins_of "$name"
  pack
}

# --- the stages ---
KC_PID=
kernel_check_start() {  # the LibTorch-free kernel check, beside the build; its line is written when it ends
  [ -n "${WANT[kernel-check]:-}" ] || return 0
  if [ -z "$KERNEL_CHECK" ]; then line "kernel-check skipped (DEVICE=cpu: no card; KERNEL_CHECK=SCRIPT runs one)"; return 0; fi
  if [ ! -f "$KERNEL_CHECK" ]; then line "kernel-check skipped (absent)"; return 0; fi
  LIMIT=$(( $(left) - GRACE < ${KC_LIMIT:-240} ? $(left) - GRACE : ${KC_LIMIT:-240} ))
  [ "$LIMIT" -gt 0 ] || { line "kernel-check skipped (budget: $(left) s left)"; return 0; }
  (
    start=$(elapsed)
    run_cmd "$WORK/kernel-check.stdout" bash "$KERNEL_CHECK" "$WORK/kernel-check.txt"
    rc=$?
    last=$(grep -h '^kernel-check:' "$WORK/kernel-check.stdout" 2>/dev/null | tail -n 1 | cut -c1-200)
    case $rc in
      0) line "kernel-check passed ${last:-no kernel-check: line} ($(($(elapsed) - start)) s)" ;;
      1) line "kernel-check FAILED a case failed: ${last:-no kernel-check: line} (kernel-check.txt)" ;;
      2) line "kernel-check FAILED its build failed: ${last:-no kernel-check: line} (kernel-check.txt)" ;;
      *) line "kernel-check FAILED $(why_failed $rc "$WORK/kernel-check.stdout")" ;;
    esac
    pack
  ) &
  KC_PID=$!
}
kernel_check_wait() {  # the timed rows never share the card with it
  [ -n "$KC_PID" ] || return 0
  wait "$KC_PID" 2>/dev/null; KC_PID=
}

stage_build() {
  "$TORCH_PY" -c 'import torch' 2>/dev/null || { REASON="no torch in $TORCH_PY (set TORCH_PY)"; return 1; }
  local prefix venv
  prefix=$("$TORCH_PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)') venv=$("$TORCH_PY" -c 'import sys; print(sys.prefix)')
  if [ ! -f "$BUILD/build.ninja" ] || [ -n "${CMAKE_EXTRA:-}" ]; then
    # shellcheck disable=SC2086
    run_cmd "$WORK/build.txt" cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DGAUGELAB_VENV="$venv" -DGAUGELAB_ANALYSIS_PYTHON="$TORCH_PY" -DTORCH_CUDA_ARCH_LIST="${CUDA_ARCH:-9.0}" \
      -DGAUGELAB_BUILD_BENCH=OFF $([ "${PY_MODULE:-1}" = 1 ] || echo -DGAUGELAB_PYTHON=OFF) ${GAUGELAB_PREFIX_CMAKE_ARGS:-} ${CMAKE_EXTRA:-} \
      || { REASON="cmake: $(why_failed $? "$WORK/build.txt")"; return 1; }
  fi
  relimit || return 1
  run_cmd "$WORK/build-ninja.txt" cmake --build "$BUILD" -j "$JOBS" --target gaugelab gaugelab-torch test_parity
  local rc=$?
  # gaugelab-torch loads its CUDA half (libgaugelab_cuda.so) where a driver is visible: its info line says whether that
  # worked ("cuda available, devices N"). Where a GPU is listed and it did not, the stage fails (so --remaining
  # builds again); CMAKE_EXTRA=-DGAUGELAB_CUDA_AT_START=ON then links the half into every executable.
  if [ $rc = 0 ]; then
    local info cuda
    info=$(timeout 60 "$BIN" info 2>&1)
    cuda=$( (grep -m 1 '^cuda ' <<< "$info" || tail -n 1 <<< "$info") | tr -s ' ')
    REASON="gaugelab, gaugelab-torch and test_parity in $BUILD; $cuda"
    if [ "$DEVICE" = cuda ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && [[ "$cuda" != "cuda available"* ]]; then
      REASON="$REASON: the CUDA half did not load (rerun with CMAKE_EXTRA=-DGAUGELAB_CUDA_AT_START=ON)"
      return 1
    fi
    return 0
  fi
  REASON="$(why_failed $rc "$WORK/build-ninja.txt")$([ $rc -ge 124 ] && echo '; ninja continues in the next call')"
  return 1
}
stage_parity() {
  [ -x "$BUILD/tests/test_parity" ] || { REASON="$BUILD/tests/test_parity is missing"; return 1; }
  run_cmd "$WORK/parity_raw.txt" "$BUILD/tests/test_parity"
  local rc=$?
  grep '^parity |' "$WORK/parity_raw.txt" > "$WORK/parity.txt"
  [ $rc = 0 ] && { REASON="$(grep -c '' "$WORK/parity.txt") rows within their tolerances"; return 0; }
  REASON="$(grep -c 'FAILED' "$WORK/parity_raw.txt") failures; $(why_failed $rc "$WORK/parity_raw.txt")"; return 1
}
ensure_data() {  # the corpus of every row, ours and the peers'
  [ -f "$DATA/train.bin" ] && return 0
  prepare_data "$DATA" > "$WORK/prepare.txt" 2>&1 \
    || { REASON="no corpus at $DATA ($(tail -n 1 "$WORK/prepare.txt"); carry it: gpu-bench.sh --carry)"; return 1; }
}
ours_row() {  # STAGE [LAUNCHER...]: one run of ours
  local name=$1; shift
  [ -x "$BIN" ] || { REASON="$BIN is missing (the build stage)"; return 1; }
  ensure_data || return 1
  local flags cond steps=$STEPS extra=() rowargs="ROW_ARGS_$name"
  read -r cond flags <<< "$("$ANALYSIS_PY" scripts/gpu_bench_rows.py flags "$name")"
  # a profile's window ends a step before the run's last: the last step validates and samples the heads (two float32
  # forward passes on the probe batch, ~200 ms of a 2-step window on an H200, 2026-11-30), not a training step's work
  case $name in profile_*) extra=(--profile-from "$PROFILE_FROM" --profile-steps 2); steps=$((PROFILE_FROM + 2)) ;; esac
  # shellcheck disable=SC2086
  run_cmd "$WORK/ours_$name.txt" "$@" "$BIN" train --data "$DATA" "${OURS_SIZE[@]}" --batch-size "$BATCH" --grad-accum 1 \
    --device "$DEVICE" --precision "$PRECISION" --max-iters "$steps" --warmup-iters 0 --eval-every 100000 --eval-batches 1 \
    --log-every 1 --log-heads-every 100000 --sample-tokens 0 --ckpt-every 0 --peak-tflops "$PEAK_TFLOPS" \
    --threads "$THREADS" --seed "$SEED" --condition "$cond" $flags "${extra[@]}" ${!rowargs:-} \
    --out "$WORK/ours_$name" --force
  local rc=$? logged
  row_reason "$name" "$steps"
  logged=$?
  [ $rc = 0 ] || { REASON="$(why_failed $rc "$WORK/ours_$name.txt")$([ $logged = 0 ] && echo "; so far: $REASON")"; return 1; }
  return $logged
}
row_reason() {  # STAGE STEPS: REASON = the row's numbers (gpu_bench_rows.py: its last line); false if none were logged
  local out rc
  out=$("$ANALYSIS_PY" scripts/gpu_bench_rows.py row "$WORK" "$1" "$2" 2>&1); rc=$?
  REASON=$(tail -n 1 <<< "$out")
  return $rc
}
ran() { grep -Eq "^[0-9]+s $1 (passed|FAILED)" "$WORK/summary.txt"; }
twins_of() {  # STAGE: the twin checks of a row that just ended whose twin has run (in this call or an earlier one)
  local a b
  while read -r a b; do
    [ "$1" = "$a" ] || [ "$1" = "$b" ] || continue
    ran "$a" && ran "$b" || continue
    line "twin $a=$b $("$ANALYSIS_PY" scripts/gpu_bench_rows.py twin "$WORK" "$a" "$b" "$STEPS" 2>&1 | tail -n 1)"
  done <<< "$("$ANALYSIS_PY" scripts/gpu_bench_rows.py twins)"
}
row_stage() {  # a row of ours as a stage (its twin checks follow its summary line: stage())
  local name=$1; shift
  kernel_check_wait
  if [[ $name == *_graph ]] && [ "$DEVICE" != cuda ]; then SKIPPED="--cuda-graph needs CUDA"; return 0; fi
  ours_row "$name" "$@"
}
for r in plain multipliers multipliers_aten_lrm plain_aten_ln plain_graph multipliers_graph plain_aten_ce gaugefix_B; do
  eval "stage_$r() { row_stage $r; }"
done
stage_torchrun() {
  local backend; backend=$([ "$DEVICE" = cuda ] && echo nccl || echo gloo)
  "$TORCH_PY" -c 'import torch.distributed.run' 2>/dev/null || { REASON="no torch.distributed.run in $TORCH_PY"; return 1; }
  row_stage torchrun "$TORCH_PY" -m torch.distributed.run --nproc_per_node=1 --no-python && REASON="$backend; $REASON"
}
profile_stage() {  # ours, PROFILE_FROM steps and 2 traced, apart from the timed rows (the profiler slows what follows)
  local name=$1 t=trace_ours_${1#profile_}
  kernel_check_wait
  ours_row "$name" || return 1
  [ -f "$WORK/ours_$name/profile.json" ] || { REASON="no profile.json"; return 1; }
  mv "$WORK/ours_$name/profile.json" "$WORK/$t.json"
  { echo; "$ANALYSIS_PY" scripts/trace_top.py "$WORK/$t.json" --top 12 --steps 2 --title "profile: ours ${1#profile_} (2 steps)"; } \
    > "$WORK/top_$t.txt" 2>&1
  local busy; busy=$(grep -m1 -i 'busy' "$WORK/top_$t.txt" | cut -c1-160)
  REASON="$REASON${busy:+; $busy}"
  return 0
}
stage_profile_plain() { profile_stage profile_plain; }
stage_profile_multipliers() { profile_stage profile_multipliers; }
peer_stage() {  # MODE: nanoGPT eager or compiled, on the same token windows; 2 more steps traced after the timing
  local mode=$1 name=peer_$1
  kernel_check_wait
  [ -x "$BIN" ] || { REASON="$BIN is missing (it prepares the corpus)"; return 1; }
  ensure_data || return 1
  run_cmd "$WORK/$name.err" "$TORCH_PY" -W ignore tests/reference/nanogpt_ref.py --device "$DEVICE" --dtype "$PRECISION" "${SIZE[@]}" \
    --batch "$BATCH" --steps "$STEPS" --warmup 3 --peak-tflops "$PEAK_TFLOPS" --threads "$THREADS" \
    $([ "$mode" = compile ] && echo --compile) --profile-out "$WORK/trace_$name.json" --data "$DATA/train.bin" \
    --data-seed "$SEED"
  local rc=$?
  grep '^{' "$WORK/$name.err" | tail -n 1 > "$WORK/$name.json"
  [ $rc = 0 ] || { REASON=$(why_failed $rc "$WORK/$name.err"); return 1; }
  row_reason "$name" "$STEPS" || return 1
  if [ -f "$WORK/trace_$name.json" ]; then
    { echo; "$ANALYSIS_PY" scripts/trace_top.py "$WORK/trace_$name.json" --top 12 --steps 2 --title "profile: $name (2 steps)"; } \
      > "$WORK/top_trace_$name.txt" 2>&1
  fi
}
stage_peer_compile() { peer_stage compile; }
stage_peer_eager() { peer_stage eager; }
stage_fit() {  # --fit-micro-batch on at nanoGPT's 480-sequence step (the CPU: BATCH x 4): one step, for its line
  kernel_check_wait
  [ -x "$BIN" ] || { REASON="$BIN is missing"; return 1; }
  ensure_data || return 1
  local accum; accum=$([ "$DEVICE" = cuda ] && echo 40 || echo 4)
  run_cmd "$WORK/ours_fit.txt" "$BIN" train --data "$DATA" "${OURS_SIZE[@]}" --batch-size "$BATCH" --grad-accum "$accum" \
    --fit-micro-batch on --device "$DEVICE" --precision "$PRECISION" --max-iters 1 --warmup-iters 0 --eval-batches 1 \
    --sample-tokens 0 --ckpt-every 0 --peak-tflops "$PEAK_TFLOPS" --threads "$THREADS" --condition N \
    --lm-head-kernel fused --ln-kernel fused --out "$WORK/ours_fit" --force
  local rc=$?
  [ $rc = 0 ] || { REASON=$(why_failed $rc "$WORK/ours_fit.txt"); return 1; }
  grep -h '^fitted ' "$WORK/ours_fit.txt" | sed 's/^/\n/' > "$WORK/fitted.txt"
  row_reason fit "$STEPS"
}
stage_oom() {  # a micro-batch far past the device's memory: exit 1 and one line naming the sizes and the flag to lower
  # (gpu_bench_rows.py oom); on a card the allocation fails, on a CPU the activation estimate refuses it first
  kernel_check_wait
  [ -x "$BIN" ] || { REASON="$BIN is missing"; return 1; }
  ensure_data || return 1
  local big; big=$([ "$DEVICE" = cuda ] && echo 512 || echo 100000000)
  [ "$LIMIT" -le 90 ] || LIMIT=90  # a refusal takes seconds: a hang here must not spend the rest of the call
  run_cmd "$WORK/ours_oom.txt" "$BIN" train --data "$DATA" "${OURS_SIZE[@]}" --batch-size "$big" --grad-accum 1 \
    --device "$DEVICE" --precision "$PRECISION" --max-iters 1 --warmup-iters 0 --eval-batches 1 --sample-tokens 0 \
    --ckpt-every 0 --threads "$THREADS" --condition N --out "$WORK/ours_oom" --force
  local rc=$?
  [ $rc -lt 124 ] || { REASON=$(why_failed $rc "$WORK/ours_oom.txt"); return 1; }
  REASON=$("$ANALYSIS_PY" scripts/gpu_bench_rows.py oom "$WORK/ours_oom.txt" "$DEVICE" "$rc" 2>&1)
}
stage_torch_ops() {  # gaugelab.torch's operators on the card (python/tests/test_torch_ops.py picks CUDA up)
  kernel_check_wait
  py_has "$TORCH_PY" pytest || { REASON="no pytest beside $TORCH_PY"; return 1; }
  if [ ! -f "$BUILD/python/gaugelab/torch/libgaugelab_torch_ops.so" ]; then
    # the build file itself, no ninja on PATH and no pipe: `ninja -t targets all | grep -q` said "not configured" on a
    # card whose cmake output shows pybind11 loaded (2026-11-30; why, its discarded stderr would have said)
    grep -q '^build gaugelab_python:' "$BUILD/build.ninja" 2>/dev/null \
      || { REASON="the Python module is not configured in $BUILD ($(grep -E '^(GAUGELAB_PYTHON|pybind11_DIR):' \
             "$BUILD/CMakeCache.txt" 2>/dev/null | tr '\n' ' ')see its cmake output)"; return 1; }
    run_cmd "$WORK/torch_ops_build.txt" cmake --build "$BUILD" -j "$JOBS" --target gaugelab_python \
      || { REASON="its build: $(why_failed $? "$WORK/torch_ops_build.txt")"; return 1; }
    relimit || return 1
  fi
  GAUGELAB_BUILD_DIR="$BUILD" run_cmd "$WORK/torch_ops.txt" "$TORCH_PY" -m pytest -q -p no:cacheprovider \
    python/tests/test_torch_ops.py
  local rc=$?
  REASON=$(tail -n 1 "$WORK/torch_ops.txt" | cut -c1-200)
  [ $rc = 0 ] || { [ $rc -lt 124 ] || REASON=$(why_failed $rc "$WORK/torch_ops.txt"); return 1; }
}

stage_cuda_tests() {  # the C++ cases that need a card: the whole model fused against ATen, loss and every gradient
  # ([cuda][kernels]); a CUDA graph's replay against the eager micro-step, bit for bit ([cuda][cuda_graph]). Not the
  # third [cuda] case, the CUDA half loaded on request: where a driver is visible it loads at start, so it skips.
  kernel_check_wait
  if [ "$DEVICE" != cuda ]; then SKIPPED="the [cuda] cases need CUDA"; return 0; fi
  run_cmd "$WORK/cuda_tests_build.txt" cmake --build "$BUILD" -j "$JOBS" --target test_gpt2 test_train \
    || { REASON="its build: $(why_failed $? "$WORK/cuda_tests_build.txt")"; return 1; }
  # Catch2 v2: --warn NoTests fails a spec that matches nothing; a case that finds no card WARNs "SKIPPED" and
  # passes, so on a card every SKIPPED line fails the stage
  local t rc skipped said=()
  declare -A spec=([test_gpt2]="[cuda][kernels]" [test_train]="[cuda][cuda_graph]")
  for t in test_gpt2 test_train; do
    relimit || return 1
    run_cmd "$WORK/cuda_tests_$t.txt" "$BUILD/tests/$t" "${spec[$t]}" --warn NoTests
    rc=$?
    skipped=$(grep -c 'SKIPPED' "$WORK/cuda_tests_$t.txt")
    said+=("$t: $(grep -E '^(All tests passed|test cases:)' "$WORK/cuda_tests_$t.txt" | tail -n 1 | cut -c1-120)")
    [ $rc = 0 ] || { REASON="$t [cuda]: $(why_failed $rc "$WORK/cuda_tests_$t.txt")"; return 1; }
    [ "$skipped" = 0 ] || { REASON="$t [cuda]: $skipped case(s) skipped on a card: $(grep -m 1 'SKIPPED' \
                               "$WORK/cuda_tests_$t.txt" | cut -c1-120)"; return 1; }
  done
  REASON=$(printf '%s; ' "${said[@]}"); REASON=${REASON%; }
}

# --- the run ---
pack  # an archive and a table from the start: a call killed at any second returns both
kernel_check_start
for s in "${ORDER[@]}"; do
  [ "$s" = kernel-check ] || stage "$s"
done
kernel_check_wait
pack
left_over=()
for s in "${ORDER[@]}"; do
  grep -Eq "^[0-9]+s $s passed" "$WORK/summary.txt" || left_over+=("$s")
done
stages_said() {  # how many of this call's stage lines say $1 (the packages' "deps" line is not a stage)
  grep -E "^[0-9]+s [^ ]+ $1" "$OUT/summary.txt" | grep -Evc '^[0-9]+s deps '
}
line "done: $(stages_said passed) passed, $(stages_said FAILED) failed, $(stages_said skipped) skipped; not passed yet: $(IFS=,; echo "${left_over[*]:-none}")"
cp "$OUT/summary.txt" "$WORK/summary-last-call.txt" 2>/dev/null
pack
grep -Eq '^[0-9]+s [^ ]+ FAILED|^[0-9]+s twin [^ ]+ FAIL ' "$OUT/summary.txt" && exit 1
exit 0
