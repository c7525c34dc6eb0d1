"""Every analysis script has a command line: `--help` exits 0 without a traceback, figure and table
scripts take `--out DIR`, and a missing log ends a script with one line and a non-zero status. Library
modules (no __main__ block) print nothing when run."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest
from script_runner import Completed, run_script

ANALYSIS = Path(__file__).resolve().parents[1]
# analysis/*.py and analysis/figures/*.py, as paths relative to analysis/
FILES = sorted([p.name for p in ANALYSIS.glob("*.py") if p.name != "conftest.py"] +
               [f"figures/{p.name}" for p in (ANALYSIS / "figures").glob("*.py")])


def is_script(name: str) -> bool:
    return 'if __name__ == "__main__":' in (ANALYSIS / name).read_text()


@functools.lru_cache(maxsize=None)
def help_of(name: str) -> Completed:
    """`python NAME --help`, once per script for both tests below, in an empty folder of its own, in this process
    (script_runner.py: a Python start with NumPy, h5py and matplotlib imported was most of a script's test)."""
    with tempfile.TemporaryDirectory() as d:
        return run_script(ANALYSIS / name, "--help", cwd=Path(d))


@pytest.mark.parametrize("name", FILES)
def test_help_exits_zero(name):
    r = help_of(name)
    assert r.returncode == 0, f"{name} --help exited {r.returncode}: {r.stderr[-500:]}"
    assert "Traceback" not in r.stderr
    if is_script(name):
        assert r.stdout.startswith("usage:"), f"{name} --help printed no usage line"
    else:
        assert r.stdout == "", f"{name} is a library module but printed on its own: {r.stdout[:200]}"


FIGURE_SCRIPTS = [n for n in FILES if Path(n).name.startswith(("fig_", "table_"))]


@pytest.mark.parametrize("name", FIGURE_SCRIPTS)
def test_figure_script_takes_out_and_fails_in_one_line(name, tmp_path):
    assert "--out" in help_of(name).stdout
    missing = tmp_path / "no_such_log.h5"
    r = run_script(ANALYSIS / name, str(missing), "--out", str(tmp_path / "figs"), cwd=tmp_path)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(missing) in lines[0], r.stderr[-800:]
