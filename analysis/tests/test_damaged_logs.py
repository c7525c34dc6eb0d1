"""The reader on damaged logs and run directories: a log cut short, or with a flipped metadata byte,
fails in one clean LogError within seconds (never waits), with Debian's h5py and, where a Python with
pip's h5py is at hand, with that one too; a run directory opens as `gaugelab plot` opens it."""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gaugelab_log as gl
import h5_file_check
from conftest import ANALYSIS

LIMIT_S = 60  # a damaged log must fail well within this; a hang is killed here
OPEN_AND_READ = ("import sys; sys.path.insert(0, {analysis!r}); import gaugelab_log as gl\n"
                 "try:\n    f = gl.open_log({path!r}); gl.series(f); print('read')\n"
                 "except gl.LogError as e:\n    print('LogError:', e)\n")


def open_in(python: str, path: Path) -> subprocess.CompletedProcess:
    """open_log + series in a child Python, killed after LIMIT_S."""
    code = OPEN_AND_READ.format(analysis=str(ANALYSIS), path=str(path))
    try:
        return subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{python} waited over {LIMIT_S} s on {path.name} instead of failing")


def cut(src: Path, dst: Path, fraction: float) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * fraction)])
    return dst


def killed_live_log(path: Path) -> Path:
    """A SWMR log whose writer was SIGKILLed after some rows (its superblock still says 'being written')."""
    code = f"import sys; sys.path.insert(0, {str(ANALYSIS)!r}); import conftest; conftest.live_writer({str(path)!r})"
    writer = subprocess.Popen([sys.executable, "-c", code])
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < LIMIT_S and (not path.exists() or path.stat().st_size < 50_000):
            time.sleep(0.05)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=LIMIT_S)
    assert path.exists() and path.stat().st_size >= 50_000, "the live writer wrote too little"
    return path


def other_h5py_pythons() -> list[str]:
    """Interpreters besides this one that import h5py (e.g. a venv with pip's h5py and HDF5 2.x):
    $GAUGELAB_OTHER_H5PY_PYTHONS (colon list), and the LibTorch venv's Python when it has h5py."""
    found = [p for p in os.environ.get("GAUGELAB_OTHER_H5PY_PYTHONS", "").split(":") if p]
    venv = Path(os.environ.get("GAUGELAB_VENV", Path.home() / ".cache/gaugelab/venv")) / "bin/python"
    if venv.exists():
        found.append(str(venv))
    ok = []
    for py in found:
        try:
            r = subprocess.run([py, "-c", "import h5py, numpy"], capture_output=True, timeout=LIMIT_S)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            ok.append(py)
    return ok


def test_a_log_cut_short_is_refused_as_truncated_without_the_writer_hint(tmp_path, example_log):
    half = cut(example_log, tmp_path / "half.h5", 0.5)
    with pytest.raises(gl.LogError, match=r"half\.h5: truncated: \d+ of the \d+ bytes") as e:
        gl.open_log(half)
    assert "writer" not in str(e.value)  # "sblock" in HDF5's message is no file lock
    assert h5_file_check.truncation(example_log) is None


def test_the_lock_hint_needs_a_lock_message():
    assert gl._is_lock_error("unable to lock file, errno = 11, error message = 'Resource temporarily unavailable'")
    assert gl._is_lock_error("file is already open for write (may use <h5clear file> to clear file consistency flags)")
    assert not gl._is_lock_error("Unable to open file (truncated file: eof = 1, sblock->base_addr = 0, stored_eof = 2)")


def test_a_killed_log_with_a_damaged_metadata_block_fails_in_bounded_time(tmp_path):
    # HDF5's SWMR reader retries a block whose checksum fails with doubling sleeps; unbounded, it never ends.
    log = killed_live_log(tmp_path / "killed.h5")
    assert h5_file_check.superblock(log)["flags"] & h5_file_check.WRITE_FLAGS
    data = bytearray(log.read_bytes())
    root = int.from_bytes(data[36:44], "little")  # superblock v3: root group object header address
    data[root + 12] ^= 0xFF
    bad = tmp_path / "flipped.h5"
    bad.write_bytes(bytes(data))
    t0 = time.monotonic()
    r = open_in(sys.executable, bad)
    assert r.stdout.startswith("LogError:") and "flipped.h5" in r.stdout, r.stdout + r.stderr[-1000:]
    assert time.monotonic() - t0 < LIMIT_S


