#!/usr/bin/env python3
"""Run logs as TensorBoard event files (`gaugelab tensorboard`): one folder per run under --out, each
holding one events.out.tfevents.* file that TensorBoard reads (`tensorboard --logdir DIR`):

- every /series column as a scalar of its name at its step (NaN steps left out: a validation loss
  exists on evaluation steps only);
- every /heads dataset [record, layer, head] as scalars grouped under its name, one tag per head
  (s_q/layer0_head1, ...), at /heads/step;
- every /tables table as text (a Markdown table, its first TABLE_ROWS rows) and its numeric columns as
  scalars tables/<table>/<column> against the row number (merge-models' path, hessian's spectrum, ...);
- the settings (kind, command, every resolved setting) and the /summary as text, its numbers as
  scalars summary/<key> at the last step.

A RUN is what `gaugelab plot` takes: a log file or a run directory. A sweep log (or a toy log of several
seeds) is one folder per grid point and seed, DIR/<log>/<setting=value,...>. The file is written in
the TFRecord format TensorBoard reads (length, masked CRC-32C, Event protocol buffer, masked CRC-32C):
it needs neither TensorBoard nor TensorFlow installed.

Example: gaugelab tensorboard runs/train_A_s42 runs/sweep.h5 --out runs/tb   (then: tensorboard --logdir runs/tb)"""
from __future__ import annotations

import math
import os
import re
import socket
import struct
import time
from pathlib import Path

import numpy as np

import gaugelab_log as gl
import run_set

TABLE_ROWS = 200  # rows of a table shown as text (its numeric columns go out whole as scalars)
EVENTS_PREFIX = "events.out.tfevents."
FILE_VERSION = "brain.Event:2"

# --- the TFRecord framing and its checksum ---------------------------------------------------------

_CRC32C_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC32C_TABLE.append(_c)


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum of TFRecord files."""
    crc = 0xFFFFFFFF
    table = _CRC32C_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data: bytes) -> bytes:
    """One TFRecord: uint64 length, its masked CRC, the data, the data's masked CRC (little-endian)."""
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc(head)) + data + struct.pack("<I", masked_crc(data))


# --- the few protocol-buffer messages an event file needs (tensorflow/core/util/event.proto,
# --- framework/summary.proto, framework/tensor.proto) ---------------------------------------------

def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64 values go out as their two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _bytes(field: int, data: bytes) -> bytes:
    return _key(field, 2) + _varint(len(data)) + data


DT_STRING = 7  # tensorflow.DataType
FLT_MAX = float(np.finfo(np.float32).max)


def scalar_value(tag: str, v: float) -> bytes:
    """Summary.Value{tag = 1, simple_value = 2 (float)}."""
    # A finite value beyond float32's range (a diverging loss) is stored as ±inf, as a float32 cast gives, rather
    # than failing the export: struct.pack("<f") raises OverflowError on it.
    f32 = v if abs(v) <= FLT_MAX or not math.isfinite(v) else math.copysign(math.inf, v)
    return _bytes(1, tag.encode()) + _key(2, 5) + struct.pack("<f", f32)


def text_value(tag: str, text: str) -> bytes:
    """Summary.Value{tag = 1, metadata = 9 {plugin_data = 1 {plugin_name = 1: "text"}}, tensor = 8
    {dtype = 1: DT_STRING, tensor_shape = 2: {} (a scalar), string_val = 8}}: what the text plugin reads."""
    metadata = _bytes(1, _bytes(1, b"text"))
    tensor = _key(1, 0) + _varint(DT_STRING) + _bytes(2, b"") + _bytes(8, text.encode())
    return _bytes(1, tag.encode()) + _bytes(9, metadata) + _bytes(8, tensor)


def event(step: int, values: list[bytes] | None = None, wall_time: float | None = None, version: str | None = None) -> bytes:
    """Event{wall_time = 1 (double), step = 2 (int64), file_version = 3 | summary = 5 {value = 1 ...}}."""
    out = _key(1, 1) + struct.pack("<d", time.time() if wall_time is None else wall_time) + _key(2, 0) + _varint(step)
    if version is not None:
        out += _bytes(3, version.encode())
    if values:
        out += _bytes(5, b"".join(_bytes(1, v) for v in values))
    return out


# --- what a run log becomes ------------------------------------------------------------------------

def _cell(v) -> str:
    if isinstance(v, (float, np.floating)):
        return "—" if math.isnan(v) else f"{v:.6g}"
    if isinstance(v, bytes):
        v = v.decode(errors="replace")
    return str(v).replace("|", "\\|").replace("\n", " ")


def markdown(columns: dict, rows: int | None = None) -> str:
    """A Markdown table of equal-length columns (the first `rows` rows)."""
    names = list(columns)
    n = len(next(iter(columns.values()))) if columns else 0
    shown = n if rows is None else min(n, rows)
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(_cell(columns[c][i]) for c in names) + " |" for i in range(shown)]
    if shown < n:
        lines.append(f"\n({n - shown} more rows; the numeric columns are scalars tables/...)")
    return "\n".join(lines)


def settings_text(run: run_set.Run, command: str) -> str:
    rows = {"setting": ["kind", "command", *run.settings], "value": [run.kind, command, *run.settings.values()]}
    return markdown(rows)


