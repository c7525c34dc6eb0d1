"""The notebooks `make report` writes run where they are written: opened from report/ (not the
repository root), their first cells still find analysis/notebook_support and the figures."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import py2nb

ROOT = Path(__file__).resolve().parents[2]


def test_report_notebook_imports_its_support_from_another_directory(tmp_path):
    out = tmp_path / "report" / "seed000.ipynb"
    py2nb.convert(ROOT / "notebooks_export" / "seed000_gaugefix_lrm.py", out, figures=tmp_path / "figs")
    nb = json.loads(out.read_text())
    code = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for c in nb["cells"] if c["cell_type"] == "code"]
    # The preamble and the notebook's own import cell, run where Jupyter would run them: in report/.
    script = "\n".join(code[:2]) + "\nimport notebook_support\nprint('figures', os.environ['GAUGELAB_FIGURES'])\n"
    env = {"PATH": "/usr/bin:/bin"}  # no GAUGELAB_ROOT from make report
    r = subprocess.run([sys.executable, "-c", script], cwd=out.parent, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"figures {tmp_path / 'figs'}" in r.stdout


def test_report_summaries_round_floats_for_reading():
    import numpy as np

    import notebook_support as ns

    assert ns.fmt(0.12345678901234567) == "0.1235"
    assert ns.fmt(np.float64(4.98e11)) == "4.98e+11"
    assert ns.fmt(3) == "3" and ns.fmt("A") == "A"
