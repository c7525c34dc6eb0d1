"""scripts/gpu-grid.sh, the prepared call that runs the grids needing a GPU on a lent card: which grids it runs and
where their logs are packed from come from the manifest (GRIDS' roots, GPU_SETS), a CPU-declared grid keeps its
declared runs on the card (only appended settings: its device), an unknown grid is refused before anything runs,
and (with the build and the prepared corpus here) its mechanics at a tiny size on the CPU bring back every finished
run in one archive."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

import manifest
import results_ledger

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build"))
SCRIPT = ROOT / "scripts" / "gpu-grid.sh"


def default_grids() -> list[str]:
    m = re.search(r'^GRIDS=\$\{GRIDS:-"([^"]*)"\}', SCRIPT.read_text(), re.M)
    assert m, "gpu-grid.sh's GRIDS default"
    return m.group(1).split()


def device_of(args: list[str]) -> str:
    """The device a train command runs on: its last --device flag (a flag beats the config), else its config's."""
    flags = [args[i + 1] for i, a in enumerate(args) if a == "--device"]
    if flags:
        return flags[-1]
    config = (ROOT / manifest.flag_value(args, "--config")).read_text()
    return next(ln.split("=", 1)[1].strip() for ln in config.splitlines() if re.match(r"device\s*=", ln))


def test_every_grid_it_runs_is_declared_and_a_cpu_grid_keeps_its_declared_runs_on_the_card():
    grids = default_grids()
    assert grids[0] == "late_instability_bf16"  # seed 000's late instability first: the CPU cannot reach it
    assert set(manifest.GPU_SETS) <= set(manifest.GRIDS)
    for g in grids:
        assert g in manifest.GRIDS
        sets = manifest.GPU_SETS.get(g, {})
        assert all(k.endswith("+") for k in sets)  # appended only: the runner keeps the grid declared (its ledger)
        on_card = manifest.grid(g, sets)
        assert [Path(k).name for k in on_card] == results_ledger.declared_runs(g)  # the same runs, by name
        for e in on_card.values():
            args = manifest.resolve(e["args"], lambda n: n)
            assert device_of(args).startswith("cuda"), (g, args)
    # the CPU-declared grid keeps its arithmetic on the card: emulated bf16, as declared
    late = next(iter(manifest.grid("late_instability_bf16", manifest.GPU_SETS["late_instability_bf16"]).values()))
    assert manifest.flag_value(late["args"], "--bf16-mode") == "emulated"


def test_an_unknown_grid_is_refused_in_one_line_before_anything_runs(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "GRIDS": "late_instability_bf16 no_such_grid", "OUT": str(tmp_path / "out"),
                            "BUILD": str(tmp_path / "no-build")})
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"gpu-grid: no grid 'no_such_grid' in analysis/manifest.py (GRIDS: {', '.join(manifest.GRIDS)})"]
    assert not (tmp_path / "out").exists()


def test_its_mechanics_on_the_cpu_bring_back_every_finished_run_in_one_archive(tmp_path):
    if not (BUILD / "gaugelab-torch").exists():
        pytest.skip(f"{BUILD / 'gaugelab-torch'} not built")
    if not (ROOT / "runs/data/shakespeare/train.bin").exists():
        pytest.skip("runs/data/shakespeare not prepared (make figures)")
    mech = ROOT / "runs/gpu-grid-mechanics/late_instability_bf16"
    shutil.rmtree(mech, ignore_errors=True)
    try:
        r = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=180,
                           env={**os.environ, "DEVICE": "cpu", "GRIDS": "late_instability_bf16", "BUILD": str(BUILD),
                                "OUT": str(tmp_path / "out"), "BUDGET_S": "150"})
        assert r.returncode == 0, r.stdout + r.stderr
        with tarfile.open(tmp_path / "out/gpu-grid-runs-1.tar.gz") as t:
            names = sorted(t.getnames())
        assert names == sorted(f"runs/gpu-grid-mechanics/late_instability_bf16/{c}_lr1e-2_s1{f}"
                               for c in "AB" for f in ("/log.h5", ".txt"))
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["gpu-grid-runs-1.tar.gz",
                                                                          "late_instability_bf16.txt"]
    finally:
        shutil.rmtree(mech, ignore_errors=True)
