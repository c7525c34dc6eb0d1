#!/usr/bin/env bash
# `make demo`: the fast grid of every tier (logs under runs/), every figure and table (figures/), the
# figure index (analysis/FIGURES.md) and the narrative notebooks rendered to HTML (report/).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
start=$(date +%s)
/usr/bin/python3 analysis/make_figures.py --build "$build"
bash scripts/report.sh report
echo
echo "demo: done in $(( $(date +%s) - start )) s"
echo "logs:    $(find runs -name "*.h5" | wc -l) under runs/"
echo "figures: $(ls figures/*.png figures/*.md 2>/dev/null | wc -l) under figures/ (index: analysis/FIGURES.md)"
echo "report:  $(ls report/*.html | tr '\n' ' ')"
