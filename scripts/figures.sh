#!/usr/bin/env bash
# `make figures`: re-runs only experiments whose logs are missing or stale, then draws every figure.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
exec /usr/bin/python3 analysis/make_figures.py --build "$build" "${@:2}"