def test_a_log_whose_writer_died_adding_its_summary_is_read(tmp_path, example_log):
    """The C++ writer reopens a finished log in ordinary mode to add /summary; a SIGKILL then leaves the
    superblock marked 'open for write' (not SWMR), which HDF5's SWMR and plain opens both refuse."""
    marked = tmp_path / "summary_killed.h5"
    shutil.copy(example_log, marked)
    # The open marks the superblock; 40 attributes on /series (dense storage, allocated past the recorded
    # end of file) flushed with that object alone, as a cache flush during close can; then no close at all.
    code = (f"import sys; sys.path.insert(0, {str(ANALYSIS)!r}); import ctypes, h5py, os, h5_file_check\n"
            f"f = h5py.File({str(marked)!r}, 'r+', libver='latest')\n"
            "for i in range(40): f['series'].attrs[f'padding_{i}'] = float(i)\n"
            "flush = ctypes.CDLL(h5_file_check._hdf5_library()).H5Oflush\n"
            "flush.argtypes, flush.restype = [ctypes.c_int64], ctypes.c_int\n"
            "g = f['series']\n"
            "assert flush(g.id.id) >= 0\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=LIMIT_S)
    assert h5_file_check.superblock(marked)["flags"] & h5_file_check.WRITE_FLAGS
    before = marked.read_bytes()
    for python in [sys.executable, *other_h5py_pythons()]:
        r = open_in(python, marked)
        assert r.stdout.startswith("read"), (python, r.stdout, r.stderr[-800:])
    with gl.open_log(marked) as f:
        assert list(gl.series(f)["loss"]) == list(gl.series(gl.open_log(example_log))["loss"])
    assert marked.read_bytes() == before  # a reader writes nothing, the mark included


def test_metadata_retries_are_bounded_as_in_the_cpp_reader():
    fapl = h5_file_check.bounded_fapl()
    assert fapl is not None, "the HDF5 library h5py loaded was not found"
    get = ctypes.CDLL(h5_file_check._hdf5_library()).H5Pget_metadata_read_attempts
    get.argtypes, get.restype = [ctypes.c_int64, ctypes.POINTER(ctypes.c_uint)], ctypes.c_int
    n = ctypes.c_uint(0)
    assert get(fapl.id, ctypes.byref(n)) >= 0 and n.value == h5_file_check.METADATA_READ_ATTEMPTS == 24


@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_every_h5py_at_hand_fails_a_cut_log_without_waiting(tmp_path, example_log, fraction):
    closed = cut(example_log, tmp_path / "closed_cut.h5", fraction)
    killed = cut(killed_live_log(tmp_path / "killed.h5"), tmp_path / "killed_cut.h5", fraction)
    for python in [sys.executable, *other_h5py_pythons()]:
        r = open_in(python, closed)
        assert r.stdout.startswith("LogError:") and "truncated" in r.stdout, (python, r.stdout, r.stderr[-800:])
        r = open_in(python, killed)  # rows past the cut may read as zeros; it must not wait or crash
        assert r.returncode == 0 and r.stdout.startswith(("read", "LogError:")), (python, r.stdout, r.stderr[-800:])


def test_a_run_directory_opens_its_log(tmp_path, example_log):
    run = tmp_path / "train_A"
    run.mkdir()
    shutil.copy(example_log, run / "log.h5")
    (run / "other.h5").write_bytes(b"")
    with gl.open_log(run) as f:
        assert f.filename.endswith("log.h5")
    merge = tmp_path / "merge_dir"
    merge.mkdir()
    shutil.copy(example_log, merge / "merge.h5")  # merge-models writes DIR/merge.h5
    with gl.open_log(merge) as f:
        assert f.filename.endswith("merge.h5")
    (merge / "second.h5").write_bytes(b"")
    with pytest.raises(gl.LogError, match=r"merge_dir: a directory without log\.h5 \(it holds merge\.h5, second\.h5\)"):
        gl.open_log(merge)
    (tmp_path / "empty").mkdir()
    with pytest.raises(gl.LogError, match=r"empty: a directory without log\.h5 \(it holds no \.h5 file\)"):
        gl.open_log(tmp_path / "empty")


def test_an_extent_claiming_rows_the_file_does_not_store_is_refused_at_once(tmp_path, example_log):
    """The fuzzer's slow input, in the Python reader: series extents grown to 1.5e8 rows without data (and no
    /commit to cut them) made `gaugelab compare` fill 14 GB with fill values for 226 s; now one LogError."""
    import h5py
    grown = tmp_path / "grown.h5"
    shutil.copy(example_log, grown)
    with h5py.File(grown, "r+") as f:
        for name in f["series"]:
            if f["series"][name].maxshape[0] is None:
                f["series"][name].resize((150_000_000,) + f["series"][name].shape[1:])
        if "commit" in f:
            del f["commit"]
    r = open_in(sys.executable, grown)
    assert "LogError:" in r.stdout and "claims 150000000 rows" in r.stdout, r.stdout + r.stderr
    assert "read" not in r.stdout.split("LogError")[0]
    f = gl.open_log(example_log)  # the undamaged log still reads
    assert len(gl.series(f)["step"]) > 0
