# The set-up beside the build, as functions (sourced by scripts/build-overlapped.sh and scripts/demo.sh).
# On a machine whose venv has no torch yet, the torch wheel's download and install (a few GB, minutes on a new
# machine), with the Debian packages only the rest needs, run in the background while the torch-free half, which
# needs only its own Debian packages (scripts/install-deps.sh: apt_first), is configured
# without LibTorch and built; then the build is configured with LibTorch (the torch-free half's compile commands
# do not change, so nothing of it is rebuilt: tests/CMakeLists.txt's torch-free target) and the rest is built.
# Where torch is already installed, the set-up is checked in the foreground and the build configured once.
# Settings (the Makefile's): VENV, JOBS, BUILD_TYPE, CMAKE_ARGS, GAUGELAB_DEPS (test or demo).
# Each failure stops with one line naming the step and the command that retries it.

VENV=${VENV:-$HOME/.cache/gaugelab/venv}
JOBS=${JOBS:-$(nproc)}
BUILD_TYPE=${BUILD_TYPE:-Release}
CMAKE_ARGS=${CMAKE_ARGS:-}
setup_t0=${setup_t0:-$(date +%s)}
setup_say() { echo "[set-up] $(( $(date +%s) - setup_t0 )) s: $*"; }

# Whether the venv holds the torch wheel whole (then nothing needs to overlap); read from its files, not imported
# (scripts/torch_wheel.py: an import costs ~2 CPU-s).
setup_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
setup_torch_present() { "$VENV/bin/python" "$setup_lib_dir/torch_wheel.py" present >/dev/null 2>&1; }

# The Debian packages of the torch-free half (its compilers, libraries and the figures' Python stack), in the foreground.
setup_system() {
  GAUGELAB_VENV="$VENV" GAUGELAB_DEPS_PART=system bash scripts/install-deps.sh ||
    { echo "set-up failed at the Debian packages; retry with: make deps" >&2; return 1; }
}

# The other Debian packages, the venv, its torch wheel and the assets, in the background; its output goes to $1,
# its exit status to $1.rc. $2: install-deps.sh's part (default python; tests: only the venv's test-only packages).
setup_python_start() {
  local log=$1 part=${2:-python}
  mkdir -p "$(dirname "$log")"
  rm -f "$log.rc"
  ( t=$(date +%s); GAUGELAB_VENV="$VENV" GAUGELAB_DEPS_PART=$part bash scripts/install-deps.sh > "$log" 2>&1; rc=$?
    echo "[set-up] $(setup_part_words "$part") took $(( $(date +%s) - t )) s (exit $rc)" >> "$log"
    echo $rc > "$log.rc" ) &
  setup_python_pid=$! setup_python_part=$part
  setup_say "installing $(setup_part_words "$part") in the background (log: $log)"
}
setup_part_words() { [ "$1" = tests ] && echo "the venv's test-only packages" || echo "the venv, its torch wheel and the assets"; }

# Waits for setup_python_start's install (from any subshell: it polls the status file while the installer lives);
# one line and a non-zero status if it failed.
setup_python_wait() {
  local log=$1
  while [ ! -f "$log.rc" ] && kill -0 "${setup_python_pid:-0}" 2>/dev/null; do sleep 2; done
  if [ "$(cat "$log.rc" 2>/dev/null)" != 0 ]; then
    tail -5 "$log" >&2
    echo "set-up failed at $(setup_part_words "${setup_python_part:-python}") (log: $log); retry with: make deps" >&2
    return 1
  fi
  setup_say "installed: $(tail -1 "$log" | sed 's/^\[set-up\] //')"
}

# Configures BUILD ($1) without LibTorch and without the Python module (neither is installed yet).
setup_configure_torch_free() {
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments, as in the Makefile
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DGAUGELAB_WITH_TORCH=OFF -DGAUGELAB_PYTHON=OFF \
    $CMAKE_ARGS >/dev/null ||
    { echo "configuring $1 without LibTorch failed; retry with: make configure WITH_TORCH=OFF" >&2; return 1; }
}

# Configures BUILD ($1) with the venv's LibTorch and the Python module, as `make configure` does.
setup_configure_full() {
  local prefix
  prefix=$("$VENV/bin/python" "$setup_lib_dir/torch_wheel.py" prefix 2>/dev/null) ||
    { echo "the venv's torch gives no CMake prefix ($VENV); retry with: make deps" >&2; return 1; }
  # shellcheck disable=SC2086
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DGAUGELAB_WITH_TORCH=ON -DGAUGELAB_PYTHON=ON \
    -DCMAKE_PREFIX_PATH="$prefix" -DGAUGELAB_VENV="$VENV" $CMAKE_ARGS >/dev/null ||
    { echo "configuring $1 with LibTorch failed; retry with: make configure" >&2; return 1; }
}
