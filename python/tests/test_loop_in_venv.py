"""The module under NumPy 1 and NumPy 2, and the in-Python loop in one interpreter: `gaugelab train` (tiny,
--compact-vocab) -> `gaugelab export` -> transformers' GPT2LMHeadModel in the torch venv -> a Q/K gauge of
one head with `import gaugelab` on the float32 weights -> the logits unchanged to float32 rounding (and
moved by a non-gauge change of the same size). The export (--vocab full: the compact model laid over GPT-2's
ids) states what ids the data never had get (logit 0; config.json gaugelab_trained_ids), and the test checks both.
The binary is GAUGELAB_BINARY, default <GAUGELAB_BUILD_DIR>/gaugelab (it needs LibTorch: `export`);
the venv is GAUGELAB_VENV (default ~/.cache/gaugelab/venv). Each part is skipped with its reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from built_module import PACKAGE_DIR, import_gaugelab

g = import_gaugelab()

HERE = Path(__file__).resolve().parent
BINARY = Path(os.environ.get("GAUGELAB_BINARY", PACKAGE_DIR.parent / "gaugelab"))
VENV_PY = Path(os.environ.get("GAUGELAB_VENV", Path.home() / ".cache/gaugelab/venv")) / "bin/python"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_DIR), os.environ.get("PYTHONPATH", "")])}
ISSUE_31 = "import numpy as np, gaugelab as g; print(np.__version__, g.lrm_drift(np.ones(4), np.ones(4)).max)"


def _in_the_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV_PY.parent.parent.resolve()


def _venv_runs_these() -> bool:
    """Whether the venv's own pytest run (make test-py-venv) holds this file: the tests start every interpreter
    and the venv themselves, so they do the same work under either pytest, ~9 CPU-s a run; make test runs
    python/tests under both, so they run once, under the venv's, and under another only when it has no pytest."""
    if _in_the_venv():
        return False
    return VENV_PY.exists() and subprocess.run([str(VENV_PY), "-c", "import pytest"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(_venv_runs_these(), reason="SKIPPED: run under the venv's pytest (make test-py-venv), "
                                                           "which starts the same interpreters")


def interpreters() -> list[str]:
    found = {sys.executable, "/usr/bin/python3", str(VENV_PY)}
    return sorted(p for p in found if Path(p).exists())


@pytest.mark.parametrize("python", interpreters())
def test_array_functions_run_under_this_numpy(python):
    """Issue 31: under NumPy 2 every array-taking function crashed the interpreter (exit 139)."""
    if subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode != 0:
        pytest.skip(f"SKIPPED: {python} has no NumPy")
    r = subprocess.run([python, "-c", ISSUE_31], capture_output=True, text=True, env=ENV, timeout=120)
    assert r.returncode == 0, f"{python}: exit {r.returncode}\n{r.stderr[-2000:]}"
    assert r.stdout.split()[1] == "0.0", r.stdout


def run(*argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_export_transformers_gauge_logits_in_the_venv(tmp_path):
    if not BINARY.exists() or run("export", "--help", cwd=tmp_path).returncode != 0:
        pytest.skip(f"SKIPPED: no gaugelab with `export` (LibTorch) at {BINARY}; set GAUGELAB_BINARY")
    if not VENV_PY.exists() or subprocess.run([str(VENV_PY), "-c", "import torch, transformers"],
                                              capture_output=True).returncode != 0:
        pytest.skip(f"SKIPPED: no torch venv with transformers at {VENV_PY} (scripts/install-deps.sh)")
    r = run("train", "--data", "synthetic:200", "--compact-vocab", "true", "--model", "nano", "--n-embd", "32",
            "--block-size", "32", "--batch-size", "2", "--max-iters", "3", "--warmup-iters", "1", "--eval-every", "3",
            "--eval-batches", "1", "--sample-tokens", "0", "--threads", "1", "--peak-tflops", "1", "--out", "run",
            cwd=tmp_path)  # --peak-tflops: no ~0.3 CPU-s matmul timing at start for an MFU nothing reads
    assert r.returncode == 0, r.stderr[-2000:]
    r = run("export", "run/checkpoints/step_00000003", "--out", "hf", "--vocab", "full", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    said = r.stdout + r.stderr
    assert "logit 0 for ids its data never had" in said and "gaugelab_trained_ids" in said, said

    t = subprocess.run([str(VENV_PY), "-W", "ignore", str(HERE / "loop_gauge_logits.py"), str(tmp_path / "hf")],
                       capture_output=True, text=True, env=ENV, timeout=600)
    assert t.returncode == 0, f"exit {t.returncode}\n{t.stderr[-3000:]}"
    out = json.loads(t.stdout.strip().splitlines()[-1])
    tol = 1e-5 * max(1.0, out["scale"])  # float32 rounding (~100 ulps) of a κ = 10 gauge through two layers
    assert out["weights_moved"] > 1e-2, out  # the representative did change
    assert out["gauge_change"] <= tol, out
    assert out["non_gauge_change"] > 10 * tol, out  # the check can fail
    assert out["untrained_max_abs_logit"] == 0.0, out  # as export says