def scalar_events(steps, named: dict[str, np.ndarray]) -> dict[int, list[bytes]]:
    """step -> the finite values of every tag at that step."""
    out: dict[int, list[bytes]] = {}
    for tag, y in named.items():
        y = np.asarray(y, dtype=float)
        for s, v in zip(steps, y):
            if math.isfinite(v):
                out.setdefault(int(s), []).append(scalar_value(tag, float(v)))
    return out


def numeric(column: np.ndarray) -> bool:
    return np.asarray(column).dtype.kind in "fiub"


def head_series(heads: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """/heads name [record, layer, head] -> one series per head, tagged name/layerL_headH (TensorBoard groups
    the tags of one name)."""
    out = {}
    for name, a in heads.items():
        if name == "step":
            continue
        for layer in range(a.shape[1]):
            for head in range(a.shape[2]):
                out[f"{name}/layer{layer}_head{head}"] = a[:, layer, head]
    return out


def run_events(run: run_set.Run, expanded: bool) -> list[bytes]:
    """The events of one run: settings, series, heads, tables, summary, in step order within each."""
    with gl.open_log(run.path) as f:
        prov = gl.provenance(f)
        heads = {} if expanded or run.kind not in gl.HEAD_KINDS else gl.heads(f)
        tables = {} if expanded else {t: gl.table(f, t) for t in gl.table_names(f)}
    wall = time.time()
    events = [event(0, wall_time=wall, version=FILE_VERSION),
              event(0, [text_value("settings", settings_text(run, str(prov.get("command", ""))))], wall)]
    steps = run.series.get("step", np.array([], dtype=np.int64))
    by_step = scalar_events(steps, {k: v for k, v in run.series.items() if k != "step"})
    if heads and len(heads.get("step", ())):
        for s, vals in scalar_events(heads["step"], head_series(heads)).items():
            by_step.setdefault(s, []).extend(vals)
    events += [event(s, vals, wall) for s, vals in sorted(by_step.items())]
    for name, cols in tables.items():
        if not cols:
            continue
        events.append(event(0, [text_value(f"tables/{name}", markdown(cols, TABLE_ROWS))], wall))
        nums = {f"tables/{name}/{c}": v for c, v in cols.items() if numeric(v)}
        rows = np.arange(len(next(iter(cols.values()))))
        events += [event(s, vals, wall) for s, vals in sorted(scalar_events(rows, nums).items())]
    if run.summary:
        last = int(steps[-1]) if len(steps) else 0
        text = markdown({"key": list(run.summary), "value": list(run.summary.values())})
        nums = [scalar_value(f"summary/{k}", float(v)) for k, v in run.summary.items()
                if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and math.isfinite(float(v))]
        events.append(event(last, [text_value("summary", text), *nums], wall))
    return events


def folder_name(text: str) -> str:
    """A folder name from a run's name or settings: path separators and control characters replaced."""
    return re.sub(r"[/\\\x00-\x1f]", "_", text).strip(". ") or "run"


def run_folders(arg, runs: list[run_set.Run]) -> list[str]:
    """A log of one run: its name; a log of several (a sweep's grid points and seeds): name/<settings that
    differ between them>."""
    if len(runs) == 1:
        return [folder_name(runs[0].name)]
    keys = run_set.differing(runs)
    keys = [k for k in keys if k != "seed"] + [k for k in keys if k == "seed"]  # the grid point, then the seed
    base = folder_name(runs[0].name.split("[")[0])
    return [f"{base}/{folder_name(run_set.label(r, keys) if keys else r.name)}" for r in runs]


def write_events(folder: Path, events: list[bytes]) -> Path:
    """Writes the event file atomically (a temporary name, then a rename) and removes this tool's older
    event files in the folder (a rerun with --force replaces, TensorBoard would show both)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(EVENTS_PREFIX + "*.gaugelab"):
        old.unlink()
    name = f"{EVENTS_PREFIX}{int(time.time())}.{socket.gethostname()}.{os.getpid()}.gaugelab"
    tmp = folder / ("." + name + ".tmp")
    with open(tmp, "wb") as out:
        for e in events:
            out.write(record(e))
    os.replace(tmp, folder / name)
    return folder / name


def options(argv: list[str] | None = None):
    ap = run_set.Parser(__doc__)
    ap.add_argument("runs", nargs="+", metavar="RUN", help="run log (.h5) or run directory holding log.h5")
    ap.add_argument("--out", required=True, metavar="DIR", help="folder of the event files, one subfolder per run")
    ap.add_argument("--force", action="store_true", help="write into an --out that exists and is not empty")
    a = ap.parse_args(argv)
    out = Path(a.out)
    if out.exists() and not out.is_dir():
        ap.error(f"--out {a.out}: is a file; name a folder")
    if out.is_dir() and any(out.iterdir()) and not a.force:
        ap.error(f"--out {a.out}: exists and is not empty; add --force to write into it")
    return a


def main(argv: list[str] | None = None) -> int:
    a = options(argv)
    out = Path(a.out)
    loaded = [(arg, run_set.load_all(arg)) for arg in a.runs]  # every log read before anything is written
    seen: dict[str, int] = {}
    for arg, runs in loaded:
        for run, name in zip(runs, run_folders(arg, runs)):
            seen[name] = seen.get(name, 0) + 1
            folder = out / (name if seen[name] == 1 else f"{name}_{seen[name]}")
            path = write_events(folder, run_events(run, expanded=len(runs) > 1))
            print(f"wrote {path}", flush=True)
    print(f"view: tensorboard --logdir {out}")
    return 0


if __name__ == "__main__":
    run_set.cli_main(main, "tensorboard_export.py")
