"""scripts/build_report.py: the slowest compile steps and tests that CI prints, read from ninja's and CTest's records."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build_report.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_steps_and_tests_are_ranked_from_the_records(tmp_path):
    b = tmp_path / "build"
    (b / "Testing" / "Temporary").mkdir(parents=True)
    # ninja log v5: start, end (ms), mtime, output, hash; a rebuilt output keeps only its newest record
    (b / ".ninja_log").write_text("# ninja log v5\n"
                                  "0\t4000\t1\ta.o\tx\n"
                                  "0\t90000\t1\tslow.o\tx\n"
                                  "10\t2010\t1\tb.o\tx\n"
                                  "100\t1100\t2\ta.o\ty\n")
    (b / "Testing" / "Temporary" / "CTestCostData.txt").write_text(
        "core:fast case 3 0.5\ntrain:long case 1 40.25\ntrain:other 1 2\n---\ntrain:failed before\n")
    r = run("--top", 2, b)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert "build: 3 steps, 93 s summed; the 2 slowest:" in out[1]
    assert out[2].split() == ["90.0", "s", "slow.o"] and out[3].split() == ["2.0", "s", "b.o"]
    assert "tests: 3 cases, 43 s summed; by area: train 2/42 s, core 1/0 s" in r.stdout
    assert "40.2 s  train:long case" in r.stdout and "failed before" not in r.stdout


def test_a_missing_build_is_said_not_an_error(tmp_path):
    r = run(tmp_path / "none")
    assert r.returncode == 0 and "no .ninja_log (not built here)" in r.stdout


def test_a_bad_top_is_a_usage_error(tmp_path):
    r = run("--top", 0, tmp_path)
    assert r.returncode == 2 and "error: --top must be at least 1" in r.stderr
