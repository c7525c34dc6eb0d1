"""Keeps HDF5 from waiting on a damaged run log (used by gaugelab_log.open_log).

HDF5 opens a file for SWMR reading without its truncated-file check (a live writer's file may lag
its own allocation), and a SWMR reader retries a metadata block whose checksum fails, sleeping
between attempts with the sleep doubling from 1 ns: with the default of 100 attempts the last sleeps
are years long. pip's h5py (HDF5 2.0) then hangs at 0 % CPU on a log cut to half; Debian's (HDF5 1.10)
refuses it in its plain-open fallback. Two guards, for both:

- truncation(): a log whose superblock says no writer has it open (consistency flags clear) and whose
  recorded end of file lies past the file's size is refused before HDF5 touches it. A log with the
  flags set (a live writer, or one killed) is left to HDF5: its size may lag its allocation.
- bounded_fapl(): a file access list with H5Pset_metadata_read_attempts(24), the C++ reader's bound
  (src/io/h5_helpers.hpp: at most 2^24 ns, 17 ms, of sleeps per block, far longer than a live writer
  takes to finish one). h5py does not wrap that call, so it is made through ctypes on the HDF5 library
  h5py has loaded (found in /proc/self/maps, else in h5py's bundled-library folder); where it cannot
  be found the open falls back to h5py's default.
"""
from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

import h5py

METADATA_READ_ATTEMPTS = 24  # src/io/h5_helpers.hpp kMetadataReadAttempts
SIGNATURE = b"\x89HDF\r\n\x1a\n"
UNDEFINED = 0xFFFFFFFFFFFFFFFF
WRITE_FLAGS = 0x01 | 0x04  # superblock v3 consistency flags: open for write, open for SWMR write


def superblock(path) -> dict | None:
    """{'version', 'flags', 'base', 'eof'} from the superblock (at 0, 512, 1024, ... for a user block),
    or None where no signature or an unknown layout is found."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        at = 0
        while at + 64 <= size:
            fh.seek(at)
            head = fh.read(96)
            if head[:8] == SIGNATURE:
                return _parse(head)
            at = 512 if at == 0 else at * 2
    return None


def _parse(head: bytes) -> dict | None:
    version = head[8]
    if version in (0, 1):
        offsets, flags_at, addr_at = head[13], 20, 24 if version == 0 else 28
        flags = struct.unpack_from("<I", head, flags_at)[0]
        fields = ("base", "free_space", "eof")
    elif version in (2, 3):
        offsets, flags, addr_at = head[9], head[11], 12
        fields = ("base", "extension", "eof")
    else:
        return None
    if offsets not in (4, 8) or addr_at + offsets * len(fields) > len(head):
        return None
    fmt = "<" + ("I" if offsets == 4 else "Q") * len(fields)
    addr = dict(zip(fields, struct.unpack_from(fmt, head, addr_at)))
    return {"version": version, "flags": flags, "base": addr["base"], "eof": addr["eof"]}


def truncation(path) -> str | None:
    """Why a closed log is cut short ('truncated: N of the M bytes ...'), or None."""
    sb = superblock(path)
    if sb is None or sb["flags"] & WRITE_FLAGS or sb["eof"] in (UNDEFINED, 0xFFFFFFFF):
        return None
    end = sb["base"] + sb["eof"]
    size = Path(path).stat().st_size
    if size >= end:
        return None
    return (f"truncated: {size} of the {end} bytes its superblock records (a copy or download cut "
            "short?); copy the log again")


_setter = None


def _hdf5_library() -> str | None:
    """The path of the HDF5 library h5py has loaded."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                name = os.path.basename(line.split()[-1]) if line.strip() else ""
                if name.startswith("libhdf5") and "_hl" not in name and ".so" in name:
                    return line.split()[-1]
    except OSError:
        pass
    root = Path(h5py.__file__).parent
    for folder in (root.parent / "h5py.libs", root / ".dylibs"):
        for lib in sorted(folder.glob("libhdf5*")) if folder.is_dir() else ():
            if "_hl" not in lib.name:
                return str(lib)
    return None


def _read_attempts_setter():
    global _setter
    if _setter is None:
        _setter = False
        lib = _hdf5_library()
        if lib:
            try:
                fn = ctypes.CDLL(lib).H5Pset_metadata_read_attempts
                fn.argtypes, fn.restype = [ctypes.c_int64, ctypes.c_uint], ctypes.c_int
                _setter = fn
            except (OSError, AttributeError):
                pass
    return _setter or None


def bounded_fapl():
    """A SWMR-capable file access list (libver latest) with bounded metadata retries, or None."""
    setter = _read_attempts_setter()
    if setter is None:
        return None
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    if setter(fapl.id, METADATA_READ_ATTEMPTS) < 0:
        return None
    return fapl


def read_to_end_of_file(file_id: int) -> bool:
    """Sets an open file's end of allocation to its real end of file (H5Fincrement_filesize with 0, in
    memory only): a writer killed in ordinary mode may have flushed metadata past the end its superblock
    records. False where the call is not at hand or fails."""
    lib = _hdf5_library()
    if not lib:
        return False
    try:
        fn = ctypes.CDLL(lib).H5Fincrement_filesize
        fn.argtypes, fn.restype = [ctypes.c_int64, ctypes.c_uint64], ctypes.c_int
    except (OSError, AttributeError):
        return False
    return fn(file_id, 0) >= 0


def ignore_write_mark_fapl():
    """A read-only file access list that ignores the superblock's "open for write" mark (HDF5's
    clear_status_flags, set through the C library h5py loaded; in memory only, nothing is written),
    or None. A writer killed while it held the log open in ordinary mode (the C++ writer adding
    /summary) leaves that mark, which both a SWMR read open and a plain one refuse; a live writer in
    that mode still holds the file lock, which refuses this open too."""
    lib = _hdf5_library()
    if not lib:
        return None
    try:
        fn = ctypes.CDLL(lib).H5Pset
        fn.argtypes, fn.restype = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p], ctypes.c_int
    except (OSError, AttributeError):
        return None
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    flag = ctypes.c_bool(True)  # hbool_t is C's bool
    if fn(fapl.id, b"clear_status_flags", ctypes.byref(flag)) < 0:
        return None
    return fapl
