"""The built gaugelab module for the binding tests: <build>/python (GAUGELAB_BUILD_DIR, default build/).
A plain helper module, not a conftest.py: the analysis tests import theirs as `conftest`, and one pytest
run collects both folders."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build")) / "python"


def import_gaugelab():
    """The gaugelab module, or the calling test module skipped with the reason when it is not built."""
    sys.path.insert(0, str(PACKAGE_DIR))
    return pytest.importorskip("gaugelab", reason=f"SKIPPED: the gaugelab Python module is not built in {PACKAGE_DIR} "
                                                  "(configure with pybind11 installed: GAUGELAB_PYTHON=ON)")
