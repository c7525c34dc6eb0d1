"""pytest set-up for the Python bindings: `import gaugelab` from the build (GAUGELAB_BUILD_DIR, default
build/; the module lives in <build>/python/gaugelab). Skipped, with the reason, where it is not built."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build")) / "python"
sys.path.insert(0, str(PACKAGE_DIR))

try:
    import gaugelab  # noqa: F401
    WHY_NOT = None
except ImportError as e:
    WHY_NOT = f"SKIPPED: the gaugelab Python module is not built in {PACKAGE_DIR} ({e}); configure with pybind11 (GAUGELAB_PYTHON=ON)"


def pytest_collection_modifyitems(config, items):
    if WHY_NOT:
        for item in items:
            if "python/tests" in str(item.fspath).replace(os.sep, "/"):
                item.add_marker(pytest.mark.skip(reason=WHY_NOT))
