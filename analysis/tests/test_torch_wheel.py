"""scripts/torch_wheel.py answers what an `import torch` would have (present, the CMake prefix, the version with its
local tag) from the wheel's files, on a fake site directory: whole, cut short (no pip record) and without LibTorch.
Where the venv's torch is at hand, its answers equal the import's."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "torch_wheel.py"
VENV_PY = Path(os.environ.get("GAUGELAB_VENV", Path.home() / ".cache" / "gaugelab" / "venv")) / "bin" / "python"


def fake_site(tmp_path, record=True, libtorch=True):
    site = tmp_path / "site"
    pkg = site / "torch"
    (pkg / "share" / "cmake" / "Torch").mkdir(parents=True)
    (pkg / "lib").mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('the fake torch must not be imported')\n")
    (pkg / "version.py").write_text("__all__ = ['__version__']\n__version__ = '2.9.1+cu130'\n")
    (pkg / "share" / "cmake" / "Torch" / "TorchConfig.cmake").write_text("")
    if libtorch:
        (pkg / "lib" / "libtorch_cpu.so").write_text("")
    dist = site / "torch-2.9.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1\n")
    if record:
        (dist / "RECORD").write_text("torch/__init__.py,,\n")
    return site


def ask(site, what):
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, "-S", str(SCRIPT), what], env=env, capture_output=True, text=True, timeout=30)


def test_a_whole_wheel_is_present_with_its_prefix_and_tagged_version_without_an_import(tmp_path):
    site = fake_site(tmp_path)
    assert ask(site, "present").returncode == 0  # the fake __init__ raises if imported
    r = ask(site, "prefix")
    assert r.returncode == 0 and r.stdout.strip() == str(site / "torch" / "share" / "cmake")
    assert ask(site, "version").stdout.strip() == "2.9.1+cu130"


@pytest.mark.parametrize("cut", ["record", "libtorch"])
def test_a_wheel_cut_short_is_absent_and_has_no_prefix(tmp_path, cut):
    site = fake_site(tmp_path, record=cut != "record", libtorch=cut != "libtorch")
    assert ask(site, "present").returncode == 1
    r = ask(site, "prefix")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("torch_wheel.py: error: no whole torch wheel in ")


def test_a_wrong_question_is_a_usage_error(tmp_path):
    r = ask(fake_site(tmp_path), "where")
    assert r.returncode == 2 and "usage: torch_wheel.py present|prefix|version" in r.stderr


def test_the_venvs_answers_equal_the_imports():
    if not VENV_PY.exists():
        pytest.skip(f"SKIPPED: no venv Python at {VENV_PY}")
    imported = subprocess.run([str(VENV_PY), "-W", "ignore", "-c",
                               "import torch, torch.utils; print(torch.utils.cmake_prefix_path); print(torch.__version__)"],
                              capture_output=True, text=True, timeout=120)
    if imported.returncode != 0:
        pytest.skip(f"SKIPPED: the venv's torch does not import: {imported.stderr.strip()[-200:]}")
    read = [subprocess.run([str(VENV_PY), str(SCRIPT), w], capture_output=True, text=True, timeout=30).stdout.strip()
            for w in ("prefix", "version")]
    assert read == imported.stdout.split()
