"""pytest set-up for analysis/: the reader module on sys.path, and small run logs written in pure
h5py following the schema of src/io/run_log.hpp (so the tests need no C++ build).

EXAMPLE describes the example log; the C++ test "run log: writes the example log for the Python
reader" (tests/io/test_run_log_fixture.cpp) writes the same values to
$GAUGELAB_BUILD_DIR/fixtures/example_log.h5.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

ANALYSIS = Path(__file__).resolve().parent
sys.path.insert(0, str(ANALYSIS))
sys.path.insert(0, str(ANALYSIS / "figures"))  # the figure scripts (one declaration each), importable by tests

EXAMPLE = {
    "kind": "toy/example",
    "command": "gaugelab toy example --lr 0.1",
    "config": {"lr": 0.1, "steps": 20},
    "seed": 7,
    "threads": 1,
    "step": np.arange(20),
    "loss": 1.0 / (1.0 + np.arange(20)),
    "lr": np.full(20, 0.1),
    "s_q": np.array([[[r + 0.1 * l + 0.01 * h for h in range(3)] for l in range(2)] for r in range(5)]),
    "runs": {"lr": [0.1, 1.0], "seed": [0, 1], "status": ["stable", "diverged"]},
    "spectrum": np.arange(12.0).reshape(3, 4),
    "summary": {"final_loss": 0.05, "n_runs": 2, "verdict": "ok"},
}


def _extendable(g: h5py.Group, name: str, data, dtype):
    data = np.asarray(data, dtype=dtype)
    shape = data.shape
    ds = g.create_dataset(name, shape=shape, maxshape=(None,) + shape[1:], dtype=dtype, chunks=True)
    if len(data):
        ds[...] = data
    return ds


def write_root(f: h5py.File, kind: str, command: str, config: dict, seed: int, threads: int) -> None:
    for k, v in {"gaugelab_version": "0.1.0", "git_sha": "unknown", "kind": kind, "command": command,
                 "config_json": json.dumps(config), "created_utc": "2024-01-01T00:00:00Z",
                 "host": "test"}.items():
        f.attrs[k] = v  # str -> variable-length UTF-8
    f.attrs["threads"] = np.int64(threads)
    f.attrs["seed"] = np.uint64(seed)
    for g in ("series", "heads", "tables", "arrays", "summary"):
        f.create_group(g)


def write_example(path: Path) -> Path:
    """The example log, written the way the C++ writer lays it out."""
    e = EXAMPLE
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, e["kind"], e["command"], e["config"], e["seed"], e["threads"])
        s = f["series"]
        s.attrs["names"] = json.dumps(["loss", "lr"])
        _extendable(s, "step", e["step"], np.int64)
        _extendable(s, "loss", e["loss"], np.float64)
        _extendable(s, "lr", e["lr"], np.float64)
        h = f["heads"]
        h.attrs["names"] = json.dumps(["s_q"])
        _extendable(h, "step", np.arange(5), np.int64)
        _extendable(h, "s_q", e["s_q"], np.float64)
        t = f["tables"].create_group("runs")
        t.attrs["columns"] = json.dumps(["lr", "seed", "status"])
        _extendable(t, "lr", e["runs"]["lr"], np.float64)
        _extendable(t, "seed", e["runs"]["seed"], np.int64)
        status = np.array([v.encode() for v in e["runs"]["status"]], dtype="S16")
        _extendable(t, "status", status, h5py.string_dtype("utf-8", 16))
        f["arrays"].create_dataset("spectrum", data=e["spectrum"])
        for k, v in e["summary"].items():
            f["summary"].attrs[k] = v
    return path


def live_writer(path: str, max_rows: int = 1_000_000, max_seconds: float = 60.0) -> None:
    """A SWMR writer (run in a subprocess): appends step i, loss 1/(1+i) one row at a time,
    flushing each, until max_rows or max_seconds. Never writes a summary."""
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "test/live", "live_writer", {}, 0, 1)
        s = f["series"]
        s.attrs["names"] = json.dumps(["loss"])
        step = _extendable(s, "step", [], np.int64)
        loss = _extendable(s, "loss", [], np.float64)
        f.swmr_mode = True
        t0 = time.monotonic()
        i = 0
        while i < max_rows and time.monotonic() - t0 < max_seconds:
            loss.resize((i + 1,))
            loss[i] = 1.0 / (1 + i)
            loss.flush()
            step.resize((i + 1,))
            step[i] = i
            step.flush()
            i += 1
            time.sleep(0.001)


@pytest.fixture
def example_log(tmp_path) -> Path:
    return write_example(tmp_path / "example_log.h5")
