"""A data-parallel run (Gloo ranks on the CPU, 127.0.0.1) whose one rank is SIGKILLed mid-run after a
checkpoint: the other ranks exit non-zero, within the collective timeout plus a bound, each with one error
line naming the dead rank, the collective and how to continue; the last checkpoint is whole; every rank
`--resume`s and finishes, and the finished log equals an uninterrupted run's of as many ranks
(scripts/soak_compare.py: same bits, wall-clock series and the process table aside). With 2 ranks the dead
one is the other; with 3 the survivors learn it at a roll call over the rendezvous store (rank 2 killed),
or find the store gone with its host (rank 0 killed). Each case prints one line with its figures.
Needs the build's gaugelab with the GPT-2 tier (GAUGELAB_BUILD_DIR, default build/); skipped otherwise."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build")) / "gaugelab"
SOAK_COMPARE = ROOT / "scripts" / "soak_compare.py"
TIMEOUT_S = 5  # --dist-timeout-s: the collective (and rendezvous) timeout of every launch here
# Beyond the timeout, the survivor's exit may take process teardown on a loaded machine. A killed rank's
# sockets close, so the survivor must see a closed connection ("is gone"), never wait the timeout out.
EXIT_SLACK_S = 25
LIMIT_S = 300  # any one launch, start to end: bounds a hang
MAX_ITERS = 200
CKPT_EVERY = 10
TRAIN = ["--model", "nano", "--n-embd", "32", "--block-size", "32", "--compact-vocab", "--batch-size", "4", "--grad-accum", "2",
         "--eval-batches", "2", "--threads", "1", "--peak-tflops", "1", "--log-every", "100000", "--lr", "3e-3",
         "--warmup-iters", "5", "--max-iters", str(MAX_ITERS), "--ckpt-every", str(CKPT_EVERY), "--eval-every", "25",
         "--log-heads-every", "5", "--condition", "B", "--gaugefix-every", "3", "--dist-timeout-s", str(TIMEOUT_S)]
# 3 ranks: the global batch of micro-batches divides over them, and fewer steps keep the file's time small.
MAX_ITERS_3 = 60
TRAIN_3 = [*TRAIN]
TRAIN_3[TRAIN_3.index("--grad-accum") + 1] = "3"
TRAIN_3[TRAIN_3.index("--max-iters") + 1] = str(MAX_ITERS_3)
ROLL_CALL_S = min(TIMEOUT_S / 2, 3)  # the roll call's window (gpt2/dist/dist_failure.hpp, roll_call_window_s)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(argv: list, out: Path, tag: str, world: int = 2) -> list[subprocess.Popen]:
    """Ranks 0 .. world-1 of `gaugelab train ARGV --out OUT`, with torchrun's variables; their stdout and
    stderr go to OUT.TAG.rankR.{out,err}."""
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
        stem = f"{out}.{tag}.rank{rank}"
        with open(stem + ".out", "w") as o, open(stem + ".err", "w") as e:
            procs.append(subprocess.Popen([str(BINARY), "train", *map(str, argv), "--out", str(out)], env=env,
                                          stdout=o, stderr=e))
    return procs


def wait(p: subprocess.Popen, limit_s: float) -> int:
    try:
        return p.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail(f"a rank ran past {limit_s} s")


def logs(out: Path, tag: str, rank: int) -> tuple[str, str]:
    stem = f"{out}.{tag}.rank{rank}"
    return Path(stem + ".out").read_text(), Path(stem + ".err").read_text()


def checkpoints(out: Path) -> list[Path]:
    d = out / "checkpoints"
    return sorted(d.glob("step_*")) if d.is_dir() else []


def step_of(ckpt: Path) -> int:
    return int(ckpt.name.split("_")[1])


def check_safetensors_whole(path: Path) -> None:
    """The file holds its 8-byte header length, the JSON header, and exactly the bytes the header's offsets
    cover."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
    assert ends, f"{path}: no tensors"
    assert 8 + n + max(ends) == len(data), f"{path}: {len(data)} bytes, the header covers {8 + n + max(ends)}"


def check_checkpoint_whole(ckpt: Path) -> None:
    config = json.loads((ckpt / "config.json").read_text())
    assert config["trainer"]["step"] == step_of(ckpt), ckpt
    check_safetensors_whole(ckpt / "model.safetensors")
    check_safetensors_whole(ckpt / "optimizer.safetensors")


