# gaugelab — the two commands a user types on a fresh Debian 12 machine: `make demo` and `make test`.
# Everything else is here for developers. Settings are variables: `make test BUILD=build-asan`.

VENV      ?= $(HOME)/.cache/gaugelab/venv
BUILD     ?= build
BUILD_TYPE?= Release
JOBS      ?= $(shell nproc)
WITH_TORCH?= ON
ANALYSIS_PY ?= /usr/bin/python3
CMAKE_ARGS ?=
# The sanitizer build: clang, ASan+UBSan, the libFuzzer targets, no LibTorch (core, io, toys, harness,
# data and their tests). -O1 keeps its compile time inside CI's budget; the tests' own code of io, harness, data
# and cli is compiled at -O0 (GAUGELAB_SANITIZED_TEST_OPT, tests/CMakeLists.txt).
ASAN_BUILD ?= build-asan
FUZZ_SECONDS ?= 60
FUZZ_GOAL ?= 1e7
ASAN_CMAKE_ARGS = -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG=-O1 -DCMAKE_C_FLAGS_DEBUG=-O1 '-DGAUGELAB_SANITIZE=address;undefined' \
  -DGAUGELAB_FUZZ=ON -DGAUGELAB_WITH_TORCH=OFF -DGAUGELAB_PYTHON=OFF -DGAUGELAB_BUILD_BENCH=OFF -DGAUGELAB_NATIVE=OFF
# ccache keys on paths relative to the clone, so a fresh clone elsewhere (CI, a second checkout) reuses
# the objects an earlier clone compiled.
export CCACHE_BASEDIR := $(CURDIR)

TORCH_PREFIX = $(shell [ "$(WITH_TORCH)" = ON ] && $(VENV)/bin/python scripts/torch_wheel.py prefix 2>/dev/null)

.PHONY: all deps deps-demo configure build setup-build test test-cpp test-py test-py-debian test-py-venv build-asan test-asan fuzz fuzz-campaign demo figures lr-grid lr-grid-bf16 bench report clean

all: build

deps:
	@GAUGELAB_VENV=$(VENV) bash scripts/install-deps.sh

# What `make demo` needs: the same without the test-only references (transformers, safetensors).
deps-demo:
	@GAUGELAB_DEPS=demo GAUGELAB_VENV=$(VENV) bash scripts/install-deps.sh

configure:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGAUGELAB_WITH_TORCH=$(WITH_TORCH) \
	  -DCMAKE_PREFIX_PATH="$(TORCH_PREFIX)" -DGAUGELAB_VENV=$(VENV) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# CTest, the venv's Python tests and Debian's run side by side, each part's output printed after CTest's: all three
# leave cores idle alone (cases waiting on timeouts, child processes and the disk; CTest -j 2 used 1.65 of 2 cores,
# Debian's pytest -n 2 1.5). On the 2 development cores, the build done: CTest alone 203 s and Debian's pytest -n 2
# alone 109 s (312 s one after the other); the three side by side 293 s. Debian's in one process beside CTest was 283 s
# there, but in a fresh clone after the demo it was the last to end (278 s against CTest's 246: one process waits
# through every case's timeouts and children itself), so it keeps its xdist workers.
# CTest's case that writes build/fixtures/example_log.h5, which Debian's pytest reads (analysis/tests/test_gaugelab_log.py,
# skipping its C++ cases where the file is absent), runs first and alone, and the CTest run beside the readers leaves
# it out: so the file is there before they start and is not rewritten while they read it. Ctrl-C (or a TERM) stops the
# two pytest runs too: a command put in the background by a recipe's shell ignores SIGINT, so the trap sends TERM to
# each one's process tree (not a process group of their own: with the kernel's autogroup, a new session would also be
# a scheduling group of its own, weighed as much as CTest's whole group).
# Every part runs whatever another gave; make fails if any did.
PY_FIXTURE_CASE = example log for the Python reader
test: setup-build
	@(cd $(BUILD) && ctest -R '$(PY_FIXTURE_CASE)' --output-on-failure --no-tests=error); fx=$$?; \
	venv_log=$(abspath $(BUILD))/test-py-venv.log; deb_log=$(abspath $(BUILD))/test-py-debian.log; \
	$(MAKE) --no-print-directory test-py-venv > $$venv_log 2>&1 & venv=$$!; \
	$(MAKE) --no-print-directory test-py-debian > $$deb_log 2>&1 & deb=$$!; \
	kill_tree() { for c in $$(pgrep -P $$1); do kill_tree $$c; done; kill -TERM $$1 2>/dev/null; }; \
	trap 'kill_tree $$venv; kill_tree $$deb; exit 130' INT TERM; \
	$(MAKE) --no-print-directory test-cpp CTEST_EXCLUDE='$(PY_FIXTURE_CASE)'; cpp=$$?; \
	wait $$venv; v=$$?; echo "== python/tests under the venv's Python (run beside CTest; $$venv_log):"; cat $$venv_log; \
	wait $$deb; d=$$?; echo "== analysis and python/tests under Debian's Python (run beside CTest; $$deb_log):"; cat $$deb_log; \
	[ $$fx = 0 ] && [ $$cpp = 0 ] && [ $$v = 0 ] && [ $$d = 0 ] || \
	  { echo "make test: failed (the Python fixture's case exit $$fx, ctest exit $$cpp, venv pytest $$v, Debian pytest $$d)"; exit 1; }

# The set-up and the build side by side (scripts/build-overlapped.sh): on a new machine the torch-free half builds
# while the venv's torch wheel installs.
setup-build:
	@VENV=$(VENV) JOBS=$(JOBS) BUILD_TYPE=$(BUILD_TYPE) CMAKE_ARGS="$(CMAKE_ARGS)" bash scripts/build-overlapped.sh $(BUILD)

