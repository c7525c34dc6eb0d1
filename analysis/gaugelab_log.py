"""Read gaugelab HDF5 run logs (schema: src/io/run_log.hpp, DESIGN §2).

    f = open_log("runs/relu.h5")          # SWMR reader: works on live and killed logs too
    f = open_log("runs/train_A")           # a run directory: its log.h5 (or its one .h5, e.g. merge.h5)
    provenance(f)["config"]["lr"]          # root attributes, config parsed from JSON
    s = series(f); s["step"], s["loss"]    # 1-D arrays, trimmed to a common length
    table(f, "runs")["lr"]                 # one array per column; strings decoded to str
    heads(f)["s_q"]                        # [record, layer, head]
    array(f, "spectrum"), summary(f)

A figure script calls require(path, made_by="gaugelab toy relu --out ...") first, so a missing
log fails with the command that makes it. Interpreter: /usr/bin/python3 (Debian h5py, numpy); pip's
h5py works the same.

A damaged log fails in bounded time, never waits: a closed log shorter than the end its superblock
records (a copy cut short) is refused before HDF5 reads it (h5_file_check.py), and the SWMR reader's
metadata checksum retries are bounded as in the C++ reader (HDF5 sleeps between retries, doubling,
so its default of 100 never ends on a damaged file).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import h5py
import numpy as np

import h5_file_check

__version__ = "0.1.0"  # the gaugelab version this reader ships with (CMakeLists.txt project VERSION)
GROUPS = ("series", "heads", "tables", "arrays", "summary")
HEAD_KINDS = ("gpt2/train", "gpt2/inspect")  # the logs that can hold /heads records (the C++ writers of them)


class LogError(RuntimeError):
    """A run log that is missing, unreadable, or lacks what was asked for."""


def log_path(arg) -> Path:
    """A RUN argument as a log file: a file as given; a directory's log.h5 (gaugelab train --out DIR),
    else its only .h5 file (merge-models writes DIR/merge.h5)."""
    p = Path(arg)
    if not p.is_dir():
        return p
    if (p / "log.h5").exists():
        return p / "log.h5"
    logs = sorted(p.glob("*.h5"))
    if len(logs) == 1:
        return logs[0]
    held = f"it holds {', '.join(q.name for q in logs)}" if logs else "it holds no .h5 file"
    raise LogError(f"{p}: a directory without log.h5 ({held}); name the log file")


def require(path, made_by: str = "gaugelab ...") -> Path:
    """Returns the log file of `path` (a file, or a run directory) if it holds a complete HDF5 file;
    otherwise raises LogError naming the command that makes it."""
    p = log_path(path)
    if not p.exists():
        raise LogError(f"{p}: run log not found; make it with: {made_by}")
    if not h5py.is_hdf5(p):
        raise LogError(f"{p}: not an HDF5 file; remake it with: {made_by}")
    problem = h5_file_check.truncation(p)
    if problem:
        raise LogError(f"{p}: {problem}")
    return p


def _is_lock_error(message: str) -> bool:
    """HDF5's refusal because a writer holds the file: 'unable to lock file' (file locking) or 'file is
    already open for write' (consistency flags of a writer that has not started SWMR). Not merely any
    'lock' in the text: 'sblock->base_addr' appears in the truncated-file message."""
    m = message.lower()
    return "unable to lock file" in m or "already open for write" in m


def _swmr_open(p: Path) -> h5py.File:
    """A SWMR read open whose metadata retries are bounded (h5_file_check.bounded_fapl), else h5py's."""
    fapl = h5_file_check.bounded_fapl()
    if fapl is None:
        return h5py.File(p, "r", libver="latest", swmr=True)
    return h5py.File(h5py.h5f.open(os.fsencode(p), h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ, fapl=fapl))


def _open_ignoring_write_mark(p: Path) -> h5py.File | None:
    """The third open (h5_file_check.ignore_write_mark_fapl): a log whose writer died holding it open
    in ordinary mode, read up to its real end of file (h5_file_check.read_to_end_of_file); None where
    that open fails too (a live writer's lock) or cannot be asked for."""
    fapl = h5_file_check.ignore_write_mark_fapl()
    if fapl is None:
        return None
    try:
        fid = h5py.h5f.open(os.fsencode(p), h5py.h5f.ACC_RDONLY, fapl=fapl)
    except OSError:
        return None
    if not h5_file_check.read_to_end_of_file(fid.id):
        fid.close()
        return None
    return h5py.File(fid)


