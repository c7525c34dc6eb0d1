"""What the venv's torch wheel holds, read from its files without importing torch: an `import torch` costs ~2 CPU-s
(measured 2.2 s on the development machine's cores), and the set-up asked it five times before `make test` built
anything (the presence check, install-deps.sh's check and version line, the CMake prefix, the module's version check).

    <venv>/bin/python scripts/torch_wheel.py present   exit 0 when the wheel is installed whole (below), else 1
    <venv>/bin/python scripts/torch_wheel.py prefix    torch.utils.cmake_prefix_path's value: <package>/share/cmake
    <venv>/bin/python scripts/torch_wheel.py version   the wheel's version, as torch.__version__ gives it (2.15.0+cu132)

"Whole": pip's record of the install (the distribution's RECORD, written when the install ends), the package's
__init__.py, LibTorch's CMake package and libtorch_cpu.so, the library gaugelab links. A wheel that is whole but
cannot be imported (a broken dependency) fails later at its first import, with Python's own message.
Run with the venv's interpreter: the answer is about the Python that runs it."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path


def package_dir() -> Path | None:
    spec = importlib.util.find_spec("torch")
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def whole() -> bool:
    pkg = package_dir()
    if pkg is None:
        return False
    try:
        dist = importlib.metadata.distribution("torch")
    except importlib.metadata.PackageNotFoundError:
        return False
    recorded = dist.read_text("RECORD") is not None
    return recorded and all((pkg / p).is_file() for p in ("__init__.py", "share/cmake/Torch/TorchConfig.cmake",
                                                           "lib/libtorch_cpu.so"))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("present", "prefix", "version"):
        print("usage: torch_wheel.py present|prefix|version", file=sys.stderr)
        return 2
    if not whole():
        if argv[0] != "present":
            print(f"torch_wheel.py: error: no whole torch wheel in {sys.prefix} (pip install torch, or make deps)",
                  file=sys.stderr)
        return 1
    if argv[0] == "prefix":
        print(package_dir() / "share" / "cmake")
    elif argv[0] == "version":  # torch/version.py's, with the build's local tag (the metadata's has none)
        version_py = package_dir() / "version.py"
        text = version_py.read_text() if version_py.is_file() else ""
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        print(found.group(1) if found else importlib.metadata.version("torch"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
