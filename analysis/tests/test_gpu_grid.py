"""scripts/gpu-grid.sh, the prepared call that runs the grids needing a GPU on a lent card: which grids it runs, in
which order, with which settings and where their logs are packed from come from the manifest (GPU_GRIDS, GRIDS'
roots, GPU_SETS), a CPU-declared grid keeps its declared runs on the card (only appended settings: its device), a
run the budget stopped is named with its last step, an unknown grid is refused before anything runs, and (with the
build and the prepared corpus here) its mechanics at a tiny size on the CPU bring back every finished run in one
archive. The card's path runs here in a copy of the script whose Python records the runner's calls."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import manifest
import results_ledger

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build"))
SCRIPT = ROOT / "scripts" / "gpu-grid.sh"


def device_of(args: list[str]) -> str:
    """The device a train command runs on: its last --device flag (a flag beats the config), else its config's."""
    flags = [args[i + 1] for i, a in enumerate(args) if a == "--device"]
    if flags:
        return flags[-1]
    config = (ROOT / manifest.flag_value(args, "--config")).read_text()
    return next(ln.split("=", 1)[1].strip() for ln in config.splitlines() if re.match(r"device\s*=", ln))


def test_every_grid_it_runs_is_declared_and_a_cpu_grid_keeps_its_declared_runs_on_the_card():
    grids = list(manifest.GPU_GRIDS)
    assert grids[0] == "late_instability_bf16"  # seed 000's late instability first: the CPU cannot reach it
    assert set(manifest.GPU_SETS) <= set(manifest.GRIDS)
    assert not set(manifest.GPU_SETS) & set(manifest.GRID_REQUIRES)  # those take no --set at all (run_grid)
    for g in sorted(set(grids) | set(manifest.GPU_SETS)):
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


def test_on_a_card_each_grid_runs_with_its_manifest_settings_and_its_root_comes_back(tmp_path):
    import grid_logs

    repo, build, calls = tmp_path / "repo", tmp_path / "build", tmp_path / "calls.txt"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, repo / "scripts")
    (repo / "analysis").symlink_to(ROOT / "analysis")
    carried = repo / "runs/gpu-carry/assets"  # the machine's own assets lack the ranks (as on a card once): the
    (carried / "shakespeare").mkdir(parents=True)  # carried ones are used
    (carried / "gpt2.tiktoken").write_bytes(b"")
    (tmp_path / "cache/assets/shakespeare").mkdir(parents=True)
    build.mkdir()
    (build / "gaugelab").write_text("#!/bin/sh\nexit 0\n")
    (build / "gaugelab").chmod(0o755)
    py = tmp_path / "py"  # the runner's calls recorded, every other Python call passed on
    py.write_text(f'#!/bin/bash\nif [ "$1" = analysis/make_figures.py ]; then shift; echo "$*" >> {calls}\n'
                  f'echo "$GAUGELAB_ASSETS" >> {calls}.assets; exit 0; fi\n'
                  f'exec {sys.executable} "$@"\n')
    py.chmod(0o755)
    late = repo / manifest.GRIDS["late_instability_bf16"][0]["root"]
    grid_logs.run_log(late / "A_lr6e-4_s1", "A", 6e-4, 1, 5.0)
    (late / "A_lr6e-4_s1.txt").write_text("step 20000/20000 | loss 5.0\n")
    (late / "B_lr6e-4_s1").mkdir()
    (late / "B_lr6e-4_s1.txt").write_text("step 1/20000 | loss 9.8\nstep 3000/20000 | loss 6.1 | 900 tok/s\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DEVICE", "GRIDS", "SEEDS", "GAUGELAB_ASSETS")}
    env |= {"ANALYSIS_PY": str(py), "BUILD": str(build), "OUT": str(tmp_path / "out"), "BUDGET_S": "100",
            "GAUGELAB_CACHE": str(tmp_path / "cache")}
    r = subprocess.run(["bash", str(repo / "scripts/gpu-grid.sh")], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert set(Path(f"{calls}.assets").read_text().split()) == {str(carried)}  # every grid prepares from them
    roots = " ".join(manifest.GRIDS[g][0]["root"] for g in manifest.GPU_GRIDS)
    assert f"[gpu-grid] grids: {' '.join(manifest.GPU_GRIDS)}; roots: {roots}" in r.stdout.splitlines()
    ran = calls.read_text().splitlines()
    assert [ln.split("--grid ", 1)[1].split()[0] for ln in ran] == list(manifest.GPU_GRIDS)  # in order
    for g, ln in zip(manifest.GPU_GRIDS, ran):
        want = [f"--set {k}={v}" for k, v in manifest.GPU_SETS.get(g, {}).items()]
        assert ln.endswith(f"--grid {g} --jobs 8" + "".join(" " + w for w in want)), ln
    with tarfile.open(tmp_path / "out/gpu-grid-runs-1.tar.gz") as t:
        assert sorted(t.getnames()) == ["runs/late_instability_bf16/A_lr6e-4_s1.txt",
                                        "runs/late_instability_bf16/A_lr6e-4_s1/log.h5"]
    said = (tmp_path / "out/late_instability_bf16.txt").read_text().splitlines()
    assert said == ["[gpu-grid] stopped: runs/late_instability_bf16/B_lr6e-4_s1: step 3000/20000 | loss 6.1 | 900 tok/s"]


def test_without_the_corpus_assets_it_stops_in_one_line_naming_what_to_carry(tmp_path):
    repo, build = tmp_path / "repo", tmp_path / "build"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, repo / "scripts")
    (repo / "analysis").symlink_to(ROOT / "analysis")
    build.mkdir()
    (build / "gaugelab").write_text("#!/bin/sh\nexit 0\n")
    (build / "gaugelab").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("DEVICE", "GRIDS", "SEEDS", "GAUGELAB_ASSETS")}
    r = subprocess.run(["bash", str(repo / "scripts/gpu-grid.sh")], capture_output=True, text=True, timeout=60,
                       env={**env, "ANALYSIS_PY": sys.executable, "BUILD": str(build), "OUT": str(tmp_path / "out"),
                            "GAUGELAB_CACHE": str(tmp_path / "empty-cache")})
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"gpu-grid: no BPE ranks or Shakespeare text under {tmp_path}/empty-cache/"
                                             "assets (carry runs/gpu-carry: gpu-bench.sh --carry)"]
    assert not (tmp_path / "out").exists()


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
    assets = Path(os.environ.get("GAUGELAB_ASSETS") or Path(os.environ.get("GAUGELAB_CACHE") or
                                                             Path.home() / ".cache/gaugelab") / "assets")
    if not (assets / "shakespeare").is_dir():
        pytest.skip(f"no Shakespeare text under {assets} (scripts/install-deps.sh)")
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
