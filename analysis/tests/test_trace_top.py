"""scripts/trace_top.py, the one reader of profiler traces (ours from `train --profile-from`, the peers' from
nanogpt_ref.py --profile-out): device time per kernel, the busy time as a union of intervals (overlaps counted
once, gaps not at all), the CPU-operator fallback, and a one-line refusal of an unreadable trace."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import trace_top  # noqa: E402


def kernel(name, ts, dur, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": 7}


def test_union_counts_overlaps_once_and_skips_gaps():
    assert trace_top.union_us([(0, 10), (5, 15), (20, 25)]) == 20
    assert trace_top.union_us([(0, 10), (2, 3)]) == 10
    assert trace_top.union_us([]) == 0


def test_device_kernels_ranked_with_busy_fraction(tmp_path):
    events = [kernel("gemm", 0, 40), kernel("gemm", 100, 40), kernel("softmax", 50, 20),
              kernel("Memset (Device)", 140, 20, cat="gpu_memset"),
              {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 500, "pid": 0, "tid": 1}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "trace_top.py"), str(path), "--steps", "2"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # busy: [0,40] + [50,70] + [100,160] = 120 us of a 160 us span; the CPU operator is not device time
    assert lines[0].startswith("device busy 0.12 ms of a 0.16 ms span (75.0 %), 4 device events, 0.06 ms busy per step")
    rows = [l for l in lines if l.startswith("| ") and "calls" not in l]
    assert rows[0] == "| gemm | 2 | 0.080 | 66.7 % |"
    assert {r.split(" | ")[0][2:] for r in rows} == {"gemm", "softmax", "Memset (Device)"}


def test_cpu_trace_falls_back_to_operators():
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 300},
              {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 400, "dur": 100}]
    out = trace_top.rank(events, top=5, steps=0)
    assert out.startswith("no device events: CPU operators")
    assert "| aten::mm | 1 | 0.300 | 75.0 % |" in out


def test_unreadable_trace_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "trace_top.py"), str(bad)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0 and r.stderr.strip().startswith("trace_top: cannot read")
    assert len(r.stderr.strip().splitlines()) == 1
