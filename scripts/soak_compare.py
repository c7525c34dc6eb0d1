#!/usr/bin/env python3
"""Compares two run logs value for value (used by scripts/soak-resume.sh).

Every dataset of REF must exist in GOT with the same shape and the same bits, except those whose path
matches --ignore (wall-clock quantities) and /tables/processes: that table records which processes trained
the run (a resumed run has a row per process that reached its end, a killed one none), so it differs by
design; of it, only the last row's end_step must equal the reference's (both runs reached the same step).
For the same reason /commit (the rows each group has on disk, in the order of its "groups" attribute) is
compared without its tables/processes entry.
Prints one line; exit 0 identical, 1 different, 2 unreadable.
"""
import argparse
import json
import re
import sys

import h5py
import numpy as np


PROCESSES = "tables/processes/"
COMMIT = "commit"


def without_processes(ds, values):
    """/commit's values without the tables/processes entry (its groups attribute names each entry)."""
    groups = ds.attrs.get("groups")
    if groups is None:
        return values
    names = json.loads(groups.decode() if isinstance(groups, bytes) else str(groups))
    keep = [i for i, g in enumerate(names) if g != PROCESSES.rstrip("/")]
    return values[keep] if len(names) == len(values) else values


def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj) if isinstance(obj, h5py.Dataset) else None)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("ref")
    ap.add_argument("got")
    ap.add_argument("--ignore", default=r"tokens_per_s|wall|elapsed|seconds|_time|time_", help="regex of dataset paths to skip")
    a = ap.parse_args()
    skip = re.compile(a.ignore)
    try:
        with h5py.File(a.ref, "r") as fr, h5py.File(a.got, "r") as fg:
            dr, dg = datasets(fr), datasets(fg)
            compared = 0
            for name, ds in sorted(dr.items()):
                if name.startswith(PROCESSES):
                    continue
                if skip.search(name):
                    continue
                if name not in dg:
                    print(f"different: {name} missing in {a.got}")
                    return 1
                x, y = ds[()], dg[name][()]
                if name == COMMIT:
                    x, y = without_processes(ds, x), without_processes(dg[name], y)
                if x.shape != y.shape:
                    print(f"different: {name} has shape {y.shape}, reference {x.shape}")
                    return 1
                same = (x == y) | ((x != x) & (y != y)) if x.dtype.kind == "f" else (x == y)
                if not np.all(same):
                    i = int(np.argmin(np.ravel(same)))
                    print(f"different: {name} at flat index {i}: {np.ravel(y)[i]!r} vs reference {np.ravel(x)[i]!r}")
                    return 1
                compared += 1
            end = PROCESSES + "end_step"
            if end in dr:
                if end not in dg or dg[end].shape[0] == 0:
                    print(f"different: {end} missing or empty in {a.got}")
                    return 1
                if dg[end][-1] != dr[end][-1]:
                    print(f"different: the last process ended at step {dg[end][-1]}, reference {dr[end][-1]}")
                    return 1
                compared += 1
    except OSError as e:
        print(f"unreadable: {e}")
        return 2
    print(f"identical: {compared} datasets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
