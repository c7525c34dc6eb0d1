"""The Python run-log reader on logs made by pure h5py, by the C++ writer, and by a live writer."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import gaugelab_log as gl
from conftest import ANALYSIS, EXAMPLE

ROOT = ANALYSIS.parent
# A live log is polled this often and at most this long; the writer (a row per millisecond, for
# up to 60 s) outlasts the wait, so it is always killed mid-write.
POLL_S = 0.05
WAIT_LIMIT_S = 20.0


def cpp_example() -> Path:
    build = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build"))
    return build / "fixtures" / "example_log.h5"


@pytest.fixture(params=["h5py", "cpp"])
def any_example(request, example_log) -> Path:
    if request.param == "h5py":
        return example_log
    p = cpp_example()
    if not p.exists():
        pytest.skip(f"{p} not found: build and run test_io (or set GAUGELAB_BUILD_DIR to a build that has)")
    return p


def test_example_log_reads_back(any_example):
    e = EXAMPLE
    with gl.open_log(any_example) as f:
        prov = gl.provenance(f)
        assert prov["kind"] == e["kind"] and isinstance(prov["kind"], str)
        assert prov["command"] == e["command"]
        assert prov["config"] == e["config"]
        assert prov["seed"] == e["seed"] and prov["threads"] == e["threads"]
        for key in ("gaugelab_version", "git_sha", "created_utc", "host"):
            assert isinstance(prov[key], str) and prov[key]

        s = gl.series(f)
        assert list(s) == ["step", "loss", "lr"]
        np.testing.assert_array_equal(s["step"], e["step"])
        np.testing.assert_array_equal(s["loss"], e["loss"])  # float64 exact
        np.testing.assert_array_equal(s["lr"], e["lr"])

        h = gl.heads(f)
        np.testing.assert_array_equal(h["step"], np.arange(5))
        assert h["s_q"].shape == (5, 2, 3)
        np.testing.assert_array_equal(h["s_q"], e["s_q"])

        assert gl.table_names(f) == ["runs"]
        t = gl.table(f, "runs")
        assert list(t) == ["lr", "seed", "status"]
        np.testing.assert_array_equal(t["lr"], e["runs"]["lr"])
        np.testing.assert_array_equal(t["seed"], e["runs"]["seed"])
        assert t["status"].tolist() == e["runs"]["status"] and isinstance(t["status"][0], str)

        np.testing.assert_array_equal(gl.array(f, "spectrum"), e["spectrum"])
        assert gl.summary(f) == e["summary"]
        assert isinstance(gl.summary(f)["n_runs"], int)


def test_missing_things_raise_errors_naming_them(tmp_path, example_log):
    missing = tmp_path / "nope.h5"
    with pytest.raises(gl.LogError, match=r"nope\.h5: run log not found; make it with: gaugelab toy relu"):
        gl.require(missing, made_by="gaugelab toy relu --out nope.h5")
    assert gl.require(example_log) == example_log

    text = tmp_path / "text.h5"
    text.write_text("not hdf5\n")
    with pytest.raises(gl.LogError, match="not an HDF5 file"):
        gl.open_log(text)

    plain = tmp_path / "plain.h5"
    h5py.File(plain, "w").close()
    with pytest.raises(gl.LogError, match=r"not a gaugelab run log \(no group /series\)"):
        gl.open_log(plain)

    with gl.open_log(example_log) as f:
        with pytest.raises(gl.LogError, match=r"no table /tables/other in this log \(its tables: runs\)"):
            gl.table(f, "other")
        with pytest.raises(gl.LogError, match=r"no array /arrays/other in this log \(its arrays: spectrum\)"):
            gl.array(f, "other")


def _series_length(path: Path) -> int:
    try:
        with gl.open_log(path) as f:
            return len(gl.series(f).get("step", []))
    except (gl.LogError, OSError):
        return 0  # not created yet, or still in its non-SWMR set-up


def test_live_log_grows_and_survives_sigkill(tmp_path):
    path = tmp_path / "live.h5"
    code = f"import sys; sys.path.insert(0, {str(ANALYSIS)!r}); import conftest; conftest.live_writer({str(path)!r})"
    writer = subprocess.Popen([sys.executable, "-c", code])
    try:
        t0 = time.monotonic()
        while _series_length(path) == 0 and time.monotonic() - t0 < WAIT_LIMIT_S:
            time.sleep(POLL_S)
        with gl.open_log(path) as f:  # one reader, kept open: refresh must show new rows
            lengths = []
            while len(set(lengths)) < 3 and time.monotonic() - t0 < WAIT_LIMIT_S:
                s = gl.series(f)
                assert len(s["step"]) == len(s["loss"])
                np.testing.assert_array_equal(s["loss"], 1.0 / (1.0 + s["step"]))
                lengths.append(len(s["step"]))
                time.sleep(POLL_S)
        assert len(set(lengths)) >= 3, f"the live log did not grow: {lengths}"
        assert lengths == sorted(lengths)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=WAIT_LIMIT_S)
    assert writer.returncode == -signal.SIGKILL

    with gl.open_log(path) as f:
        s = gl.series(f)
        assert len(s["step"]) >= lengths[-1]
        np.testing.assert_array_equal(s["step"], np.arange(len(s["step"])))
        np.testing.assert_array_equal(s["loss"], 1.0 / (1.0 + s["step"]))
        assert gl.summary(f) == {}


def test_rows_past_commit_are_not_read(example_log):
    # A flush that failed part-way can leave extents ahead of the data; /commit holds the confirmed rows.
    with h5py.File(example_log, "a") as f:
        n = len(f["series/step"])
        d = f.create_dataset("commit", data=np.array([n - 2, 3], dtype=np.int64))
        d.attrs["groups"] = '["series", "heads"]'
    with gl.open_log(example_log) as f:
        s = gl.series(f)
        assert all(len(v) == n - 2 for v in s.values())
        np.testing.assert_array_equal(s["loss"], EXAMPLE["loss"][: n - 2])
        assert len(gl.heads(f)["step"]) == 3
        for t in gl.table_names(f):  # tables are not counted by this /commit: read whole
            assert len(next(iter(gl.table(f, t).values()))) == len(f[f"tables/{t}/{gl._order(f, f'tables/{t}', 'columns')[0]}"])
    with h5py.File(example_log, "a") as f:
        f["commit"][...] = np.array([-1, 3])
    with gl.open_log(example_log) as f, pytest.raises(gl.LogError, match="commit"):
        gl.series(f)
