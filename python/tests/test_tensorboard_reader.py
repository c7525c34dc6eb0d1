"""`gaugelab tensorboard` read by TensorBoard itself: a toy run's log (written by the torch-free binary) exported to
event files, then loaded with TensorBoard's EventAccumulator in the venv (the test-only `tensorboard` package of
scripts/install-deps.sh). Every /series column comes back as a scalar at its steps with its values (read from the
log by Debian's Python, which has h5py), and the settings as text. Skipped where either interpreter lacks what it
needs, with the reason."""
from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from built_module import PACKAGE_DIR

BINARY = Path(os.environ.get("GAUGELAB_BINARY", PACKAGE_DIR.parent / "gaugelab"))
DEBIAN_PY = "/usr/bin/python3"
READ_SERIES = """import h5py, json, sys, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    s = f["series"]
    names = json.loads(s.attrs["names"])
    col = lambda n: np.asarray(s[n][:], dtype=float).reshape(-1)  # a one-seed toy's [1, step] as [step]
    print(json.dumps({n: [None if not np.isfinite(v) else float(v) for v in col(n)] for n in names + ["step"]}))
"""


def test_tensorboard_reads_every_series_of_a_toy_log_at_its_steps(tmp_path):
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        pytest.skip("SKIPPED: no tensorboard in this interpreter (the venv's test-only package: make deps)")
    if not BINARY.exists():
        pytest.skip(f"SKIPPED: {BINARY} is not built")
    if subprocess.run([DEBIAN_PY, "-c", "import h5py"], capture_output=True).returncode != 0:
        pytest.skip(f"SKIPPED: {DEBIAN_PY} has no h5py (the analysis interpreter)")
    log = tmp_path / "toy.h5"
    subprocess.run([str(BINARY), "toy", "relu", "--steps", "200", "--log-every", "20", "--seeds", "1", "--out", str(log)], check=True,
                   capture_output=True, timeout=300)
    r = subprocess.run([str(BINARY), "tensorboard", str(log), "--out", str(tmp_path / "tb")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    series = json.loads(subprocess.run([DEBIAN_PY, "-c", READ_SERIES, str(log)], check=True, capture_output=True,
                                       text=True, timeout=120).stdout)
    runs = [p for p in (tmp_path / "tb").rglob("events.out.tfevents.*")]
    assert len(runs) == 1, runs
    acc = EventAccumulator(str(runs[0].parent), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    scalars = set(acc.Tags()["scalars"])
    names = [n for n in series if n != "step"]
    assert names and set(names) <= scalars, (names, sorted(scalars)[:20])
    for n in names:
        want = [(st, v) for st, v in zip(series["step"], series[n]) if v is not None]
        got = [(e.step, e.value) for e in acc.Scalars(n)]
        assert [s for s, _ in got] == [int(s) for s, _ in want], n
        assert all(math.isclose(g, w, rel_tol=1e-6, abs_tol=1e-30) for (_, g), (_, w) in zip(got, want)), n
    assert any("settings" in t for t in acc.Tags()["tensors"]), acc.Tags()["tensors"]