def open_log(path) -> h5py.File:
    """Opens a run log (a file, or a run directory as `log_path` resolves it) read-only as a SWMR reader
    (libver="latest"), so a log still being written can be read; falls back to a plain read-only open
    for files not written for SWMR."""
    p = require(path, "a gaugelab verb with --out")
    try:
        f = _swmr_open(p)
    except OSError:
        try:
            f = h5py.File(p, "r")
        except OSError as e:
            # only the write mark of a dead writer is worth a third open (a live one's lock refuses it too)
            f = _open_ignoring_write_mark(p) if "already open for write" in str(e).lower() else None
            if f is None:
                hint = " (a writer has it open and has not started SWMR yet)" if _is_lock_error(str(e)) else ""
                raise LogError(f"{p}: cannot open run log{hint}: {e}") from None
    try:
        missing = [g for g in GROUPS if g not in f]
    except (OSError, KeyError, RuntimeError) as e:
        f.close()
        raise LogError(f"{p}: cannot read the log's groups (damaged?): {e}") from None
    if missing:
        f.close()
        raise LogError(f"{p}: not a gaugelab run log (no group /{missing[0]})")
    return f


def _text(v):
    """A stored string as str. A path may hold any byte (a Linux file name need not be UTF-8), so a byte that
    is not UTF-8 becomes the surrogate Python itself gives it in a file name (os.fsdecode): the same path."""
    return v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else v


def _readable(f: h5py.File) -> None:
    """Refuses a closed log in one line (h5py's own error names no file: 'Not a location')."""
    if not isinstance(f, h5py.File):
        raise LogError(f"not an open run log: {type(f).__name__} (open one with gaugelab_log.open_log)")
    if not f.id.valid:
        raise LogError("the run log is closed: read it inside `with open_log(path) as f:`, or open it again")


def _scalar(v):
    """An attribute value as a plain Python str, int or float."""
    v = _text(v)
    if isinstance(v, np.generic):
        return v.item()
    return v


def _dataset(f: h5py.File, where: str, listed_in: str | None = None) -> h5py.Dataset:
    """The dataset /where. Missing: a LogError naming it, and, when the log's own member list (`listed_in`)
    names it, saying the log is damaged."""
    try:
        present = where in f
    except (OSError, RuntimeError) as e:
        raise LogError(f"{f.filename}: cannot read /{where} (the log is damaged): {e}") from None
    if not present:
        if listed_in:
            raise LogError(f"{f.filename}: /{where} is missing although {listed_in} lists it (the log is damaged)")
        raise LogError(f"{f.filename}: no dataset /{where} in this log")
    try:
        ds = f[where]
        if f.swmr_mode:
            ds.refresh()  # see rows flushed since the file was opened
    except (OSError, RuntimeError) as e:
        raise LogError(f"{f.filename}: cannot read /{where} (the log is damaged): {e}") from None
    return ds


def _order(f: h5py.File, group: str, attr: str) -> list[str]:
    """Declared member order (JSON list attribute written by the C++ writer), else sorted names."""
    g = f[group]
    if attr in g.attrs:
        return list(json.loads(_text(g.attrs[attr])))
    return sorted(k for k in g.keys() if k != "step")


def _require_stored(f: h5py.File, ds: h5py.Dataset, where: str, n: int) -> None:
    """Refuses to read n rows the file does not hold (the C++ reader's rule, io/run_log_reader.cpp): a damaged or
    grown extent can claim 10^8 rows of a log of kilobytes, and reading them filled gigabytes with fill values
    (226 s and 14 GB for `gaugelab compare` on one log). Logs are never compressed, so the allocated storage
    bounds what is there, up to one chunk (a SWMR writer extends a dataset, then writes the chunk)."""
    per_row = ds.dtype.itemsize * int(np.prod(ds.shape[1:], dtype=np.int64))
    chunk = ds.dtype.itemsize * int(np.prod(ds.chunks, dtype=np.int64)) if ds.chunks else 0
    if n * per_row > ds.id.get_storage_size() + chunk:
        raise LogError(f"{f.filename}: /{where} claims {n} rows but the file stores {ds.id.get_storage_size()} bytes "
                       "of it (the log is damaged)")


def _read(f: h5py.File, where: str, n: int | None = None, listed_in: str | None = None) -> np.ndarray:
    ds = _dataset(f, where, listed_in)
    if ds.shape:  # scalars hold their one value in the object header
        _require_stored(f, ds, where, ds.shape[0] if n is None else min(n, ds.shape[0]))
    try:
        data = ds[()] if n is None else ds[:n]
    except (OSError, RuntimeError) as e:
        raise LogError(f"{f.filename}: cannot read /{where} (the log is damaged): {e}") from None
    if ds.dtype.kind == "S":  # fixed-length strings: null padding is stripped by numpy
        return np.char.decode(data, "utf-8", "surrogateescape")
    if ds.dtype.kind == "O":  # variable-length strings
        return np.array([_text(v) for v in data], dtype=str)
    return data


