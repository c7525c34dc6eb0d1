"""The log reader's and the analysis scripts' bad-input probes of issue 45, one row each: a closed log, a key the
log lacks, per-head records asked of a log that never has them, a run path with a byte that is not UTF-8, and the
usage errors of make_figures.py. Each ends in one LogError line naming the problem (the reader), or one line and a
non-zero status (the scripts: "error:" and exit 2 for a usage error, as argparse's), never a traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import gaugelab_log as gl
from conftest import ANALYSIS, write_example, write_root

ROOT = ANALYSIS.parent
BAD_BYTE_DIR = b"run\xffdir"  # a Linux file name may hold any byte; this one is not UTF-8


def toy_log(path: Path) -> Path:
    """A toy log as the C++ writer lays it out: series, no per-head records, its command with the path's raw bytes
    (the writer stores --out as given: fixed-length bytes, not UTF-8 when the path is not)."""
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "toy/relu", "gaugelab toy relu", {"lr": 0.01, "seed": 0}, 0, 1)
        f.attrs["command"] = np.bytes_(b"gaugelab toy relu --out " + os.fsencode(path))
        s = f["series"]
        s.attrs["names"] = json.dumps(["train_mse"])
        s.create_dataset("step", data=np.arange(4), maxshape=(None,), chunks=True)
        s.create_dataset("train_mse", data=np.linspace(1, 0.1, 4), maxshape=(None,), chunks=True)
        f["summary"].attrs["final_train_mse"] = 0.1
    return path


def train_log_without_heads(path: Path) -> Path:
    with h5py.File(path, "w", libver="latest") as f:
        write_root(f, "gpt2/train", "gaugelab train", {"lr": 0.001}, 42, 1)
    return path


def with_listed_but_missing_series(path: Path) -> Path:
    write_example(path)
    with h5py.File(path, "a") as f:
        f["series"].attrs["names"] = json.dumps(["loss", "lr", "gone"])
    return path


def closed(path: Path) -> h5py.File:
    f = gl.open_log(path)
    f.close()
    return f


# (name, the log to make, what is asked of it, the LogError's text; None: the valid neighbour, which must not raise)
READER_ROWS = [
    ("closed: series", write_example, lambda p: gl.series(closed(p)), "the run log is closed"),
    ("closed: provenance", write_example, lambda p: gl.provenance(closed(p)), "the run log is closed"),
    ("closed: heads", write_example, lambda p: gl.heads(closed(p)), "the run log is closed"),
    ("closed: table", write_example, lambda p: gl.table(closed(p), "runs"), "the run log is closed"),
    ("closed: table_names", write_example, lambda p: gl.table_names(closed(p)), "the run log is closed"),
    ("closed: array", write_example, lambda p: gl.array(closed(p), "spectrum"), "the run log is closed"),
    ("closed: summary", write_example, lambda p: gl.summary(closed(p)), "the run log is closed"),
    ("missing array", write_example, lambda p: gl.array(gl.open_log(p), "nope"),
     "no array /arrays/nope in this log (its arrays: spectrum)"),
    ("missing table", write_example, lambda p: gl.table(gl.open_log(p), "nope"),
     "no table /tables/nope in this log (its tables: runs)"),
    ("listed series missing", with_listed_but_missing_series, lambda p: gl.series(gl.open_log(p)),
     "/series/gone is missing although /series names lists it (the log is damaged)"),
    ("heads of a toy log", toy_log, lambda p: gl.heads(gl.open_log(p)),
     "a toy/relu log has no per-head records"),
    ("heads of a training log without records yet", train_log_without_heads, lambda p: gl.heads(gl.open_log(p)), None),
    ("heads of a log that has them", write_example, lambda p: gl.heads(gl.open_log(p)), None),
]


@pytest.mark.parametrize("name,make,ask,says", READER_ROWS, ids=[r[0] for r in READER_ROWS])
def test_reader_probes(name, make, ask, says, tmp_path):
    path = make(tmp_path / "log.h5")
    if says is None:
        ask(path)
        return
    with pytest.raises(gl.LogError) as e:
        ask(path)
    assert says in str(e.value)
    assert "\n" not in str(e.value)


@pytest.fixture
def bad_byte_run(tmp_path) -> bytes:
    """A run directory whose name holds the byte 0xff, with a toy log written there."""
    d = os.path.join(os.fsencode(tmp_path), BAD_BYTE_DIR)
    os.mkdir(d)
    toy_log(Path(os.fsdecode(os.path.join(d, b"log.h5"))))
    return d


def test_reader_reads_a_path_that_is_not_utf8(bad_byte_run):
    run = os.fsdecode(bad_byte_run)  # the str Python gives such a path: the byte as a surrogate
    with gl.open_log(run) as f:
        prov = gl.provenance(f)
        assert os.fsencode(prov["command"]).endswith(BAD_BYTE_DIR + b"/log.h5")  # the same bytes back
        assert len(gl.series(f)["train_mse"]) == 4


# stdout forced strict, as a UTF-8 locale leaves it: a surrogate printed there was a UnicodeEncodeError.
SCRIPT_ROWS = [
    ("plot_runs.py", ["--out", "PLOT"], b"wrote "),
    ("compare_runs.py", [], b"final_train_mse"),
]


@pytest.mark.parametrize("script,extra,says", SCRIPT_ROWS, ids=[r[0] for r in SCRIPT_ROWS])
def test_scripts_take_a_path_that_is_not_utf8(script, extra, says, bad_byte_run, tmp_path):
    argv = [os.fsencode(tmp_path / "plot.png") if a == "PLOT" else a.encode() for a in extra]
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict", MPLBACKEND="Agg")
    r = subprocess.run([sys.executable.encode(), os.fsencode(ANALYSIS / script), bad_byte_run, *argv],
                       capture_output=True, timeout=120, env=env)
    assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")[-800:]
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-800:]
    assert says in r.stdout + r.stderr
    assert BAD_BYTE_DIR in r.stdout + r.stderr  # the run named by its own bytes


# make_figures.py: (argv, the piece of its one "error:" line). Each is refused before any run starts: exit 2.
FIGURES_ROWS = [
    (["--jobs", "-1"], "--jobs must be >= 1, got -1"),
    (["--jobs", "0"], "--jobs must be >= 1, got 0"),
    (["--grid", "nope"], "unknown grid 'nope'"),
    (["--grid", "lr_sensitivity_demo", "--set", "seeds="], "grid lr_sensitivity_demo: seeds is empty"),
    (["--grid", "lr_sensitivity_demo", "--set", "lrs= "], "grid lr_sensitivity_demo: lrs is empty"),
    (["--grid", "lr_sensitivity_demo", "--set", "nokey"], "--set takes KEY=VALUE, not 'nokey'"),
    (["--grid", "lr_sensitivity_demo", "--shard", "2/2"], "shards are numbered from 0 (0/2 .. 1/2)"),
    (["--grid", "lr_sensitivity_demo", "--shard", "x"], "--shard takes I/N"),
    (["--grid", "lr_sensitivity_demo", "--set", "root=/proc/gaugelab_probe"], "cannot create the grid's folder"),
]


@pytest.mark.parametrize("argv,says", FIGURES_ROWS, ids=[" ".join(r[0]) for r in FIGURES_ROWS])
def test_make_figures_usage_errors(argv, says, tmp_path):
    r = subprocess.run([sys.executable, str(ANALYSIS / "make_figures.py"), *argv], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-800:]
    assert "Traceback" not in r.stderr
    error = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(error) == 1 and error[0].startswith("make_figures.py: error: "), r.stderr[-800:]
    assert says in error[0]
    assert not (ROOT / "runs" / "gaugelab_probe").exists()
