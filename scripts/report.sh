#!/usr/bin/env bash
# `make report`: executes every narrative notebook in notebooks_export/ (plain-text `# %%` form) and
# exports it to HTML with its figures embedded, offline. Needs the logs and figures of `make figures`.
# usage: scripts/report.sh [OUT_DIR]   (default report/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-report}
export PYDEVD_DISABLE_FILE_VALIDATION=1  # quiets the kernel debugger warning about frozen modules
export GAUGELAB_ROOT=$PWD GAUGELAB_FIGURES=${GAUGELAB_FIGURES:-$PWD/figures}
mkdir -p "$out"
for nb in notebooks_export/seed*.py; do
  name=$(basename "$nb" .py)
  /usr/bin/python3 analysis/py2nb.py "$nb" "$out/$name.ipynb"
  echo "[report] $name"
  # --no-input: the HTML shows the narrative, figures and tables, not the cells that load them
  (cd "$out" && jupyter nbconvert --to html --no-input --execute --ExecutePreprocessor.timeout=600 \
      --ExecutePreprocessor.kernel_name=python3 --log-level=WARN "$name.ipynb")
done
echo "[report] HTML in $out/: $(ls "$out"/*.html | tr '\n' ' ')"
