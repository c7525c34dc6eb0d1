"""scripts/gpu-bench.sh's mechanics with DEVICE=cpu at a tiny size, laid out as on a lent GPU machine (OUT a
folder outside the repository that must come back whole, WORK under the temporary folder): one summary line per
stage, at most 8 files within the return limits, a dead row that leaves the later rows running, stages skipped
for the budget, a run SIGKILLed after its first row that still leaves its summary and a readable archive, and a
second call (--remaining) that runs only what the first left open, and the out-of-memory row (its one-line rule on
made-up outputs; on the CPU the activation estimate's refusal). Also the twin rules of
scripts/gpu_bench_rows.py on made-up logs, and scripts/gpu-prefix.sh failing loudly (or not at all) on made-up
packages. The bench runs need the build's gaugelab (GAUGELAB_BUILD_DIR, default build/) and a Python with torch
(the venv); skipped with the reason otherwise."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build"))
SCRIPT = ROOT / "scripts" / "gpu-bench.sh"
VENV_PY = Path(os.environ.get("GAUGELAB_VENV", Path.home() / ".cache/gaugelab/venv")) / "bin/python"
NAME = re.compile(r"^[A-Za-z0-9._-]+$")
LINE = re.compile(r"^(\d+)s (\S+) (passed|FAILED|skipped)\b")

sys.path.insert(0, str(ROOT / "scripts"))
import gpu_bench_rows as rows  # noqa: E402


def need_build():
    for exe in ("gaugelab", "gaugelab-torch"):
        if not (BUILD / exe).exists():
            pytest.skip(f"{BUILD / exe} not built")
    if not VENV_PY.exists():
        pytest.skip(f"no Python with torch at {VENV_PY}")


def bench(tmp_path, *args, wait=True, **env):
    e = {**os.environ, "DEVICE": "cpu", "BUILD": str(BUILD), "OUT": str(tmp_path / "out"),
         "WORK": str(tmp_path / "work"), "DATA": str(tmp_path / "data"), "TORCH_PY": str(VENV_PY), **env}
    cmd = ["bash", str(SCRIPT), *args]
    if not wait:
        return subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=240)


def stage_lines(summary: Path) -> dict[str, str]:
    out = {}
    for line in summary.read_text().splitlines():
        m = LINE.match(line)
        if m:
            assert m.group(2) not in out, f"two lines for {m.group(2)}"
            out[m.group(2)] = line
    return out


def assert_returnable(out: Path):
    """What a lent machine gives back: at most 8 files, at most 2 folders deep, plain names, each <= 16 MiB."""
    files = [p for p in out.rglob("*") if p.is_file()]
    assert 0 < len(files) <= 8, files
    for p in files:
        rel = p.relative_to(out)
        assert len(rel.parts) <= 3, rel
        assert all(NAME.match(part) for part in rel.parts), rel
        assert p.stat().st_size <= 16 * 2**20, rel


def test_stages_rows_twins_a_dead_row_and_the_second_call(tmp_path):
    need_build()
    check = tmp_path / "kernel-check.sh"
    check.write_text('echo "3 cases" > "$1"; sleep 1; echo "kernel-check: 3 cases passed"\n')
    stages = "kernel-check,plain,multipliers,multipliers_aten_lrm,plain_graph,peer_eager"
    r = bench(tmp_path, STAGES=stages, KERNEL_CHECK=str(check), ROW_ARGS_plain="--no-such-flag")
    out, work = tmp_path / "out", tmp_path / "work"
    assert r.returncode == 1, r.stdout + r.stderr  # a stage failed
    summary = (out / "summary.txt").read_text().splitlines()
    assert re.match(r"^\d+s machine no GPU \(DEVICE=cpu\); \d+ cores; .*torch", summary[0]), summary[0]
    assert summary[-1].split(" ", 1)[1].startswith("done: 4 passed, 1 failed, 1 skipped"), summary[-1]
    got = stage_lines(out / "summary.txt")
    assert set(got) == set(stages.split(",")), got
    assert "kernel-check passed kernel-check: 3 cases passed" in got["kernel-check"]
    assert "FAILED exit 2:" in got["plain"] and "no-such-flag" in got["plain"]  # dead, and the rows after it ran
    for name in ("multipliers", "multipliers_aten_lrm", "peer_eager"):
        assert re.search(r"passed [\d,]+ tok/s .*; loss [\d.]+ @1, [\d.]+ @5, [\d.]+ @6", got[name]), got[name]
    assert "skipped (--cuda-graph needs CUDA)" in got["plain_graph"]
    # The CPU runs ATen's ops for both kernel choices: the twins are the same computation.
    twin = [s for s in summary if " twin " in s]
    assert len(twin) == 1 and "twin multipliers_aten_lrm=multipliers PASS step 1 bit-equal" in twin[0], twin
    assert_returnable(out)
    table = (out / "gpu-bench.md").read_text()
    assert re.search(r"\| ours, no multipliers \(N\) \|.*\*\*dead\*\* exit 2", table), table
    assert re.search(r"\| ours, multipliers \(C\) \| [\d,]+ \|", table), table
    assert re.search(r"\| nanoGPT eager \| [\d,]+ \|", table), table
    with tarfile.open(out / "logs.tar.gz") as t:
        names = set(t.getnames())
    assert {"./ours_multipliers/log.h5", "./kernel-check.txt", "./summary.txt", "./peer_eager.json"} <= names, names
    assert not any("checkpoints" in n for n in names)
    # The peer read the rows' token file.
    assert '"data": "' + str(tmp_path / "data" / "train.bin") + '"' in (work / "peer_eager.json").read_text()

    # The second call: only what did not pass (plain, a FAILED row: again under CUDA_LAUNCH_BLOCKING=1; the graph
    # row skipped again); the table then holds both calls' rows.
    r = bench(tmp_path, "--remaining", str(work / "summary.txt"), STAGES=stages, KERNEL_CHECK=str(check))
    assert r.returncode == 0, r.stdout + r.stderr
    got = stage_lines(out / "summary.txt")
    assert set(got) == {"plain", "plain_graph"}, got
    assert "passed" in got["plain"] and "CUDA_LAUNCH_BLOCKING=1" in got["plain"], got["plain"]
    table = (out / "gpu-bench.md").read_text()
    assert "**dead**" not in table
    for label in ("ours, no multipliers (N)", "ours, multipliers (C)", "ours C, --lrm-kernel aten", "nanoGPT eager"):
        assert re.search(re.escape(f"| {label} |") + r" [\d,]+ \|", table), (label, table)
    assert_returnable(out)


def test_a_profile_window_ends_before_the_last_step_and_the_cuda_cases_wait_for_a_card(tmp_path):
    # On the card (2026-11-30) a window over the last step held its validation and the heads' float32 samples:
    # ~200 ms of a 2-step window whose training steps took ~27 ms each.
    need_build()
    r = bench(tmp_path, STAGES="profile_plain,cuda_tests")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cuda_tests skipped (the [cuda] cases need CUDA)" in stage_lines(tmp_path / "out" / "summary.txt")["cuda_tests"]
    printed = (tmp_path / "work" / "ours_profile_plain.txt").read_text()
    window = re.search(r"^profile: steps (\d+)\.\.(\d+) traced", printed, re.M)
    last = re.findall(r"^step (\d+)/(\d+) ", printed, re.M)[-1]
    assert window and last[0] == last[1], printed
    assert int(window.group(2)) < int(last[1]), (window.group(0), last)


def test_a_budget_too_small_skips_stages(tmp_path):
    need_build()
    r = bench(tmp_path, STAGES="plain,multipliers", BUDGET="2")
    assert r.returncode == 0, r.stdout + r.stderr
    got = stage_lines(tmp_path / "out" / "summary.txt")
    assert set(got) == {"plain", "multipliers"}
    for line in got.values():
        assert re.search(r"skipped \(budget: needs ~5 s, -?\d+ s left\)", line), line
    assert not (tmp_path / "work" / "ours_plain").exists()
    assert_returnable(tmp_path / "out")


def test_a_run_killed_after_its_first_row_leaves_its_summary_and_a_readable_archive(tmp_path):
    need_build()
    p = bench(tmp_path, wait=False, STAGES="plain,multipliers,gaugefix_B")
    out, work = tmp_path / "out", tmp_path / "work"
    try:
        deadline = time.monotonic() + 120
        while not (work / "ours_multipliers.txt").exists():  # the first row ended and was packed: the second runs
            assert p.poll() is None and time.monotonic() < deadline, "the second row never started"
            time.sleep(0.1)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        # the row in flight runs under timeout, in a process group of its own: ended by its recorded id
        for pid in (work / "pids").read_text().split() if (work / "pids").exists() else []:
            try:
                os.killpg(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    got = stage_lines(out / "summary.txt")
    assert list(got) == ["plain"] and " plain passed " in got["plain"], got
    assert (out / "summary.txt").read_text().splitlines()[0].split(" ", 2)[1] == "machine"
    with tarfile.open(out / "logs.tar.gz") as t:
        assert "./ours_plain/log.h5" in t.getnames()
        assert b" plain passed " in t.extractfile("./summary.txt").read()
    assert_returnable(out)


# --- the twin rules (scripts/gpu_bench_rows.py) on made-up logs ---

def fake_row(work: Path, name: str, loss):
    d = work / f"ours_{name}"
    d.mkdir(parents=True)
    with h5py.File(d / "log.h5", "w") as f:
        s = f.create_group("series")
        s.create_dataset("step", data=np.arange(1, len(loss) + 1, dtype=np.int64))
        s.create_dataset("loss", data=np.asarray(loss, dtype=np.float64))
        s.create_dataset("tokens_per_s", data=np.full(len(loss), 1e5))
        f.create_group("summary").attrs["peak_mem_gb"] = 7.9


def test_twins_bit_equal_at_step_1_within_2e_2_at_the_last(tmp_path):
    loss = np.linspace(10.9, 7.0, 20)
    fake_row(tmp_path, "multipliers", loss)
    fake_row(tmp_path, "multipliers_aten_lrm", loss + np.r_[0.0, np.full(19, 1e-3)])
    text, rc = rows.twin_text(str(tmp_path), "multipliers_aten_lrm", "multipliers", 20)
    assert rc == 0 and text.startswith("PASS step 1 bit-equal"), text
    fake_row(tmp_path, "plain_graph", loss + np.r_[np.nextafter(loss[0], 0) - loss[0], np.zeros(19)])  # one ulp
    fake_row(tmp_path, "plain", loss)
    text, rc = rows.twin_text(str(tmp_path), "plain_graph", "plain", 20)
    assert rc == 1 and "NOT bit-equal" in text, text
    fake_row(tmp_path, "plain_aten_ln", loss + np.r_[5e-4, np.zeros(18), 3e-2])
    text, rc = rows.twin_text(str(tmp_path), "plain_aten_ln", "plain", 20)
    assert rc == 1 and "step 1 |diff| 0.0005 <= 0.001" in text and "step 20 |diff| 0.03 > 0.02" in text, text


CUDA_OOM = ("gaugelab train: error: out of memory on cuda:0 in a micro-batch of --batch-size 512 x 1024 tokens (CUDA "
            "out of memory. Tried to allocate 96.00 GiB): lower --batch-size and raise --grad-accum (now 1) to keep the "
            "batch, or shorten --block-size")


def test_the_out_of_memory_row_holds_one_line_naming_the_sizes_and_the_flag():
    settings = "data       runs/gpu-carry/data\nmodel      gpt2 124M\n"
    said, ok = rows.oom_text(settings + CUDA_OOM + "\n", "cuda", 1)
    assert ok and said == CUDA_OOM[:200], said
    cpu = ("gaugelab train: error: one micro-batch of --batch-size 100000000 x 64 tokens needs about 3.95e+06 GB of "
           "activations (the logits alone 3.86e+06 GB); this machine has 25.3 GB: lower --batch-size ...")
    assert rows.oom_text(cpu, "cpu", 1)[1]
    for text, device, status, why in [
        (settings + "step 1/1 | loss 10.9\n", "cuda", 0, "exit 0: it trained"),
        (CUDA_OOM, "cuda", 134, "exit 134, not 1"),
        (CUDA_OOM + "\n" + CUDA_OOM, "cuda", 1, "2 error lines, not 1"),
        ("terminate called after throwing an instance of 'c10::OutOfMemoryError'\n", "cuda", 1, "0 error lines"),
        (CUDA_OOM + "\nTraceback (most recent call last):", "cuda", 1, "beside the error line: Traceback"),
        ("CUDA error: out of memory\n" + CUDA_OOM, "cuda", 1, "beside the error line: CUDA error"),
        (cpu, "cuda", 1, "does not say 'out of memory on cuda'"),  # the CPU's refusal is not the card's line
        ("gaugelab train: error: out of memory on cuda:0 (CUDA out of memory)", "cuda", 1, "name --batch-size"),
    ]:
        said, ok = rows.oom_text(text, device, status)
        assert not ok and why in said, (why, said)


def test_the_out_of_memory_stage_on_the_cpu_is_refused_before_any_allocation(tmp_path):
    need_build()
    r = bench(tmp_path, STAGES="oom")
    assert r.returncode == 0, r.stdout + r.stderr
    got = stage_lines(tmp_path / "out" / "summary.txt")
    assert re.search(r"oom passed gaugelab train: error: one micro-batch of --batch-size 100000000 x \d+ tokens "
                     r"needs about", got["oom"]), got["oom"]
    assert_returnable(tmp_path / "out")


def test_rows_read_from_the_printed_lines_without_a_log_leave_bit_equality_undecided(tmp_path):
    for name in ("multipliers", "multipliers_aten_lrm"):
        (tmp_path / f"ours_{name}.txt").write_text("".join(
            f"step {s}/6 | loss {11 - s / 10:.4f} | lr 6e-4 | gnorm 1.0 | drift - | {1000 * s:.0f} tok/s | MFU 1.0% "
            "| ETA 1s\n"
            for s in range(1, 7)))
    text, rc = rows.row_text(str(tmp_path), "multipliers", 6)
    assert rc == 0 and text.startswith("4,000 tok/s (median of steps 3-5 (3 logged), printed lines)"), text
    assert "loss 10.9000 @1, 10.5000 @5, 10.4000 @6" in text
    text, rc = rows.twin_text(str(tmp_path), "multipliers_aten_lrm", "multipliers", 6)
    assert rc == 2 and text.startswith("NOT-COMPARED"), text


# --- scripts/gpu-prefix.sh on made-up packages ---

def fake_deb(folder: Path, name: str, files=(), links=()):
    """A .deb holding empty FILES and symlinks LINKS ((path, target), ...) under its root."""
    root = folder.parent / f"{name}-root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN/control").write_text(f"Package: {name}\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\n"
                                         "Description: t\n")
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("")
    for path, target in links:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / path)
    folder.mkdir(exist_ok=True)
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(root), str(folder / f"{name}_1_amd64.deb")],
                   check=True, capture_output=True)


def prefix_env(debs: Path, prefix: Path):
    return subprocess.run(["bash", str(ROOT / "scripts/gpu-prefix.sh"), "env", str(debs), str(prefix)],
                          capture_output=True, text=True, timeout=60)


def test_gpu_prefix_exports_past_a_link_that_resolves_nowhere_and_fails_loudly_on_a_real_error(tmp_path):
    if subprocess.run(["bash", "-c", "command -v dpkg-deb"], capture_output=True).returncode != 0:
        pytest.skip("no dpkg-deb")
    lib = "usr/lib/x86_64-linux-gnu"
    debs = tmp_path / "debs"
    # The last link found resolves nowhere: the loop used to end the script under pipefail with nothing printed.
    fake_deb(debs, "fake", files=["usr/include/eigen3/Eigen/Core", f"{lib}/pkgconfig/x.pc", f"{lib}/hdf5/serial/x"],
             links=[(f"{lib}/libnowhere.so", "/nonexistent/libnowhere.so.1.2.3")])
    r = prefix_env(debs, tmp_path / "prefix")
    assert r.returncode == 0, r.stderr
    assert f"export CMAKE_PREFIX_PATH='{tmp_path}/prefix/usr'" in r.stdout
    assert "libnowhere.so -> /nonexistent/libnowhere.so.1.2.3 resolves nowhere" in r.stderr
    # A package missing from the folder: one line naming it, non-zero, no exports.
    fake_deb(tmp_path / "partial", "partial", links=[(f"{lib}/libnowhere.so", "/nonexistent/libnowhere.so.1")])
    r = prefix_env(tmp_path / "partial", tmp_path / "prefix2")
    assert r.returncode != 0 and r.stdout == ""
    assert r.stderr.splitlines()[-1].endswith("(a package not downloaded?)"), r.stderr
    (tmp_path / "empty").mkdir()
    r = prefix_env(tmp_path / "empty", tmp_path / "prefix3")
    assert r.returncode == 1 and r.stdout == "" and len(r.stderr.splitlines()) == 1 and "no .deb files" in r.stderr
    # gpu-bench.sh notices a failed unpacking in its summary.
    if VENV_PY.exists():
        r = bench(tmp_path, STAGES="plain", BUDGET="1", DEPS_DEBS=str(tmp_path / "empty"))
        deps = [s for s in (tmp_path / "out/summary.txt").read_text().splitlines() if " deps " in s]
        assert len(deps) == 1 and "deps FAILED (gpu-prefix: no .deb files" in deps[0], deps