def error_line(stderr: str) -> str:
    """The CLI's one error line (other libraries' warnings around it are not it)."""
    lines = [line for line in stderr.splitlines() if line.startswith("gaugelab train: error: ")]
    assert len(lines) == 1, "not exactly one error line in:\n" + stderr
    return lines[0]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    if not BINARY.exists():
        pytest.skip(f"SKIPPED: no gaugelab binary at {BINARY} (build first)")
    d = tmp_path_factory.mktemp("data")
    r = subprocess.run([str(BINARY), "prepare", "--synthetic", "--docs", "300", "--seed", "1", "--out", d / "data"],
                       capture_output=True, text=True, timeout=LIMIT_S)
    if r.returncode != 0 and "GPT-2" in r.stderr + r.stdout:
        pytest.skip("SKIPPED: built without the GPT-2 tier")
    assert r.returncode == 0, r.stderr
    return d / "data"


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory) -> Path:
    """The uninterrupted 2-rank run's log."""
    out = tmp_path_factory.mktemp("ref") / "run"
    procs = launch(["--data", data, *TRAIN], out, "ref")
    codes = [wait(p, LIMIT_S) for p in procs]
    assert codes == [0, 0], "\n".join("".join(logs(out, "ref", r)) for r in (0, 1))
    return out / "log.h5"


@pytest.mark.parametrize("killed", [1, 0])
def test_a_killed_rank_ends_the_other_in_one_line_and_resume_is_bit_identical(data, reference, tmp_path, killed):
    survivor = 1 - killed
    out = tmp_path / "run"
    procs = launch(["--data", data, *TRAIN], out, "run")
    # Mid-run, after the first checkpoint: the kill lands in the steps after it.
    t0 = time.monotonic()
    while not checkpoints(out) and all(p.poll() is None for p in procs) and time.monotonic() - t0 < LIMIT_S:
        time.sleep(0.02)
    assert checkpoints(out) and all(p.poll() is None for p in procs), "\n".join(
        "".join(logs(out, "run", r)) for r in (0, 1))
    procs[killed].send_signal(signal.SIGKILL)
    t_kill = time.monotonic()
    procs[killed].wait()
    code = wait(procs[survivor], TIMEOUT_S + EXIT_SLACK_S + 60)
    delay = time.monotonic() - t_kill
    stdout, stderr = logs(out, "run", survivor)
    assert code != 0, stdout + stderr
    assert delay <= TIMEOUT_S + EXIT_SLACK_S, f"the survivor took {delay:.1f} s to exit"

    # One line naming this rank, the collective, the dead rank, and how to continue.
    line = error_line(stderr)
    m = re.search(r"\(gloo, rank (\d)/2\): (.+?) failed: rank (\d) is gone \(its connection closed; timeout "
                  r"(\S+) s\): .*; continue on every rank with: gaugelab train --resume --out (\S+) "
                  r"\(the last checkpoint: step (\d+)\)$", line)
    assert m, line
    assert (int(m[1]), int(m[3]), float(m[4]), m[5]) == (survivor, killed, TIMEOUT_S, str(out)), line
    assert m[2] in {"gradient presence all-reduce", "gradient all-reduce", "scalar all-reduce", "max all-reduce",
                    "barrier", "broadcast"}, line
    named = int(m[6])

    # The last checkpoint is whole, and it is the one the line names (also when rank 0 died between writing
    # it and every rank's wait for it).
    ckpts = checkpoints(out)
    newest = ckpts[-1]
    check_checkpoint_whole(newest)
    assert named == step_of(newest), (line, ckpts)
    assert step_of(newest) < MAX_ITERS, "the kill landed after the run's end"

    # Both ranks resume from it and finish; the log is the uninterrupted run's, bit for bit.
    procs = launch(["--resume", "--dist-timeout-s", TIMEOUT_S], out, "resume")
    codes = [wait(p, LIMIT_S) for p in procs]
    assert codes == [0, 0], "\n".join("".join(logs(out, "resume", r)) for r in (0, 1))
    stdout0, stderr0 = logs(out, "resume", 0)
    assert f"resumed from {newest}" in stdout0, stdout0
    assert "skipping checkpoint" not in stderr0, stderr0
    cmp = subprocess.run([sys.executable, str(SOAK_COMPARE), str(reference), str(out / "log.h5")],
                         capture_output=True, text=True, timeout=LIMIT_S)
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    load = os.getloadavg()[0]
    print(f"\ndead rank: rank {killed} SIGKILLed after the checkpoint of step {step_of(ckpts[0])}; rank {survivor} "
          f"exited {code} after {delay:.2f} s (--dist-timeout-s {TIMEOUT_S}), in the {m[2]}; resumed from step "
          f"{step_of(newest)}: {cmp.stdout.strip()} (load {load:.1f})")


