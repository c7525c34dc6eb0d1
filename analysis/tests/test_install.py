"""`pip install ./analysis` installs the run-log reader: after it, `import gaugelab_log` works from
any directory, in a fresh virtual environment, and reads a log. The install is offline (the build
backend, wheel_backend.py, needs no package; numpy and h5py come from the system site packages) and
writes nothing into the source folder, which may be read-only."""
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


def listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*"))


@pytest.mark.parametrize("isolation", ["--no-build-isolation", "--isolated"])
def test_pip_install_then_import_from_elsewhere(tmp_path, example_log, isolation):
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], capture_output=True,
                       text=True, timeout=300)
    py = venv / "bin" / "python"
    if r.returncode != 0 or not py.exists():
        pytest.skip(f"SKIPPED: cannot create a virtual environment here: {(r.stderr or r.stdout).strip()[-300:]}")
    src = tmp_path / "analysis"  # a copy (read-only where we are not root): the install must not write into it
    shutil.copytree(ANALYSIS, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    before = listing(src)
    for p in [src, *src.rglob("*")]:
        p.chmod(p.stat().st_mode & ~0o222)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:  # with pip's default build isolation too (--isolated only ignores pip's user configuration): no index needed
        r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps", isolation, str(src)],
                           capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    finally:
        for p in [src, *src.rglob("*")]:
            p.chmod(p.stat().st_mode | 0o200)
    assert r.returncode == 0, r.stderr[-2000:]
    assert listing(src) == before, "the install wrote into the source folder"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import gaugelab_log as gl\n"
            f"f = gl.open_log({str(example_log)!r})\n"
            "print(gl.__file__)\n"
            "import h5_file_check\n"
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
