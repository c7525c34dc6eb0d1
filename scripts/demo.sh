#!/usr/bin/env bash
# `make demo`: every experiment of the fast grid (logs under runs/), then every figure (figures/).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
start=$(date +%s)
/usr/bin/python3 analysis/make_figures.py --build "$build"
echo
echo "demo: done in $(( $(date +%s) - start )) s"
echo "logs:    $(ls runs/*.h5 | tr '\n' ' ')"
echo "figures: $(ls figures/*.png | tr '\n' ' ')"
