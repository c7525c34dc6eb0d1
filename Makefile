# gaugelab — the two commands a user types on a fresh Debian 12 machine: `make demo` and `make test`.
# Everything else is here for developers. Settings are variables: `make test BUILD=build-asan`.

VENV      ?= $(HOME)/.cache/gaugelab/venv
BUILD     ?= build
BUILD_TYPE?= Release
JOBS      ?= $(shell nproc)
WITH_TORCH?= ON
ANALYSIS_PY ?= /usr/bin/python3
CMAKE_ARGS ?=
# ccache keys on paths relative to the clone, so a fresh clone elsewhere (CI, a second checkout) reuses
# the objects an earlier clone compiled.
export CCACHE_BASEDIR := $(CURDIR)

TORCH_PREFIX = $(shell [ "$(WITH_TORCH)" = ON ] && $(VENV)/bin/python -W ignore -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null)

.PHONY: all deps configure build test test-cpp test-py demo figures lr-grid bench report clean

all: build

deps:
	@bash scripts/install-deps.sh

configure:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGAUGELAB_WITH_TORCH=$(WITH_TORCH) \
	  -DCMAKE_PREFIX_PATH="$(TORCH_PREFIX)" $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: deps build
	@$(MAKE) --no-print-directory test-cpp test-py

test-cpp:
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

test-py:
	@GAUGELAB_BUILD_DIR=$(abspath $(BUILD)) $(ANALYSIS_PY) -m pytest -q analysis python/tests

demo: deps build
	@bash scripts/demo.sh $(BUILD)

figures: build
	@bash scripts/figures.sh $(BUILD)

report:
	@bash scripts/report.sh report

# The learning-rate-sensitivity grid in full, balanced and gauge-offset starts (~2.5 h on 2 idle cores;
# resumable), then its figure and table.
lr-grid: deps build
	@BUILD=$(BUILD) bash gpt2/experiments/lr_sensitivity.sh
	@BUILD=$(BUILD) EXTRA="--qk-gauge-init 1" ROOT=runs/lr_sensitivity_offset CONDITIONS="A B C D" \
	  bash gpt2/experiments/lr_sensitivity.sh
	@$(ANALYSIS_PY) analysis/fig_lr_sensitivity.py runs/lr_sensitivity runs/lr_sensitivity_offset

bench: deps build
	@bash scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
