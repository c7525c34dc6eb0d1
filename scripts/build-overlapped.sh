#!/usr/bin/env bash
# The set-up and the build of BUILD side by side (`make test` on a new machine; scripts/setup_lib.sh says how):
# the Debian packages; then, if the venv has no torch yet, the torch-free target built while the wheel installs;
# then the build configured with LibTorch and TARGET (default: all) built. Where the venv had torch already (after
# `make demo`), the venv's test-only packages install beside the configure and the build (~20 s of pip on a new
# machine that no build step waits for); GAUGELAB_DEPS=demo leaves them out.
#   scripts/build-overlapped.sh BUILD [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/build-overlapped.sh BUILD [TARGET...]" >&2; exit 2; }
build=$1; shift
# shellcheck source=scripts/setup_lib.sh
. scripts/setup_lib.sh
setup_system
tests_log=""
if setup_torch_present; then
  GAUGELAB_VENV="$VENV" GAUGELAB_DEPS=demo bash scripts/install-deps.sh   # what the build needs (quick when all is there)
  if [ "${GAUGELAB_DEPS:-test}" != demo ]; then  # the venv's test-only packages, which no build step needs, beside it
    tests_log="$build/deps-tests.log"
    setup_python_start "$tests_log" tests
    trap 'wait "$setup_python_pid" 2>/dev/null || true' EXIT  # a failed configure or build leaves no pip behind
  fi
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
[ -z "$tests_log" ] || setup_python_wait "$tests_log"