def test_a_rank_killed_before_any_checkpoint_leaves_a_line_saying_to_start_again(data, tmp_path):
    out = tmp_path / "run"
    argv = [*TRAIN]
    argv[argv.index("--ckpt-every") + 1] = "1000"  # past --max-iters: no checkpoint before the last step
    procs = launch(["--data", data, *argv], out, "run")
    t0 = time.monotonic()  # rank 0 prints its settings' last line ('MFU peak') just before the first step
    while "MFU peak" not in logs(out, "run", 0)[0] and procs[0].poll() is None and time.monotonic() - t0 < LIMIT_S:
        time.sleep(0.02)
    procs[1].send_signal(signal.SIGKILL)
    procs[1].wait()
    code = wait(procs[0], TIMEOUT_S + EXIT_SLACK_S + 60)
    stdout, stderr = logs(out, "run", 0)
    assert code != 0, stdout + stderr
    line = error_line(stderr)
    assert "failed: rank 1 is gone (its connection closed" in line, line
    assert line.endswith("; no checkpoint yet (--ckpt-every 1000): start every rank again (--force replaces the "
                         "partial run)"), line
    assert not checkpoints(out)


@pytest.fixture(scope="module")
def reference_3(data, tmp_path_factory) -> Path:
    """The uninterrupted 3-rank run's log."""
    out = tmp_path_factory.mktemp("ref3") / "run"
    procs = launch(["--data", data, *TRAIN_3], out, "ref", world=3)
    codes = [wait(p, LIMIT_S) for p in procs]
    assert codes == [0, 0, 0], "\n".join("".join(logs(out, "ref", r)) for r in range(3))
    return out / "log.h5"


@pytest.mark.parametrize("killed", [2, 0])
def test_with_3_ranks_every_survivor_names_the_killed_rank_and_resume_is_bit_identical(data, reference_3, tmp_path,
                                                                                      killed):
    survivors = [r for r in range(3) if r != killed]
    out = tmp_path / "run"
    procs = launch(["--data", data, *TRAIN_3], out, "run", world=3)
    t0 = time.monotonic()
    while not checkpoints(out) and all(p.poll() is None for p in procs) and time.monotonic() - t0 < LIMIT_S:
        time.sleep(0.02)
    assert checkpoints(out) and all(p.poll() is None for p in procs), "\n".join(
        "".join(logs(out, "run", r)) for r in range(3))
    procs[killed].send_signal(signal.SIGKILL)
    t_kill = time.monotonic()
    procs[killed].wait()
    delays = {}  # survivor -> seconds from the kill to its exit, polled together
    while len(delays) < len(survivors) and time.monotonic() - t_kill < TIMEOUT_S + EXIT_SLACK_S + 60:
        for r in survivors:
            if r not in delays and procs[r].poll() is not None:
                delays[r] = time.monotonic() - t_kill
        time.sleep(0.02)
    for r in survivors:
        code = wait(procs[r], 1)
        assert code != 0, "".join(logs(out, "run", r))
    assert max(delays.values()) <= TIMEOUT_S + EXIT_SLACK_S, f"the survivors took {delays} s to exit"

    # Each survivor's one line names the killed rank: learnt at the roll call (rank 2), or from the store that
    # rank 0 served no longer answering.
    how = (rf"a connection closed, and it did not answer at the rendezvous store within {ROLL_CALL_S:g} s" if killed
           else "a connection closed, and the rendezvous store it serves does not answer")
    ckpts = checkpoints(out)
    newest = ckpts[-1]
    check_checkpoint_whole(newest)
    assert step_of(newest) < MAX_ITERS_3, "the kill landed after the run's end"
    ops = []
    for r in survivors:
        line = error_line(logs(out, "run", r)[1])
        m = re.search(rf"\(gloo, rank {r}/3\): (.+?) failed: rank {killed} is gone \({re.escape(how)}; timeout "
                      rf"{TIMEOUT_S:g} s\): .*; continue on every rank with: gaugelab train --resume --out "
                      rf"{re.escape(str(out))} \(the last checkpoint: step (\d+)\)$", line)
        assert m, line
        assert int(m[2]) == step_of(newest), (line, ckpts)
        ops.append(m[1])

    # Every rank resumes from the last checkpoint and finishes; the log is the uninterrupted run's, bit for bit.
    procs = launch(["--resume", "--dist-timeout-s", TIMEOUT_S], out, "resume", world=3)
    codes = [wait(p, LIMIT_S) for p in procs]
    assert codes == [0, 0, 0], "\n".join("".join(logs(out, "resume", r)) for r in range(3))
    stdout0, stderr0 = logs(out, "resume", 0)
    assert f"resumed from {newest}" in stdout0, stdout0
    cmp = subprocess.run([sys.executable, str(SOAK_COMPARE), str(reference_3), str(out / "log.h5")],
                         capture_output=True, text=True, timeout=LIMIT_S)
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    load = os.getloadavg()[0]
    exits = ", ".join(f"rank {r} after {delays[r]:.2f} s in the {op}" for r, op in zip(survivors, ops))
    print(f"\ndead rank of 3: rank {killed} SIGKILLed after the checkpoint of step {step_of(ckpts[0])}; both survivors "
          f"named it and exited non-zero: {exits} (--dist-timeout-s {TIMEOUT_S}); resumed from step "
          f"{step_of(newest)}: {cmp.stdout.strip()} (load {load:.1f})")


