"""scripts/fuzz_campaign.py: its ledger sums executions over resumptions, stops a target at the goal, counts
a run killed before its final stats as a lower bound, records a run the campaign did not, and copies a
finding into the regressions directory. A stand-in fuzzer (a Python script printing libFuzzer's lines) runs
in place of the sanitizer build's targets."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "fuzz_campaign.py"
sys.path.insert(0, str(ROOT / "scripts"))
import fuzz_campaign  # noqa: E402

# Does -runs=N executions (at most FAKE_MAX of them), adds FAKE_NEW corpus files, and ends as FAKE_MODE says:
# "ok" (final stats), "killed" (progress lines only, exit 137), "crash" (an artifact, exit 1), "timeout" (an
# artifact, exit 70), "slow" (a slow-unit artifact, exit 0).
FAKE = r'''#!PYTHON -S
import os, re, sys
args = sys.argv[1:]
opt = {a[1:].split("=", 1)[0]: a.split("=", 1)[1] for a in args if a.startswith("-")}
dirs = [a for a in args if not a.startswith("-")]
if "runs" not in opt:  # one input run again alone: FAKE_REPLAY says whether it hangs there too
    sys.exit(70 if os.environ.get("FAKE_REPLAY", "ok") == "hang" else 0)
n = min(int(opt["runs"]), int(os.environ.get("FAKE_MAX", "1000000000")))
for i in range(int(os.environ.get("FAKE_NEW", "1"))):
    open(os.path.join(dirs[0], "unit%d-%d" % (os.getpid(), i)), "w").write("x")
with open(os.environ["FAKE_ARGS"], "a") as f:
    f.write(" ".join(args) + "\n")
mode = os.environ.get("FAKE_MODE", "ok")
print("INFO: Seed: 1")
print("#%d\tpulse  cov: 1 ft: 1 corp: 1/1b exec/s: 1 rss: 1Mb" % (n // 2))
print("#%d\tNEW    cov: 1 ft: 1 corp: 1/1b exec/s: 1 rss: 1Mb" % n)
if mode == "killed":
    sys.exit(137)
if mode == "crash":
    open(opt["artifact_prefix"] + "crash-abc123", "w").write("boom")
    print("==1== ERROR: AddressSanitizer: heap-buffer-overflow")
if mode == "timeout":
    open(opt["artifact_prefix"] + "timeout-def456", "w").write("slow?")
    print("==1== ERROR: libFuzzer: timeout after 15 seconds")
    sys.exit(70)
if mode == "slow":  # libFuzzer's slow-unit report: wall time, exit 0
    print("Slowest unit: 432 s:")
    open(opt["artifact_prefix"] + "slow-unit-789abc", "w").write("stopped?")
print("stat::number_of_executed_units: %d" % n)
print("stat::average_exec_per_sec:     %d" % n)
sys.exit(1 if mode == "crash" else 0)
'''


def make_build(tmp_path: Path) -> Path:
    fuzz = tmp_path / "build" / "fuzz"
    fuzz.mkdir(parents=True)
    for name in [f"fuzz_{t}" for t in fuzz_campaign.TARGETS]:
        (fuzz / name).write_text(FAKE.replace("PYTHON", sys.executable))
    (fuzz / "make_fuzz_seeds").write_text("#!/bin/sh\nmkdir -p \"$1/options\" && echo s > \"$1/options/seed\"\n")
    for p in fuzz.iterdir():
        p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return tmp_path / "build"


def campaign(tmp_path: Path, *args, mode="ok", max_runs=None, new=1, replay="ok"):
    env = dict(os.environ, FAKE_MODE=mode, FAKE_NEW=str(new), FAKE_ARGS=str(tmp_path / "args.txt"), FAKE_REPLAY=replay)
    if max_runs is not None:
        env["FAKE_MAX"] = str(max_runs)
    cmd = [sys.executable, str(SCRIPT), "--build", str(tmp_path / "build"), "--dir", str(tmp_path / "camp"),
           "--ledgers", str(tmp_path / "ledgers"), "--regressions", str(tmp_path / "regressions"), "--nice", "0", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)


def ledger(tmp_path: Path, t: str) -> list[dict]:
    return fuzz_campaign.read_ledger(tmp_path / "ledgers" / f"{t}.tsv")


def test_executions_are_read_from_final_stats_else_the_last_progress_line():
    final = "#512\tpulse\n#900\tNEW cov\nstat::number_of_executed_units: 1000\n"
    assert fuzz_campaign.executions_in_log(final) == (1000, "final")
    assert fuzz_campaign.executions_in_log("INFO: x\n#512\tpulse\n#900\tNEW cov\n") == (900, "lower bound")
    assert fuzz_campaign.executions_in_log("INFO: nothing ran\n") == (0, "none")


def test_resumptions_sum_in_the_ledger_and_the_goal_stops_a_target(tmp_path):
    make_build(tmp_path)
    # Each run is cut at 400 executions (as a time limit would): three runs reach the goal of 1000,
    # the last one asked for only the 200 left.
    r = campaign(tmp_path, "--targets", "options", "--goal", 1000, max_runs=400)
    assert r.returncode == 0, r.stderr
    rows = ledger(tmp_path, "options")
    assert [row["executions"] for row in rows] == [400, 400, 200]
    assert all(row["counted"] == "final" and row["exit"] == 0 for row in rows)
    assert (tmp_path / "args.txt").read_text().splitlines()[-1].count("-runs=200") == 1
    assert [row["corpus"] for row in rows] == [1, 2, 3]
    # Resumed after the goal: nothing more runs, and the table says the goal is reached.
    r = campaign(tmp_path, "--targets", "options", "--goal", 1000)
    assert r.returncode == 0 and len(ledger(tmp_path, "options")) == 3
    row = [line for line in r.stdout.splitlines() if line.startswith("| options |")][0]
    assert row.split("|")[2].strip() == "1,000" and row.split("|")[3].strip() == "yes"
    # A higher goal resumes from 1000, in the same corpus.
    r = campaign(tmp_path, "--targets", "options", "--goal", 1500)
    assert r.returncode == 0
    assert [row["executions"] for row in ledger(tmp_path, "options")] == [400, 400, 200, 500]
    assert "-runs=500" in (tmp_path / "args.txt").read_text().splitlines()[-1]


def test_a_new_machine_goes_on_counting_from_the_committed_ledger_in_a_new_corpus(tmp_path):
    make_build(tmp_path)
    r = campaign(tmp_path, "--targets", "options", "--goal", 1000, max_runs=600)
    assert r.returncode == 0, r.stderr
    import shutil
    shutil.rmtree(tmp_path / "camp")  # the machine is replaced: the corpus and logs are gone, the ledger is not
    r = campaign(tmp_path, "--targets", "options", "--goal", 1500, max_runs=600)
    assert r.returncode == 0, r.stderr
    rows = ledger(tmp_path, "options")
    assert [row["executions"] for row in rows] == [600, 400, 500]
    assert [row["corpus"] for row in rows] == [1, 2, 1]  # the third run's corpus started anew
    assert "-runs=500" in (tmp_path / "args.txt").read_text().splitlines()[-1]


def test_a_killed_run_counts_its_last_progress_line_as_a_lower_bound(tmp_path):
    make_build(tmp_path)
    r = campaign(tmp_path, "--targets", "tokenizer", "--goal", 1000, mode="killed", max_runs=300)
    assert r.returncode == 1 and "exited 137 without an input kept" in r.stderr
    rows = ledger(tmp_path, "tokenizer")
    assert len(rows) == 1 and rows[0]["executions"] == 300 and rows[0]["counted"] == "lower bound"
    assert "(lower bound)" in campaign(tmp_path, "--targets", "tokenizer", "--table").stdout


def test_a_run_the_campaign_did_not_record_is_recorded_on_resumption(tmp_path):
    make_build(tmp_path)
    d = tmp_path / "camp" / "safetensors"
    (d / "logs").mkdir(parents=True)
    (d / "logs" / "run-0001.log").write_text("#4096\tpulse\nstat::number_of_executed_units: 5000\n")
    (d / "running").write_text("999999999 run-0001.log 0\n")  # no such process: the campaign was killed
    r = campaign(tmp_path, "--targets", "safetensors", "--goal", 6000)
    assert r.returncode == 0, r.stderr
    assert [row["executions"] for row in ledger(tmp_path, "safetensors")] == [5000, 1000]
    assert not (d / "running").exists()


def test_a_finding_is_copied_to_the_regressions_and_ends_that_target_only(tmp_path):
    make_build(tmp_path)
    r = campaign(tmp_path, "--targets", "run_log,options", "--goal", 100, mode="crash")
    assert r.returncode == 1
    assert (tmp_path / "regressions" / "run_log" / "crash-abc123").read_text() == "boom"
    assert "FINDING: crash-abc123" in r.stdout
    assert len(ledger(tmp_path, "run_log")) == 1 and len(ledger(tmp_path, "options")) == 1  # options still ran
    table = [line for line in r.stdout.splitlines() if line.startswith("| run_log |")][0]
    assert table.split("|")[10].strip() == "1"
    # Until its input is removed from the artifacts (after the fix), the target is not run again, and the old
    # finding is not reported as a new one.
    r = campaign(tmp_path, "--targets", "run_log", "--goal", 200)
    assert r.returncode == 1 and "not run: an earlier finding" in r.stdout and "FINDING" not in r.stdout
    assert len(ledger(tmp_path, "run_log")) == 1
    # Removed, the target runs, and the regressions directory is read with the corpus.
    for p in (tmp_path / "camp" / "run_log" / "artifacts").iterdir():
        p.unlink()
    r = campaign(tmp_path, "--targets", "run_log", "--goal", 200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert str(tmp_path / "regressions" / "run_log") in (tmp_path / "args.txt").read_text().splitlines()[-1]


# libFuzzer's -timeout is wall time: a worker starved on a loaded machine passed it on inputs that run in milliseconds
# (tokenizer and token files, niced at load ~7). Its slow-unit report is wall time too: a worker stopped for minutes
# (a SIGSTOP, a suspended session) reported a 432 s unit on a run-log input that alone takes 0.05 s. Such an input
# is run once more alone; one that hangs (or fails) alone too is a finding.
@pytest.mark.parametrize("mode, artifact, quick, slow", [("timeout", "timeout-def456", "tokenizer", "token_files"),
                                                         ("slow", "slow-unit-789abc", "run_log", "options")])
def test_a_wall_clock_report_that_does_not_recur_alone_was_the_machines_and_the_campaign_goes_on(
        tmp_path, mode, artifact, quick, slow):
    make_build(tmp_path)
    r = campaign(tmp_path, "--targets", quick, "--goal", 100, mode=mode)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{artifact} was the machine's" in r.stdout and "FINDING" not in r.stdout
    assert (tmp_path / "camp" / quick / "artifacts" / "load-timeouts" / artifact).exists()
    assert not (tmp_path / "regressions" / quick).exists()
    r = campaign(tmp_path, "--targets", slow, "--goal", 100, mode=mode, replay="hang")
    assert r.returncode == 1 and f"FINDING: {artifact}" in r.stdout
    assert (tmp_path / "regressions" / slow / artifact).exists()


def test_bad_arguments_are_one_line_errors(tmp_path):
    make_build(tmp_path)
    r = campaign(tmp_path, "--targets", "nosuch")
    assert r.returncode == 2 and r.stderr.startswith("fuzz-campaign: unknown target 'nosuch'")
    r = campaign(tmp_path, "--goal", 1.5)
    assert r.returncode == 2 and "--goal must be a whole number" in r.stderr
    (tmp_path / "camp" / "options").mkdir(parents=True)
    (tmp_path / "ledgers").mkdir()
    (tmp_path / "ledgers" / "options.tsv").write_text("garbage\n")
    r = campaign(tmp_path, "--targets", "options", "--table")
    assert r.returncode == 2 and "is not a campaign ledger" in r.stderr
