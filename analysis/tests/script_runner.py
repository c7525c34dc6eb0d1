"""An analysis script run as `python SCRIPT ARGV...` runs it, in this test process: its exit status, standard
output and standard error, as subprocess.run(capture_output=True, text=True) gives them.

Why: most of a script's test is a Python start with NumPy, h5py and matplotlib imported (~0.5 CPU-s each time);
here those modules are imported once per test worker. What stays the script's own: it runs as __main__ from its
own path with its own argv, in the folder given, with its folder first on sys.path, as a new interpreter would.
What a separate interpreter would also give and this does not: fresh module state (the analysis modules are
imported once and shared) and the start-up itself; tests that need those run the script as a process.
"""
from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class Completed:
    """subprocess.CompletedProcess's fields that the tests read."""
    returncode: int
    stdout: str
    stderr: str


def run_script(script: Path, *argv: str, cwd: Path, env: dict[str, str] | None = None,
               unset: tuple[str, ...] = ()) -> Completed:
    """Runs `script` as __main__ with sys.argv = [script, *argv] in `cwd`. SystemExit gives the status as the
    interpreter would (None -> 0, an int -> itself, anything else printed to stderr -> 1); any other exception is
    printed as the interpreter prints it (a traceback) and gives 1; a KeyboardInterrupt goes on to the caller.
    `env`: variables set for the run; `unset`: variables removed for it. The process's working folder, argv,
    sys.path, environment, warning filters, NumPy's error handling and matplotlib's figures are restored."""
    script = Path(script).resolve()  # as given from the caller's folder, before the script's own
    out, err = io.StringIO(), io.StringIO()
    saved_cwd, saved_argv, saved_path = os.getcwd(), sys.argv, list(sys.path)
    saved_env = {k: os.environ.get(k) for k in [*(env or {}), *unset]}
    code = 0
    try:
        for k in unset:
            os.environ.pop(k, None)
        os.environ.update(env or {})
        os.chdir(cwd)
        sys.argv = [str(script), *map(str, argv)]
        sys.path.insert(0, str(script.parent))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings(), \
                np.errstate():
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as e:
                if e.code is None:
                    code = 0
                elif isinstance(e.code, int):
                    code = e.code
                else:
                    print(e.code, file=sys.stderr)
                    code = 1
            except Exception:  # noqa: BLE001 - the interpreter's own report of an uncaught exception
                traceback.print_exc()
                code = 1
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
    return Completed(code, out.getvalue(), err.getvalue())
