"""The experiment grids are declared once (analysis/manifest.py GRIDS) and run by the one runner
(make_figures.py --grid): every grid builds with unique run directories, seeds outermost; settings change only
through declared keys; a finished run is skipped on a rerun and a shard takes every n-th run."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import manifest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build"))


def fake_runner(monkeypatch, tmp_path: Path, ledger_holds=frozenset()) -> list[str]:
    """make_figures.run_grid with its runs faked: the names it runs are appended to the returned list; no log of
    the grid under tmp_path unless a test writes one; the ledger holds `ledger_holds` and is never written."""
    import make_figures as mf
    import results_ledger as rl

    ran: list[str] = []
    monkeypatch.setattr(mf, "ROOT", tmp_path)
    monkeypatch.setattr(mf, "run_experiments", lambda *a, **k: None)
    monkeypatch.setattr(mf, "run_one", lambda b, k, e, launch=None, to_file=False:
                        ran.append(Path(k).name) or (k, 0.0, subprocess.CompletedProcess([], 0)))
    monkeypatch.setattr(rl, "recorded", lambda name: set(ledger_holds))
    monkeypatch.setattr(rl, "write", lambda name: tmp_path / "ledger.csv")
    monkeypatch.setattr(rl, "load_grid", lambda name, *a, **k: object())
    return ran


@pytest.mark.parametrize("name", sorted(manifest.GRIDS))
def test_every_grid_builds_unique_runs(name):
    over = {"data": "runs/data/owt"} if name in ("seed000_conditions", "seed000_frequency") else {}
    runs = manifest.grid(name, over)
    assert runs, name
    assert len({e["out_arg"] for e in runs.values()}) == len(runs)
    for run_dir, e in runs.items():
        assert e["args"][0] == "train" and e["out"] == f"{run_dir}/log.h5" and e["resumable"]


def test_seed_regime_grid_is_the_declared_one():
    runs = manifest.grid("lr_sensitivity_bf16")
    assert len(runs) == 6 * 9 * 8
    for e in runs.values():
        assert e["args"][-6:] == ["--precision", "bf16", "--bf16-mode", "emulated", "--bias", "false"]
    seeds = [e["args"][e["args"].index("--seed") + 1] for e in runs.values()]
    first = len(runs) // 8
    assert set(seeds[:first]) == {"42"}, "seeds outermost: the first seed's runs come first"
    lrs = sorted({float(e["args"][e["args"].index("--lr") + 1]) for e in runs.values()})
    assert lrs[0] < 4e-4 and lrs[-1] == 1.0  # brackets: from ~3.7e-4 through 1.0, log-spaced
    assert all(abs(b / a - 10 ** (3 / 7)) < 0.01 * b / a for a, b in zip(lrs, lrs[1:]))


def test_the_first_bf16_grids_runs_keep_their_names_in_the_bracketing_grid():
    old = manifest.grid("lr_sensitivity_bf16", {"lrs": "2.68e-3 7.2e-3 1.93e-2 5.18e-2 0.139 0.373"})
    assert len(old) == 288 and set(old) <= set(manifest.grid("lr_sensitivity_bf16"))
    assert manifest.SEED_REGIME_LR in old_lrs(old)


def old_lrs(runs: dict) -> set[str]:
    return {e["args"][e["args"].index("--lr") + 1] for e in runs.values()}


def test_the_bf16_null_runs_one_condition_under_two_thread_counts_paired_by_seed():
    runs = manifest.grid("lr_sensitivity_bf16_null")
    assert len(runs) == 16 and old_lrs(runs) == {manifest.SEED_REGIME_LR}
    by = {}
    for d, e in runs.items():
        a = e["args"]
        assert a[a.index("--condition") + 1] == "C" and a[-2] == "--threads"
        by.setdefault(a[a.index("--seed") + 1], set()).add(a[-1])
    assert len(by) == 8 and all(t == {"1", "2"} for t in by.values())


def test_the_emulation_check_runs_each_seed_under_native_and_emulated_bf16():
    runs = manifest.grid("bf16_emulation_check")
    assert len(runs) == 16 and old_lrs(runs) == {manifest.SEED_REGIME_LR}
    by = {}
    for d, e in runs.items():
        a = e["args"]
        mode = a[a.index("--bf16-mode") + 1]
        assert a[a.index("--precision") + 1] == "bf16" and d.endswith(f"_bf16-{mode}")
        by.setdefault((a[a.index("--condition") + 1], a[a.index("--seed") + 1]), set()).add(mode)
    assert len(by) == 8 and all(m == {"native", "emulated"} for m in by.values())
    with pytest.raises(ValueError, match="precision 'bf17' is not one of"):
        manifest.grid("bf16_emulation_check", {"precisions": "bf17"})


def test_the_late_instability_experiment_is_the_seeds_protocol_at_twenty_seeds_per_arm():
    runs = manifest.grid("late_instability_bf16")
    assert len(runs) == 3 * 20
    for e in runs.values():
        a = e["args"]
        val = lambda flag: a[a.index(flag) + 1]  # noqa: E731
        assert val("--lr") == "6e-4" and val("--min-lr") == "6e-5" and val("--max-iters") == "20000"
        assert val("--warmup-iters") == "2000" and val("--precision") == "bf16" and e["resumable"]
        assert int(val("--ckpt-every")) <= 1000  # resumable across days without losing more than 1 000 steps
    assert {e["args"][e["args"].index("--condition") + 1] for e in runs.values()} == {"A", "B", "C"}


def test_the_late_null_is_the_late_experiments_c_at_its_seeds_with_the_batch_split_in_two():
    late = manifest.grid("late_instability_bf16")
    null = manifest.grid("late_instability_bf16_null")
    split = manifest.LATE_NULL_SPLIT.split()
    assert len(null) == len(manifest.LATE_NULL_SEEDS.split()) >= 6  # six pairs: the sign-flip test can reach 2/64
    cfg = (ROOT / "gpt2/configs/lr-sensitivity-cpu.ini").read_text()
    b, ev = (int(re.search(rf"^{key} = (\d+)$", cfg, re.M).group(1)) for key in ("batch-size", "eval-batches"))
    assert split[::2] == ["--batch-size", "--grad-accum", "--eval-batches"] and int(split[3]) == 2
    assert int(split[1]) * 2 == b  # the same sequences per step
    assert int(split[5]) * int(split[1]) == ev * b  # the same validation windows
    for d, e in null.items():
        a = list(e["args"])
        assert a[-len(split):] == split and e["resumable"]
        seed = a[a.index("--seed") + 1]
        ref = next(x["args"] for k, x in late.items() if k.endswith(f"/C_lr6e-4_s{seed}"))
        assert a[:-len(split)] == list(ref)  # otherwise the experiment's C, step for step


def test_muon_rows_skip_the_projections_and_take_ten_times_the_lr():
    runs = manifest.grid("lr_sensitivity", {"lrs": "1e-2", "seeds": "1"})
    muon = {k: e for k, e in runs.items() if "--optimizer" in e["args"]}
    assert muon and not any(Path(k).name.startswith("MP") for k in muon)
    e = next(iter(muon.values()))
    assert e["args"][e["args"].index("--muon-lr") + 1] == "0.1"


def test_settings_change_only_through_declared_keys():
    with pytest.raises(ValueError, match="no setting"):
        manifest.grid("lr_sensitivity_demo", {"lr": "1"})
    with pytest.raises(ValueError, match="unknown grid"):
        manifest.grid("nope")
    with pytest.raises(ValueError, match="data=DIR"):
        manifest.grid("seed000_conditions")
    runs = manifest.grid("lr_sensitivity_demo", {"extra+": "--device cpu"})
    assert all(e["args"][-2:] == ["--device", "cpu"] and "--max-iters" in e["args"] for e in runs.values())


def test_runner_skips_finished_runs_and_shards(tmp_path):
    if not (BUILD / "gaugelab").exists():
        pytest.skip(f"SKIPPED: no gaugelab binary at {BUILD}")
    root = tmp_path / "grid"
    base = [sys.executable, str(ROOT / "analysis" / "make_figures.py"), "--build", str(BUILD), "--grid",
            "lr_sensitivity_demo", "--jobs", "2", "--set", f"root={root}", "--set", "data=" + str(tmp_path / "data"),
            "--set", "extra=--max-iters 3 --warmup-iters 0 --eval-every 3 --eval-batches 1 --batch-size 2"]
    prep = subprocess.run([str(BUILD / "gaugelab"), "prepare", "--synthetic", "--docs", "100", "--out",
                           str(tmp_path / "data")], capture_output=True, text=True, timeout=120)
    assert prep.returncode == 0, prep.stderr
    r = subprocess.run(base + ["--shard", "1/2"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    made = sorted(p.parent.name for p in root.glob("*/log.h5"))
    assert made == ["A_lr1e-1_s42", "B_lr1e-2_s42", "C_lr1e-1_s42"]  # every 2nd from the 1st, in declared order
    r = subprocess.run(base + ["--shard", "1/2"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0 and "3 finished before" in r.stdout, r.stdout
    bad = subprocess.run(base + ["--shard", "2/2"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert bad.returncode == 2 and "shards are numbered from 0 (0/2 .. 1/2)" in bad.stderr


def test_demo_tiers_split_every_experiment_and_figure_once():
    import make_figures

    free, torch = make_figures.tier_selection("torch-free"), make_figures.tier_selection("torch")
    everything = set(manifest.EXPERIMENTS) | set(manifest.figures())
    assert free | torch == everything and not free & torch
    assert "toy_relu" in free and "train_tiny_A_s42" in torch
    for script, fig in manifest.figures().items():
        if script in free:  # drawn before gaugelab-torch exists: reads only what the torch-free binary makes
            assert all(manifest.EXPERIMENTS[e]["args"][0] in make_figures.TORCH_FREE_VERBS for e in fig.inputs)


def test_the_demo_slice_is_closed_and_leaves_out_only_the_heavy_experiments():
    demo = manifest.demo_slice()
    exps = {n for n in manifest.EXPERIMENTS if n in demo}
    heavy = {n for n, e in manifest.EXPERIMENTS.items() if e.get("demo", True) is False}
    assert exps == set(manifest.EXPERIMENTS) - heavy and heavy
    assert {"relu_boundary", "diag_trajectory"} <= heavy and "toy_relu" in exps and "train_tiny_C_s42" in exps
    outputs = {manifest.EXPERIMENTS[n]["out"]: n for n in manifest.EXPERIMENTS}
    for name in exps:  # an experiment of the slice never waits for a log the slice does not make
        for dep in manifest.EXPERIMENTS[name].get("deps", []):
            assert outputs.get(dep, name) in exps, (name, dep)
    for script, fig in manifest.figures().items():  # a figure is drawn by the demo iff it reads only the slice
        assert (script in demo) == (set(fig.inputs) <= exps), script
    assert any(s not in demo for s in manifest.figures()) and any(s in demo for s in manifest.figures())


def test_the_runner_skips_the_runs_its_ledger_holds_and_ledgers_each_finished_run(tmp_path, monkeypatch, capsys):
    """Machines are not kept and logs are never committed: a grid resumed elsewhere does not run again what its
    committed ledger holds (unless asked), and each run that finishes is in the ledger at once."""
    import make_figures as mf
    import results_ledger as rl

    names = rl.declared_runs("lr_sensitivity_bf16")
    ran, writes = fake_runner(monkeypatch, tmp_path, {names[0], names[216]}), []
    monkeypatch.setattr(rl, "write", lambda name: writes.append(name) or tmp_path / "ledger.csv")
    mf.run_grid(tmp_path, "lr_sensitivity_bf16", {}, 1, (0, 108), [])  # the shard: runs 0, 108, 216, 324
    assert ran == [names[108], names[324]]
    assert "2 more in its ledger (logs elsewhere; --rerun-ledger runs them again)" in capsys.readouterr().out
    assert len(writes) >= 2  # after each finished run, not only at the end
    ran.clear()
    mf.run_grid(tmp_path, "lr_sensitivity_bf16", {}, 1, (0, 108), [], rerun_ledger=True)
    assert ran == [names[0], names[108], names[216], names[324]]
    ran.clear()
    capsys.readouterr()
    picked = {"conditions": "A", "seeds": f"{names[0].rsplit('_s', 1)[1]} {names[216].rsplit('_s', 1)[1]}"}
    mf.run_grid(tmp_path, "lr_sensitivity_bf16", picked, 1, (0, 1), [])  # picks some of its runs: still declared
    assert names[0] not in ran and names[216] not in ran  # the two its ledger holds are not made again
    assert len(ran) == len(manifest.grid("lr_sensitivity_bf16", picked)) - 2 and set(ran) <= set(names) and "2 more in its ledger" in capsys.readouterr().out
    ran.clear()
    changed = {**picked, "extra": "--max-iters 10"}  # the runs' arguments changed: not the declared grid
    mf.run_grid(tmp_path, "lr_sensitivity_bf16", changed, 1, (0, 1), [])
    assert names[0] in ran and "in its ledger" not in capsys.readouterr().out


def test_the_runner_sets_aside_and_reruns_a_run_made_under_another_bf16_mode(tmp_path, monkeypatch, capsys):
    import grid_logs
    import make_figures as mf
    import results_ledger as rl

    names = rl.declared_runs("lr_sensitivity_bf16_null")
    ran = fake_runner(monkeypatch, tmp_path)
    root = tmp_path / "runs" / "lr_sensitivity_bf16_null"
    grid_logs.run_log(root / names[0], "C", 2.68e-3, 42, 5.6, bf16_mode="native")    # auto chose native there
    grid_logs.run_log(root / names[1], "C", 2.68e-3, 42, 5.6, bf16_mode="emulated")  # as declared
    mf.run_grid(tmp_path, "lr_sensitivity_bf16_null", {}, 1, (0, 8), [])  # the shard: runs 0 and 8
    assert ran == [names[0]] + [names[8]]
    aside = root.with_name(f"{root.name}.set-aside")  # out of the grid's folder, which the figures read whole
    assert (aside / f"{names[0]}.bf16-native" / "log.h5").exists() and not (root / names[0]).exists()
    assert "its log ran bf16 native, the grid declares emulated: moved to" in capsys.readouterr().out
    ran.clear()
    # An unfinished run that auto started native (its configuration says so), to be resumed under emulated: set aside
    import h5py
    import json

    log = grid_logs.run_log(root / names[9], "C", 2.68e-3, 123, 5.6, bf16_mode="emulated")
    with h5py.File(log, "r+") as f:
        cfg = json.loads(f.attrs["config_json"])
        f.attrs["config_json"] = json.dumps({**cfg, "bf16-mode": "native"})
        f["summary"].attrs["completed"] = 0
    mf.run_grid(tmp_path, "lr_sensitivity_bf16_null", {}, 1, (1, 8), [])  # runs 1 and 9: 1 kept, as declared
    assert ran == [names[9]] and (root / names[1] / "log.h5").exists()
    assert (aside / f"{names[9]}.bf16-emulated+native" / "log.h5").exists()  # config native, summary emulated


def test_the_hardware_emulation_check_runs_only_on_a_cpu_with_bf16_matmul(tmp_path, monkeypatch):
    import make_figures as mf

    # the build's own reading (src/io/cpu_features.hpp, tested there), from its `info` line
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gaugelab").write_text("#!/bin/sh\necho 'gaugelab   0.1.0'\necho 'cpu bf16   avx512_bf16 amx_bf16'\n")
    (fake / "gaugelab").chmod(0o755)
    assert mf.cpu_bf16(fake) == "avx512_bf16 amx_bf16"
    (fake / "gaugelab").write_text("#!/bin/sh\necho 'cpu bf16   -'\n")
    assert mf.cpu_bf16(fake) == "-"
    (fake / "gaugelab").write_text("#!/bin/sh\necho 'gaugelab   0.1.0'\n")  # an older build: it cannot say
    assert mf.cpu_bf16(fake) == ""
    assert mf.cpu_bf16(tmp_path / "no-build") == ""
    hw, sw = manifest.grid("bf16_emulation_check_hw"), manifest.grid("bf16_emulation_check")
    assert [Path(k).name for k in hw] == [Path(k).name for k in sw]  # the same runs, in their own folder
    assert [e["args"] for e in hw.values()] == [e["args"] for e in sw.values()]
    monkeypatch.setattr(mf, "ROOT", tmp_path)
    for says, build, shown in (("-", fake, "; `.*` says cpu bf16 -"),
                               ("", fake, ", and `.*` cannot tell: it printed no 'cpu bf16' line"),
                               ("", tmp_path / "no-build", ", and `.*` cannot tell: no such executable")):
        monkeypatch.setattr(mf, "cpu_bf16", lambda build, says=says: says)
        with pytest.raises(ValueError, match=f"runs only on a CPU with bf16 matmul{shown}"):
            mf.run_grid(build, "bf16_emulation_check_hw", {}, 1, (0, 1), [])
    assert not (tmp_path / "runs").exists()  # refused before anything is made
    monkeypatch.setattr(mf, "cpu_bf16", lambda build: "avx512_bf16")
    for sets in ({"root": "runs/elsewhere"}, {"extra+": "--device cuda"}):  # its runs as declared, or none
        with pytest.raises(ValueError, match="takes no --set"):
            mf.run_grid(tmp_path, "bf16_emulation_check_hw", sets, 1, (0, 1), [])


def test_the_runner_reads_the_builds_own_cpu_bf16_line():
    import make_figures as mf

    if not (BUILD / "gaugelab").exists():
        pytest.skip(f"{BUILD / 'gaugelab'} not built")
    said = mf.cpu_bf16(BUILD)  # "-" or the flags of src/io/cpu_features.hpp's table (tested there), never ""
    assert said == "-" or (said and all("bf16" in w for w in said.split())), repr(said)


def test_the_runner_sets_aside_a_finished_run_its_grid_leaves_out(tmp_path, monkeypatch, capsys):
    import grid_logs
    import make_figures as mf
    import results_ledger as rl

    names = rl.declared_runs("bf16_emulation_check_hw")
    monkeypatch.setattr(mf, "cpu_bf16", lambda build: "avx512_bf16")
    ran = fake_runner(monkeypatch, tmp_path)
    root = tmp_path / "runs" / "bf16_emulation_check_hw"
    mode = names[0].rsplit("_bf16-", 1)[1]
    grid_logs.run_log(root / names[0], "A", 2.68e-3, 42, 5.6, bf16_mode=mode, cpu_bf16="-")  # no bf16 matmul shown
    grid_logs.run_log(root / names[1], "A", 2.68e-3, 42, 5.6, bf16_mode=names[1].rsplit("_bf16-", 1)[1],
                      cpu_bf16="avx512_bf16")
    mf.run_grid(tmp_path, "bf16_emulation_check_hw", {}, 1, (0, 8), [])  # runs 0 and 8
    assert ran == [names[0], names[8]]
    assert (root.with_name(f"{root.name}.set-aside") / f"{names[0]}.off-declaration" / "log.h5").exists()
    assert "it was not made as the grid declares: not on a CPU with bf16 matmul: cpu_bf16 -" in capsys.readouterr().out
    ran.clear()
    mf.run_grid(tmp_path, "bf16_emulation_check_hw", {}, 1, (1, 8), [])  # runs 1 and 9: 1 kept
    assert ran == [names[9]]
    # a run its trainer still holds (the directory lock io::WriterLock takes) is left where it is, and said so
    import fcntl
    import os

    grid_logs.run_log(root / names[2], "C", 2.68e-3, 42, 5.6, bf16_mode=names[2].rsplit("_bf16-", 1)[1], cpu_bf16="-")
    fd = os.open(root / names[2], os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        ran.clear()
        capsys.readouterr()
        mf.run_grid(tmp_path, "bf16_emulation_check_hw", {}, 1, (2, 8), [])  # runs 2 and 10
    finally:
        os.close(fd)
    assert (root / names[2] / "log.h5").exists() and "but its trainer is running: left as it is" in capsys.readouterr().out
    assert ran == [names[10]]


def test_the_frequency_grid_runs_b_at_each_interval_at_the_late_experiments_protocol():
    runs = manifest.grid("gaugefix_frequency_bf16")
    late = manifest.grid("late_instability_bf16")
    b1 = next(e["args"] for d, e in late.items() if d.endswith("/B_lr6e-4_s1"))
    assert sorted(runs) == [f"runs/gaugefix_frequency_bf16/B_lr6e-4_s1_N{n}" for n in (10, 100, 1000)]
    for d, e in runs.items():
        a = e["args"]
        n = a[a.index("--gaugefix-every") + 1]
        assert d.endswith(f"_N{n}") and a.count("--gaugefix-every") == 1
        heads = int(a[a.index("--log-heads-every") + 1])
        assert int(n) % heads != 0 and heads % int(n) != 0  # no sample cadence that aliases with the fix
        i = a.index("--gaugefix-every")
        same = a[:i] + a[i + 2:]
        ref = list(b1)
        ref[ref.index("--log-heads-every") + 1] = str(heads)
        assert same == ref  # otherwise the late experiment's B at seed 1, step for step
