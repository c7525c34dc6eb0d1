"""A stop (SIGINT, SIGTERM) that cuts a due evaluation or its sample short: the interrupted run writes no
partial sample line, and `train --resume` first evaluates and samples the step it stopped at, so that
step's row gets its validation loss and samples.txt its line.
Needs the build's gaugelab with the GPT-2 tier (GAUGELAB_BUILD_DIR, default build/); skipped otherwise."""
from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import gaugelab_log as gl

ROOT = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build")) / "gaugelab"
BASE = ["--model", "nano", "--n-embd", "32", "--block-size", "32", "--batch-size", "2", "--max-iters", "1",
        "--warmup-iters", "0", "--eval-every", "1", "--threads", "1", "--peak-tflops", "1"]
LIMIT_S = 120


def run(*argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=LIMIT_S)


def run_and_signal(argv: list, sig: int, cwd: Path, after_s: float = 1.5) -> tuple[int, str]:
    """Runs gaugelab, sends `sig` `after_s` seconds after its settings printout ends ('MFU peak'), and
    returns its status and output."""
    out = cwd / "output.txt"
    with open(out, "w") as sink:
        p = subprocess.Popen([str(BINARY), *map(str, argv)], cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        while "MFU peak" not in out.read_text() and p.poll() is None and time.monotonic() - t0 < LIMIT_S:
            time.sleep(0.05)
        time.sleep(after_s)
        p.send_signal(sig)
        try:
            p.wait(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            pytest.fail("the run did not stop: " + out.read_text()[-2000:])
    return p.returncode, out.read_text()


def val_loss_at(log: Path, step: int) -> float:
    with gl.open_log(log) as f:
        s = gl.series(f)
    return float(s["val_loss"][list(s["step"]).index(step)])


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    if not BINARY.exists():
        pytest.skip(f"SKIPPED: no gaugelab binary at {BINARY} (build first)")
    d = tmp_path_factory.mktemp("data")
    # Half the documents held out: enough validation windows for an evaluation of minutes.
    r = run("prepare", "--synthetic", "--docs", "2000", "--val-fraction", "0.5", "--seed", "1", "--out", d / "data", cwd=d)
    if r.returncode != 0 and "GPT-2" in r.stderr + r.stdout:
        pytest.skip("SKIPPED: built without the GPT-2 tier")
    assert r.returncode == 0, r.stderr
    return d / "data"


def test_a_stop_during_the_sample_leaves_no_partial_line_and_the_resume_writes_it(data, tmp_path):
    out = tmp_path / "run"
    status, text = run_and_signal(["train", "--data", data, *BASE, "--eval-batches", "1", "--sample-tokens", "100000",
                                   "--out", out], signal.SIGINT, tmp_path)
    assert status == 0, text
    assert "during the sample of step 1: left out" in text, text
    samples = out / "samples.txt"
    assert not samples.exists() or samples.read_text() == "", samples.read_text()
    r = run("train", "--resume", "--out", out, "--sample-tokens", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = samples.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("step 1: ") and lines[0].split("|", 1)[1] != "", lines
    assert math.isfinite(val_loss_at(out / "log.h5", 1))


def test_a_stop_during_the_evaluation_gets_that_steps_val_loss_on_resume(data, tmp_path):
    out = tmp_path / "run"
    status, text = run_and_signal(["train", "--data", data, *BASE, "--eval-batches", "20000", "--sample-tokens", "0",
                                   "--out", out], signal.SIGTERM, tmp_path)
    assert status == 0, text
    assert "SIGTERM during the evaluation" in text, text
    assert math.isnan(val_loss_at(out / "log.h5", 1))
    r = run("train", "--resume", "--out", out, "--eval-batches", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the evaluation of step 1 that the stop cut short" in r.stderr
    val = val_loss_at(out / "log.h5", 1)
    with gl.open_log(out / "log.h5") as f:
        summary = gl.summary(f)
    assert math.isfinite(val) and float(summary["final_val_loss"]) == val
