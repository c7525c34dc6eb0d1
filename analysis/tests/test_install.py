"""`pip install ./analysis` installs the run-log reader: after it, `import gaugelab_log` works from
any directory, in a fresh virtual environment, and reads a log. The install is offline (no build
isolation; setuptools, numpy and h5py come from the system site packages)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE

ANALYSIS = Path(__file__).resolve().parents[1]
ROOT = ANALYSIS.parent


def test_pip_install_then_import_from_elsewhere(tmp_path, example_log):
    try:
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
    except ImportError as e:
        pytest.skip(f"SKIPPED: no offline build backend for pip here ({e})")
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], capture_output=True,
                       text=True, timeout=300)
    py = venv / "bin" / "python"
    if r.returncode != 0 or not py.exists():
        pytest.skip(f"SKIPPED: cannot create a virtual environment here: {(r.stderr or r.stdout).strip()[-300:]}")
    src = tmp_path / "analysis"  # a copy, so the build leaves nothing in the source tree
    shutil.copytree(ANALYSIS, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", str(src)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import gaugelab_log as gl\n"
            f"f = gl.open_log({str(example_log)!r})\n"
            "print(gl.__file__)\n"
            "print(repr(float(gl.series(f)['loss'][-1])))\n")
    r = subprocess.run([str(py), "-c", code], cwd=elsewhere, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    where, last = r.stdout.split()
    assert Path(where).resolve().is_relative_to(venv.resolve()), f"imported from {where}, not the venv"
    assert float(last) == EXAMPLE["loss"][-1]


def test_reader_version_is_the_project_version():
    import gaugelab_log

    m = re.search(r"project\(gaugelab VERSION (\S+)", (ROOT / "CMakeLists.txt").read_text())
    assert m, "CMakeLists.txt has no project(gaugelab VERSION ...)"
    assert gaugelab_log.__version__ == m.group(1)
