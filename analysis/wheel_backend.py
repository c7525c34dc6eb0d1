"""The PEP 517 build backend of `pip install ./analysis` (pyproject.toml): writes the run-log reader's
wheel with zipfile alone, reading the source files and writing only into the folder pip names.

Why not setuptools: it writes build/ and *.egg-info/ into the source folder, so an install left files
in the clone and failed from a read-only one. This backend needs nothing installed (no setuptools,
no wheel), so the install also works offline with or without build isolation.
"""
from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DIST = "gaugelab_analysis"  # the project name gaugelab-analysis, normalised for file names
MODULES = ("gaugelab_log.py", "h5_file_check.py")  # the reader and what it imports
SUMMARY = "Reader for gaugelab HDF5 run logs (SWMR-safe; series, heads, tables, arrays, summary)"
REQUIRES = ("numpy", "h5py")
EPOCH = (2020, 1, 1, 0, 0, 0)  # fixed member times: the same sources give the same wheel


def version() -> str:
    m = re.search(r'^__version__ = "([^"]+)"', (HERE / "gaugelab_log.py").read_text(), re.M)
    if not m:
        raise RuntimeError("gaugelab_log.py has no __version__")
    return m.group(1)


def metadata() -> str:
    lines = ["Metadata-Version: 2.1", "Name: gaugelab-analysis", f"Version: {version()}", f"Summary: {SUMMARY}",
             "Requires-Python: >=3.9", *(f"Requires-Dist: {r}" for r in REQUIRES)]
    return "\n".join(lines) + "\n"


def _dist_info() -> dict[str, bytes]:
    wheel = "Wheel-Version: 1.0\nGenerator: gaugelab wheel_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    info = f"{DIST}-{version()}.dist-info"
    return {f"{info}/METADATA": metadata().encode(), f"{info}/WHEEL": wheel.encode()}


def _wheel(directory: str, files: dict[str, bytes]) -> str:
    files = {**files, **_dist_info()}
    info = next(iter(k for k in files if k.endswith("/WHEEL"))).rsplit("/", 1)[0]
    digest = lambda b: base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()  # noqa: E731
    record = "".join(f"{k},sha256={digest(v)},{len(v)}\n" for k, v in files.items()) + f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()
    name = f"{DIST}-{version()}-py3-none-any.whl"
    with zipfile.ZipFile(Path(directory) / name, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in files.items():
            z.writestr(zipfile.ZipInfo(k, EPOCH), v, zipfile.ZIP_DEFLATED)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    return _wheel(wheel_directory, {m: (HERE / m).read_bytes() for m in MODULES})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    """`pip install -e ./analysis`: a .pth file that puts this folder on the path."""
    return _wheel(wheel_directory, {f"{DIST}.pth": f"{HERE}\n".encode()})


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    for k, v in _dist_info().items():
        (Path(metadata_directory) / k).parent.mkdir(parents=True, exist_ok=True)
        (Path(metadata_directory) / k).write_bytes(v)
    return f"{DIST}-{version()}.dist-info"


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


get_requires_for_build_editable = get_requires_for_build_sdist = get_requires_for_build_wheel


def build_sdist(sdist_directory, config_settings=None) -> str:
    base = f"{DIST}-{version()}"
    members = {f"{base}/{m}": (HERE / m).read_bytes() for m in (*MODULES, "wheel_backend.py", "pyproject.toml")}
    members[f"{base}/PKG-INFO"] = metadata().encode()
    with tarfile.open(Path(sdist_directory) / f"{base}.tar.gz", "w:gz") as t:
        for k, v in members.items():
            ti = tarfile.TarInfo(k)
            ti.size, ti.mtime, ti.mode = len(v), 0, 0o644
            t.addfile(ti, io.BytesIO(v))
    return f"{base}.tar.gz"
