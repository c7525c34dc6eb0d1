"""Puts analysis/ (the log reader, the plotting conventions, the statistics, the figure declarations) on the
import path of a figure script run as `python analysis/figures/SCRIPT.py`."""
import sys
from pathlib import Path

_ANALYSIS = str(Path(__file__).resolve().parent.parent)
if _ANALYSIS not in sys.path:
    sys.path.insert(0, _ANALYSIS)