def test_with_3_ranks_a_stopped_store_host_ends_the_others_in_one_line_within_the_bound(data, tmp_path):
    """Rank 0 stopped (SIGSTOP: alive, its sockets open, the store it serves silent) after the first checkpoint.
    Neither survivor may call it gone: each says it did not take part within the timeout, that the store does
    not answer, and to stop every rank, and exits within the collective's timeout and the roll call's bound
    (twice the window and 1.5 s, gpt2/dist/roll_call.hpp) plus teardown."""
    out = tmp_path / "run"
    procs = launch(["--data", data, *TRAIN_3], out, "run", world=3)
    t0 = time.monotonic()
    try:
        while not checkpoints(out) and all(p.poll() is None for p in procs) and time.monotonic() - t0 < LIMIT_S:
            time.sleep(0.02)
        assert checkpoints(out) and all(p.poll() is None for p in procs), "\n".join(
            "".join(logs(out, "run", r)) for r in range(3))
        procs[0].send_signal(signal.SIGSTOP)
        t_stop = time.monotonic()
        delays = {}
        while len(delays) < 2 and time.monotonic() - t_stop < TIMEOUT_S + EXIT_SLACK_S + 60:
            for r in (1, 2):
                if r not in delays and procs[r].poll() is not None:
                    delays[r] = time.monotonic() - t_stop
            time.sleep(0.02)
        for r in (1, 2):
            assert wait(procs[r], 1) != 0, "".join(logs(out, "run", r))
    finally:
        procs[0].send_signal(signal.SIGCONT)
        procs[0].kill()
        procs[0].wait()
    bound = TIMEOUT_S + 2 * ROLL_CALL_S + 1.5
    assert max(delays.values()) <= bound + EXIT_SLACK_S, f"the survivors took {delays} s to exit (bound {bound} s)"
    newest = checkpoints(out)[-1]
    check_checkpoint_whole(newest)
    for r in (1, 2):
        line = error_line(logs(out, "run", r)[1])
        assert "is gone" not in line, line
        m = re.search(rf"\(gloo, rank {r}/3\): .+ failed: rank 0 did not take part within the timeout \(stuck, or "
                       rf"dead with its connection open; the rendezvous store it serves does not answer; timeout "
                       rf"{TIMEOUT_S:g} s\): .*; stop every rank, then continue on every rank with: gaugelab train "
                       rf"--resume --out {re.escape(str(out))} \(the newest checkpoint found: step (\d+)\)$", line)
        assert m and int(m[1]) == step_of(newest), (line, checkpoints(out))
    print(f"\nstopped store host of 3: rank 0 SIGSTOPped after the checkpoint of step {step_of(checkpoints(out)[0])}; "
          f"survivors exited after {', '.join(f'{d:.2f}' for d in delays.values())} s (bound {bound:g} s + teardown; "
          f"load {os.getloadavg()[0]:.1f})")