def _committed(f: h5py.File, key: str) -> int | None:
    """/commit's row count for a group ("series", "heads", "tables/<name>", "arrays/<name>"): the rows the
    writer confirmed on disk after a successful flush (a failed flush can leave extents ahead of the data).
    None for a log without /commit (older versions) or a group it does not count."""
    if "commit" not in f:
        return None
    ds = _dataset(f, "commit")
    keys = list(json.loads(_text(ds.attrs["groups"]))) if "groups" in ds.attrs else []
    if key not in keys:
        return None
    rows = ds[()]
    i = keys.index(key)
    if len(rows) < len(keys) or rows[i] < 0:
        raise LogError(f"{f.filename}: /commit does not match its groups (the log is damaged)")
    return int(rows[i])


def _trimmed(f: h5py.File, wheres: dict[str, str], key: str, listed_in: str) -> dict[str, np.ndarray]:
    """Reads datasets sharing an index, cut to the shortest (a live log may have one a flush ahead) and to
    the rows /commit confirms; `listed_in` names the member list that declares them (for the message when
    one is missing)."""
    if not wheres:
        return {}
    n = min(len(_dataset(f, w, listed_in)) for w in wheres.values())
    c = _committed(f, key)
    if c is not None:
        n = min(n, c)
    return {k: _read(f, w, n, listed_in) for k, w in wheres.items()}


def provenance(f: h5py.File) -> dict:
    """Root attributes as a dict; 'config' holds config_json parsed."""
    _readable(f)
    out = {k: _scalar(v) for k, v in f.attrs.items()}
    if "config_json" not in out:
        raise LogError(f"{f.filename}: missing root attribute config_json")
    out["config"] = json.loads(out["config_json"])
    return out


def series(f: h5py.File) -> dict[str, np.ndarray]:
    """name -> 1-D array, including 'step'; all of one length."""
    _readable(f)
    names = _order(f, "series", "names")
    if not names and "step" not in f["series"]:
        return {}
    return _trimmed(f, {"step": "series/step", **{n: f"series/{n}" for n in names}}, "series", "/series names")


def heads(f: h5py.File) -> dict[str, np.ndarray]:
    """name -> [record, layer, head] array, including 'step' (1-D); all of one record count. Empty for a
    training or inspect log without records yet (or a model without Q/K multipliers); a LogError for a log
    of another kind (a toy, sweep, diag, merge or hessian log), which never has any."""
    _readable(f)
    names = _order(f, "heads", "names")
    if not names and "step" not in f["heads"]:
        kind = _text(f.attrs.get("kind", ""))
        if isinstance(kind, str) and kind and kind not in HEAD_KINDS:
            raise LogError(f"{f.filename}: a {kind} log has no per-head records (/heads is written by "
                           "gaugelab train and inspect only)")
        return {}
    return _trimmed(f, {"step": "heads/step", **{n: f"heads/{n}" for n in names}}, "heads", "/heads names")


def table_names(f: h5py.File) -> list[str]:
    _readable(f)
    return sorted(f["tables"].keys())


def table(f: h5py.File, name: str) -> dict[str, np.ndarray]:
    """column -> 1-D array in declared column order; string columns as str arrays."""
    _readable(f)
    if name not in f["tables"]:
        held = ", ".join(sorted(f["tables"].keys())) or "none"
        raise LogError(f"{f.filename}: no table /tables/{name} in this log (its tables: {held})")
    cols = _order(f, f"tables/{name}", "columns")
    return _trimmed(f, {c: f"tables/{name}/{c}" for c in cols}, f"tables/{name}", f"/tables/{name} columns")


def array(f: h5py.File, name: str) -> np.ndarray:
    _readable(f)
    if name not in f["arrays"]:
        held = ", ".join(sorted(f["arrays"].keys())) or "none"
        raise LogError(f"{f.filename}: no array /arrays/{name} in this log (its arrays: {held})")
    return _read(f, f"arrays/{name}", _committed(f, f"arrays/{name}"))


def summary(f: h5py.File) -> dict:
    """The /summary attributes as plain Python values (empty for a run that did not finish)."""
    _readable(f)
    return {k: _scalar(v) for k, v in f["summary"].attrs.items()}
