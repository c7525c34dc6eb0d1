"""The two log comparers the check scripts rely on: scripts/gpu_check_compare.py (CPU vs CUDA runs, with
stated bounds) and scripts/soak_compare.py (value for value) pass equal logs and fail changed ones."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def train_like_log(path: Path, loss: np.ndarray, final_val: float) -> Path:
    with h5py.File(path, "w", libver="latest") as f:
        s = f.create_group("series")
        s.create_dataset("step", data=np.arange(1, len(loss) + 1, dtype=np.int64))
        s.create_dataset("loss", data=loss)
        s.create_dataset("tokens_per_s", data=np.full(len(loss), 1e3))
        f.create_group("summary").attrs["final_val_loss"] = final_val
    return path


def run(script: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_gpu_check_compare_passes_close_runs_and_fails_a_different_model(tmp_path):
    loss = np.linspace(9.8, 6.5, 60)
    ref = train_like_log(tmp_path / "cpu.h5", loss, 6.50)
    close = train_like_log(tmp_path / "cuda.h5", loss + 1e-5, 6.51)
    r = run("gpu_check_compare.py", "A", ref, close)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
    early = train_like_log(tmp_path / "early.h5", loss + np.r_[np.full(5, 2e-2), np.zeros(55)], 6.50)
    r = run("gpu_check_compare.py", "A", ref, early)
    assert r.returncode == 1 and "early" in r.stdout
    final = train_like_log(tmp_path / "final.h5", loss, 6.50 * 1.05)
    r = run("gpu_check_compare.py", "A", ref, final)
    assert r.returncode == 1 and "final val" in r.stdout


def test_soak_compare_needs_the_same_bits_except_wall_clock(tmp_path):
    loss = np.linspace(9.8, 6.5, 20)
    a = train_like_log(tmp_path / "a.h5", loss, 6.5)
    b = train_like_log(tmp_path / "b.h5", loss, 6.5)
    with h5py.File(b, "a") as f:
        f["series/tokens_per_s"][...] = 2e3  # wall-clock: ignored
    assert run("soak_compare.py", a, b).returncode == 0
    with h5py.File(b, "a") as f:
        f["series/loss"][3] = np.nextafter(f["series/loss"][3], 0)  # one ulp
    assert run("soak_compare.py", a, b).returncode == 1


def processes_table(path: Path, start: list[int], end: list[int]) -> None:
    with h5py.File(path, "a") as f:
        t = f.require_group("tables").create_group("processes")
        t.create_dataset("start_step", data=np.array(start, dtype=np.int64))
        t.create_dataset("end_step", data=np.array(end, dtype=np.int64))
        t.create_dataset("seconds", data=np.ones(len(end)))


def test_soak_compare_lets_the_process_table_differ_but_not_where_the_run_ended(tmp_path):
    loss = np.linspace(9.8, 6.5, 20)
    ref = train_like_log(tmp_path / "ref.h5", loss, 6.5)
    processes_table(ref, [0], [20])
    resumed = train_like_log(tmp_path / "resumed.h5", loss, 6.5)
    processes_table(resumed, [0, 10], [10, 20])  # killed once, resumed: one more row, by design
    r = run("soak_compare.py", ref, resumed)
    assert r.returncode == 0, r.stdout
    short = train_like_log(tmp_path / "short.h5", loss, 6.5)
    processes_table(short, [0], [15])
    r = run("soak_compare.py", ref, short)
    assert r.returncode == 1 and "ended at step 15" in r.stdout


def commit_rows(path: Path, groups: list[str], rows: list[int]) -> None:
    with h5py.File(path, "a") as f:
        d = f.create_dataset("commit", data=np.array(rows, dtype=np.int64))
        d.attrs["groups"] = json.dumps(groups)


def test_soak_compare_lets_commit_differ_only_in_the_process_table_entry(tmp_path):
    """A resumed run's /commit counts its extra process row (stop 51's CI: 'commit at flat index 2: 2 vs
    reference 1'); every other group's committed rows must still match."""
    loss = np.linspace(9.8, 6.5, 20)
    groups = ["series", "heads", "tables/processes", "tables/val"]
    ref = train_like_log(tmp_path / "ref.h5", loss, 6.5)
    processes_table(ref, [0], [20])
    commit_rows(ref, groups, [20, 4, 1, 3])
    resumed = train_like_log(tmp_path / "resumed.h5", loss, 6.5)
    processes_table(resumed, [0, 10], [10, 20])
    commit_rows(resumed, groups, [20, 4, 2, 3])
    r = run("soak_compare.py", ref, resumed)
    assert r.returncode == 0, r.stdout
    lost = train_like_log(tmp_path / "lost.h5", loss, 6.5)
    processes_table(lost, [0, 10], [10, 20])
    commit_rows(lost, groups, [20, 4, 2, 2])  # a val row not committed: a real difference
    r = run("soak_compare.py", ref, lost)
    assert r.returncode == 1 and "commit" in r.stdout, r.stdout