test-cpp:
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600 $(if $(CTEST_EXCLUDE),-E '$(CTEST_EXCLUDE)')

# Every test that needs no LibTorch, under ASan+UBSan (leaks included), plus the fuzz targets' build.
# allocator_may_return_null: an impossible allocation throws std::bad_alloc as it does without ASan (the
# flag-bounds tests ask for terabytes on purpose and expect the one-line "out of memory" refusal).
build-asan:
	@cmake -S . -B $(ASAN_BUILD) -G Ninja $(ASAN_CMAKE_ARGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

test-asan: build-asan
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 900

# libFuzzer over every reader of untrusted input, FUZZ_SECONDS per target (after `make test-asan`).
fuzz:
	@BUILD=$(ASAN_BUILD) bash scripts/fuzz.sh $(FUZZ_SECONDS)

# The resumable campaign: each target toward FUZZ_GOAL executions, one niced worker, the corpus in
# $(ASAN_BUILD)/fuzz-campaign, the ledgers in fuzz/campaign (commit them); Ctrl-C stops it and the same command resumes it. FUZZ_CAMPAIGN_ARGS: more flags
# (--targets a,b --hours H; scripts/fuzz_campaign.py --help).
fuzz-campaign:
	@$(ANALYSIS_PY) scripts/fuzz_campaign.py --build $(ASAN_BUILD) --goal $(FUZZ_GOAL) $(FUZZ_CAMPAIGN_ARGS)

# The module's tests run twice: under Debian's Python (NumPy 1) and under the venv's (NumPy 2, torch).
# Debian's run (~800 tests, ~190 s serial) is spread over JOBS workers by pytest-xdist, a test file per
# worker (--dist loadfile: a module's fixtures are made once); serial where xdist is missing.
PYTEST_XDIST = $(shell $(ANALYSIS_PY) -c 'import xdist' 2>/dev/null && [ "$(JOBS)" -gt 1 ] && echo "-n $(JOBS) --dist loadfile")
test-py: test-py-debian test-py-venv

# GAUGELAB_VENV: the tests that start the venv's Python find the one these targets use.
test-py-debian:
	@GAUGELAB_BUILD_DIR=$(abspath $(BUILD)) GAUGELAB_VENV=$(VENV) $(ANALYSIS_PY) -m pytest -q $(PYTEST_XDIST) analysis python/tests

test-py-venv:
	@if $(VENV)/bin/python -c 'import pytest' 2>/dev/null; then \
	  GAUGELAB_BUILD_DIR=$(abspath $(BUILD)) GAUGELAB_VENV=$(VENV) $(VENV)/bin/python -m pytest -q python/tests; \
	else echo "SKIPPED: python/tests under the venv's NumPy 2 (no pytest in $(VENV): make deps)"; fi

# Builds only the two executables the demo runs (never the tests, benchmarks or fuzz targets): the torch-free
# gaugelab first, whose toys, sweeps and diagnostics are run and drawn while the LibTorch half compiles.
demo:
	@VENV=$(VENV) JOBS=$(JOBS) BUILD_TYPE=$(BUILD_TYPE) CMAKE_ARGS="$(CMAKE_ARGS)" bash scripts/demo.sh $(BUILD)

# MERGE=full: the merge-barrier experiment at full size (4 seeds x 2000 steps, 6 pairs; ~15 min more on 2 cores)
figures: build
	@GAUGELAB_MERGE=$(MERGE) bash scripts/figures.sh $(BUILD)

report:
	@bash scripts/report.sh report

# The learning-rate-sensitivity grid in full, balanced and gauge-offset starts (~3 h on 2 idle cores;
# resumable), then its figure and table. On one GPU: make lr-grid EXTRA="--device cuda" JOBS=14 (~10 min
# on an H200 for the balanced start's 336 runs).
lr-grid: deps build
	@BUILD=$(BUILD) bash gpt2/experiments/lr_sensitivity.sh
	@BUILD=$(BUILD) bash gpt2/experiments/lr_sensitivity.sh --offset
	@$(ANALYSIS_PY) analysis/figures/fig_lr_sensitivity.py runs/lr_sensitivity runs/lr_sensitivity_offset

# The seed's own regime (bf16 autocast, no biases): A B C Dcap QKclip Q x 9 lrs x 8 seeds, 432 runs, ~1.5 CPU-min
# each under emulated bf16, which the grid declares (native is ~13x that on a CPU without bf16 matmul; resumable, SHARD=i/n for several machines), its thread-count null (16 runs)
# and the sensitivities' own null (C over the whole lr axis at the other thread count, 72 runs), then its figure and
# table; each grid run writes its results ledger analysis/results/<grid>.csv (commit it).
lr-grid-bf16: deps build
	@BUILD=$(BUILD) bash gpt2/experiments/lr_sensitivity.sh --seed-regime
	@BUILD=$(BUILD) bash gpt2/experiments/lr_sensitivity.sh --seed-regime-null
	@BUILD=$(BUILD) bash gpt2/experiments/lr_sensitivity.sh --seed-regime-axis-null
	@$(ANALYSIS_PY) analysis/figures/fig_lr_sensitivity.py runs/lr_sensitivity_bf16 --null runs/lr_sensitivity_bf16_null \
	  --axis-null runs/lr_sensitivity_bf16_sens_null --out figures/lr_bf16

bench: deps build
	@cmake --build $(BUILD) -j $(JOBS) --target benchmarks
	@bash scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
