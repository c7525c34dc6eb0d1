#!/usr/bin/env bash
# The CUDA kernels' check without LibTorch (tests/cuda/README.md): builds tests/cuda/ and gpt2/model/cuda/*.cu with
# nvcc, runs every case at GPT-2 124M's shapes, then the small cases under compute-sanitizer's memcheck and
# racecheck when it is found.
#   bash scripts/gpu-kernel-check.sh OUTFILE
# Everything (nvcc's version and messages, the cases' lines, the sanitizers' reports) goes to OUTFILE; the last
# line of OUTFILE, and the only line on stdout, is one summary starting with "kernel-check:", e.g.
#   kernel-check: 19 passed, 0 failed (sm_90, nvcc 13.0.88); sanitizer: memcheck ok, racecheck ok
# Exit 0: every case passed and no sanitizer found an error; 1: a case failed, the full run timed out or ended
# early, or a sanitizer found errors (or cases failing under it); 2: the build failed (or bad usage); 3: no
# usable CUDA device. A sanitizer that refuses the device ("Device not supported") reads
# "sanitizer: skipped (device refused)", one that times out or cannot start "no verdict": neither fails.
# Bounds (timeout -k 5): each compile 100 s and the link 20 s (in parallel: the build within 120 s), the full
# run 120 s, each sanitizer 120 s.
# Environment: CUDA_ARCH (90: sm_90), KCHECK_BUILD (/tmp/gaugelab-kcheck), NVCC (nvcc on PATH, else
# /usr/local/cuda/bin/nvcc), COMPUTE_SANITIZER (compute-sanitizer on PATH, else beside nvcc), KCHECK_HOST=1 (the
# harness's dry run on the CPU with g++, its small cases in the full run's place, a sanitizer only when
# COMPUTE_SANITIZER names one: this script's own mechanics without a card).
set -u
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "kernel-check: usage: bash scripts/gpu-kernel-check.sh OUTFILE"
  exit 2
fi
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KCHECK_BUILD:-/tmp/gaugelab-kcheck}
arch=${CUDA_ARCH:-90}
host=${KCHECK_HOST:-0}
if ! : >"$out" 2>/dev/null; then
  echo "kernel-check: cannot write $out"
  exit 2
fi
say() { printf '%s\n' "$*" >>"$out"; }
finish() {  # exit code, summary
  say "kernel-check: $2"
  echo "kernel-check: $2"
  exit "$1"
}
lines() { wc -l <"$out"; }
since() { tail -n +"$(($1 + 1))" "$out"; }  # OUTFILE's lines after the first $1
count() { since "$1" | grep -cE "^kernel-check \|.*\| $2\$"; }

# ---- build ----
common=(tests/cuda/check_main.cpp tests/cuda/check_harness.cpp tests/cuda/check_layer_norm.cpp
        tests/cuda/check_lrm_weight.cpp tests/cuda/check_lm_head_ce.cpp)
if [ "$host" = 1 ]; then
  cc=${CXX:-g++}
  flags=(-O2 -std=c++17 -pthread)
  srcs=("${common[@]}" tests/cuda/check_device_host.cpp tests/cuda/host_kernels.cpp tests/cuda/host_entry_points.cpp)
  target="host dry run, no card"
  say "== build (host dry run): $cc ${flags[*]}"
  "$cc" --version 2>&1 | head -n 1 >>"$out"
else
  cc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  flags=(-O2 -std=c++17 "-arch=sm_$arch")
  mapfile -t kernels < <(cd "$root" && ls gpt2/model/cuda/*.cu)
  srcs=("${common[@]}" tests/cuda/kernel_check.cu "${kernels[@]}")
  say "== build: $cc ${flags[*]}"
  if ! "$cc" --version >>"$out" 2>&1; then finish 2 "build failed (no nvcc at $cc)"; fi
  version=$("$cc" --version 2>/dev/null | grep -oE 'V[0-9][0-9.]*' | tail -n 1)
  target="sm_$arch, nvcc ${version#V}"
fi
mkdir -p "$build/obj" || finish 2 "build failed (cannot create $build)"
rm -f "$build/kernel_check" "$build"/obj/*.o
pids=() objs=()
for f in "${srcs[@]}"; do
  o="$build/obj/$(basename "$f").o"
  objs+=("$o")
  timeout -k 5 100 "$cc" "${flags[@]}" -I"$root" -c "$root/$f" -o "$o" >>"$out" 2>&1 &
  pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { r=$?; say "== compile failed (exit $r): ${srcs[$i]}"; rc=$r; }
done
[ "$rc" = 0 ] || finish 2 "build failed (exit $rc$([ "$rc" = 124 ] && echo ', timed out'); see $out)"
timeout -k 5 20 "$cc" "${flags[@]}" -o "$build/kernel_check" "${objs[@]}" >>"$out" 2>&1 ||
  finish 2 "build failed (link exit $?; see $out)"
say "== built $build/kernel_check"

# ---- the full run ----
n0=$(lines)
full=(--verbose)
[ "$host" = 1 ] && full+=(--small)
say "== full run: $build/kernel_check ${full[*]} (timeout 120 s)"
timeout -k 5 120 "$build/kernel_check" "${full[@]}" >>"$out" 2>&1
rc=$?
passed=$(count "$n0" PASS)
failed=$(count "$n0" FAIL)
fail=0
case $rc in
  0) result="$passed passed, $failed failed ($target)" ;;
  1) result="$passed passed, $failed failed ($target)"; fail=1 ;;
  3)
    why=$(since "$n0" | grep -m1 '^kernel-check: no usable device' | sed 's/^kernel-check: //')
    finish 3 "${why:-no usable device} ($target)" ;;
  124 | 137) result="$passed passed, $failed failed before the full run timed out after 120 s ($target)"; fail=1 ;;
  *) result="$passed passed, $failed failed before the full run ended early with exit $rc ($target)"; fail=1 ;;
esac

# ---- the sanitizers, on the small cases ----
if [ "$host" = 1 ] && [ -z "${COMPUTE_SANITIZER:-}" ]; then
  finish "$fail" "$result; sanitizer: skipped (host dry run)"
fi
san=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}
for c in "$(dirname "$cc")/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer; do
  [ -n "$san" ] || { [ -x "$c" ] && san=$c; }
done
if [ -z "$san" ]; then
  finish "$fail" "$result; sanitizer: skipped (compute-sanitizer not found)"
fi
verdicts=()
for tool in memcheck racecheck; do
  n0=$(lines)
  say "== $tool: $san --tool $tool --error-exitcode 99 $build/kernel_check --small (timeout 120 s)"
  timeout -k 5 120 "$san" --tool "$tool" --error-exitcode 99 "$build/kernel_check" --small >>"$out" 2>&1
  rc=$?
  if since "$n0" | grep -q 'Device not supported'; then
    finish "$fail" "$result; sanitizer: skipped (device refused)"
  fi
  case $rc in
    0) verdicts+=("$tool ok") ;;
    99) verdicts+=("$tool found errors ($(since "$n0" | grep -oE '(ERROR|RACECHECK) SUMMARY: .*' | tail -n 1))"); fail=1 ;;
    124 | 137) verdicts+=("$tool no verdict (timed out after 120 s)") ;;
    *)
      f=$(count "$n0" FAIL)
      if [ "$rc" = 1 ] && [ "$f" -gt 0 ]; then
        verdicts+=("$tool: $f cases failed under it"); fail=1
      else
        verdicts+=("$tool no verdict (exit $rc)")
      fi ;;
  esac
done
finish "$fail" "$result; sanitizer: $(printf '%s, ' "${verdicts[@]}" | sed 's/, $//')"
