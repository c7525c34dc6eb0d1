#!/usr/bin/env bash
# The set-up and the build of BUILD side by side (`make test` on a new machine; scripts/setup_lib.sh says how):
# the Debian packages; then, if the venv has no torch yet, the torch-free target built while the wheel installs;
# then the build configured with LibTorch and TARGET (default: all) built.
#   scripts/build-overlapped.sh BUILD [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/build-overlapped.sh BUILD [TARGET...]" >&2; exit 2; }
build=$1; shift
# shellcheck source=scripts/setup_lib.sh
. scripts/setup_lib.sh
setup_system
if setup_torch_present; then
  GAUGELAB_VENV="$VENV" bash scripts/install-deps.sh   # the rest of the set-up (quick when all is there)
else
  log="$build/deps-python.log"
  setup_python_start "$log"
  setup_configure_torch_free "$build"
  cmake --build "$build" -j "$JOBS" --target torch-free
  setup_say "the torch-free half is built; waiting for the torch wheel"
  setup_python_wait "$log"
fi
setup_configure_full "$build"
cmake --build "$build" -j "$JOBS" ${1:+--target "$@"}
