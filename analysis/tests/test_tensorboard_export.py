"""`gaugelab tensorboard` (analysis/tensorboard_export.py) on logs written by pure h5py (tests/plot_logs.py):
the event files are read back record by record (length and data checksums, the Event protocol buffers
decoded here, independently of the writer), and hold the series as scalars at their steps, the per-head
series grouped under their name, the settings and summary as text, a sweep as a folder per grid point and
seed, a merge log's tables; usage errors are one line with status 2."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import tensorboard_export as tb
from conftest import ANALYSIS, _extendable
from plot_logs import merge_log, toy_log, train_log


def export(*argv, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "GAUGELAB_PROG": "gaugelab tensorboard"}
    return subprocess.run([sys.executable, str(ANALYSIS / "tensorboard_export.py"), *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _varint(b: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        n |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return n, i


def fields(b: bytes) -> list[tuple[int, object]]:
    """A protocol buffer's (field number, value) pairs: varints as int, fixed64 / fixed32 as raw bytes,
    length-delimited as bytes."""
    out, i = [], 0
    while i < len(b):
        key, i = _varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        elif wire == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {wire}")
        out.append((field, v))
    return out


def read_events(path: Path) -> tuple[str, dict, dict]:
    """The file version, {tag: [(step, value)]} of the scalars and {tag: text} of the texts, every record's
    two checksums verified."""
    raw, i = path.read_bytes(), 0
    version, scalars, texts = None, {}, {}
    while i < len(raw):
        head = raw[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        assert struct.unpack("<I", raw[i + 8:i + 12])[0] == tb.masked_crc(head)
        data = raw[i + 12:i + 12 + n]
        assert struct.unpack("<I", raw[i + 12 + n:i + 16 + n])[0] == tb.masked_crc(data)
        i += 16 + n
        ev = fields(data)
        step = next((v for f, v in ev if f == 2), 0)
        version = next((v.decode() for f, v in ev if f == 3), version)
        for summary in (v for f, v in ev if f == 5):
            for value in (v for f, v in fields(summary) if f == 1):
                parts = dict(fields(value))
                tag = parts[1].decode()
                if 2 in parts:
                    scalars.setdefault(tag, []).append((step, struct.unpack("<f", parts[2])[0]))
                else:
                    plugin = dict(fields(dict(fields(parts[9]))[1]))[1]
                    assert plugin == b"text"
                    tensor = dict(fields(parts[8]))
                    assert tensor[1] == tb.DT_STRING
                    texts[tag] = tensor[8].decode()
    return version, scalars, texts


def events_in(folder: Path) -> Path:
    files = list(folder.glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    return files[0]


def test_crc32c_is_castagnoli():
    assert tb.crc32c(b"123456789") == 0xE3069283  # the standard check value of CRC-32C


def add_heads(path: Path, steps, layers: int = 2, heads: int = 3) -> np.ndarray:
    """/heads/s_q [record, layer, head] and /heads/step on a pure-h5py train log."""
    s_q = np.arange(len(steps) * layers * heads, dtype=float).reshape(len(steps), layers, heads) / 10
    with h5py.File(path, "a") as f:
        f["heads"].attrs["names"] = json.dumps(["s_q"])
        _extendable(f["heads"], "step", steps, np.int64)
        _extendable(f["heads"], "s_q", s_q, np.float64)
    return s_q


def test_a_training_log_becomes_scalars_grouped_heads_and_text(tmp_path):
    (tmp_path / "run_B").mkdir()
    log = train_log(tmp_path / "run_B" / "log.h5", condition="B", seed=42, steps=60, eval_every=20)
    s_q = add_heads(log, [10, 20, 30])
    r = export(tmp_path / "run_B", "--out", tmp_path / "tb", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    version, scalars, texts = read_events(events_in(tmp_path / "tb" / "run_B"))
    assert version == "brain.Event:2"
    loss = scalars["loss"]
    assert [s for s, _ in loss] == list(range(1, 61))
    np.testing.assert_allclose([v for _, v in loss], 10.0 - 0.05 * np.arange(1, 61) + 0.42, rtol=1e-6)  # float32
    assert [s for s, _ in scalars["val_loss"]] == [20, 40, 60]  # the NaN steps left out
    assert {t for t in scalars if t.startswith("s_q/")} == {f"s_q/layer{l}_head{h}" for l in range(2) for h in range(3)}
    assert scalars["s_q/layer1_head2"] == [(s, pytest.approx(v, rel=1e-6)) for s, v in zip([10, 20, 30], s_q[:, 1, 2])]
    assert "| condition | B |" in texts["settings"] and "| kind | gpt2/train |" in texts["settings"]
    assert "| final_val_loss |" in texts["summary"] and scalars["summary/steps"] == [(60, 60.0)]


def test_a_sweep_is_a_folder_per_grid_point_and_seed_and_a_merge_log_its_tables(tmp_path):
    sweep = toy_log(tmp_path / "sweep.h5", seeds=2, kind="sweep/relu", grid={"lr": [0.01, 0.03]})
    merged = merge_log(tmp_path / "merge_AB")
    r = export(sweep, tmp_path / "merge_AB", "--out", tmp_path / "tb", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    folders = sorted(p.name for p in (tmp_path / "tb" / "sweep").iterdir())
    assert folders == ["lr=0.01, seed=0", "lr=0.01, seed=1", "lr=0.03, seed=0", "lr=0.03, seed=1"]
    _, scalars, _ = read_events(events_in(tmp_path / "tb" / "sweep" / "lr=0.03, seed=1"))
    assert [s for s, _ in scalars["val_mse"]] == list(range(0, 110, 10))
    assert scalars["val_mse"][-1][1] == pytest.approx(0.5 - 0.03 + 0.002 + 0.02, rel=1e-6)
    _, scalars, texts = read_events(events_in(tmp_path / "tb" / "merge_AB"))
    with h5py.File(merged, "r") as f:
        loss = f["tables/path/loss"][()]
    np.testing.assert_allclose([v for _, v in scalars["tables/path/loss"]], loss, rtol=1e-6)
    assert texts["tables/path"].startswith("| level | t | loss |")


def test_usage_errors_are_one_line_with_status_2(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    log = train_log(tmp_path / "a.h5")
    for argv, says in (([log, "--out", tmp_path / "full"], "exists and is not empty"), ([log], "--out")):
        r = export(*argv, cwd=tmp_path)
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = export(log, "--out", tmp_path / "full", "--force", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = export(tmp_path / "missing.h5", "--out", tmp_path / "tb2", cwd=tmp_path)
    assert r.returncode == 1 and "missing.h5" in r.stderr


def test_a_finite_value_beyond_float32_is_written_as_infinity_not_a_failure():
    """A diverging run's loss can be finite in float64 and beyond float32's range; the export must not fail on it."""
    for v, want in ((1e39, np.inf), (-1e39, -np.inf), (3.0, 3.0)):
        f = dict(fields(tb.scalar_value("loss", v)))
        assert f[1] == b"loss" and struct.unpack("<f", f[2])[0] == want
