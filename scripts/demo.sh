#!/usr/bin/env bash
# `make demo`: the demo's slice of the experiments (analysis/manifest.py demo_slice: all but the heavy ones, each
# at its declared size; logs under runs/), the figures and tables that read only those (figures/), their index
# (figures/INDEX.md; analysis/FIGURES.md is `make figures`') and the narrative notebooks rendered to HTML (report/).
# Order, so that a first figure is on disk within minutes: build the torch-free `gaugelab` (toys, sweeps,
# diagnostics); build `gaugelab-torch` in the background while those experiments run and their figures are
# drawn (each path printed as it is written); then the GPT-2 experiments and the rest. Builds no test,
# benchmark or fuzz target. The set-up overlaps the build (scripts/setup_lib.sh): on a new machine the venv's torch
# wheel installs while the torch-free half is built and its figures drawn.
set -euo pipefail
build=${1:-build}
jobs=${JOBS:-$(nproc)}
cd "$(dirname "$0")/.."
start=$(date +%s)
stamp() { echo "[demo] $(( $(date +%s) - start )) s: $*"; }
setup_t0=$start
export GAUGELAB_DEPS=demo
# shellcheck source=scripts/setup_lib.sh
. scripts/setup_lib.sh
setup_system
deps_log="$build/deps-python.log"
if setup_torch_present; then
  GAUGELAB_VENV="$VENV" bash scripts/install-deps.sh
  setup_configure_full "$build"
  torch_ready=1
else
  setup_python_start "$deps_log"
  setup_configure_torch_free "$build"
  torch_ready=0
fi
cmake --build "$build" -j "$jobs" --target gaugelab
stamp "torch-free gaugelab built; building the LibTorch half (gaugelab-torch) in the background"
torch_log="$build/demo-torch-build.log"
( { [ "$torch_ready" = 1 ] || { setup_python_wait "$deps_log" && setup_configure_full "$build"; }; } > "$torch_log" 2>&1 &&
  cmake --build "$build" -j "$jobs" --target gaugelab-torch >> "$torch_log" 2>&1; echo $? > "$torch_log.rc" ) &
torch_pid=$!
/usr/bin/python3 analysis/make_figures.py --build "$build" --tier torch-free --slice demo
stamp "the torch-free figures are drawn (under figures/); waiting for gaugelab-torch"
wait "$torch_pid" || true
if [ "$(cat "$torch_log.rc" 2>/dev/null)" != 0 ]; then
  tail -20 "$torch_log" >&2
  echo "[demo] building gaugelab-torch failed (log: $torch_log)" >&2
  exit 1
fi
stamp "gaugelab-torch built; the GPT-2 experiments"
/usr/bin/python3 analysis/make_figures.py --build "$build" --tier torch --slice demo  # and figures/INDEX.md
stamp "the GPT-2 figures are drawn; rendering the notebooks"
bash scripts/report.sh report
echo
echo "demo: done in $(( $(date +%s) - start )) s"
echo "logs:    $(find runs -name "*.h5" | wc -l) under runs/"
echo "figures: $(ls figures/*.png figures/*.md 2>/dev/null | wc -l) under figures/ (index: figures/INDEX.md; the heavy experiments' figures: make figures)"
echo "report:  $(ls report/*.html | tr '\n' ' ')"
