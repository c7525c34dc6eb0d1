#!/usr/bin/env python3
"""A resumable libFuzzer campaign: each target toward a count of executions, in a corpus that persists.

  scripts/fuzz_campaign.py [--goal 1e7] [--hours H] [--targets a,b] [--chunk-seconds S]   (`make fuzz-campaign`)
  scripts/fuzz_campaign.py --one-run --chunk-seconds 30    one 30 s run per target (each rate measured; counted)
  scripts/fuzz_campaign.py --table                          the table of where the campaign stands, nothing run

Each target runs alone (one worker, niced), in chunks of --chunk-seconds, in DIR/<target>/corpus (default
DIR: BUILD/fuzz-campaign, outside the source tree), until its ledger reaches --goal executions or --hours of
wall time are spent; the targets are taken in the order given. LEDGERS/<target>.tsv (default: the source tree's
fuzz/campaign/, committed, since machines are not kept: a campaign resumed on a new machine goes on counting from
it, in a new corpus) has a row per run:
its executions (libFuzzer's final `stat::number_of_executed_units`, or, for a run that ended without final
stats, its last `#N` progress line: a lower bound), wall and CPU seconds, exit status and corpus size; a
target's count is the sum over its rows, over every resumption. Stop it with Ctrl-C (the running target is
interrupted, prints its stats and is recorded) and start it again with the same arguments to go on. A run
found unrecorded at the start (the campaign itself was killed) is recorded from its log first.

A crash, hang (-timeout), out-of-memory, leak or sanitizer report ends that target's part of the campaign (a
timeout whose input runs alone with exit 0 in a tenth of the timeout's CPU time was the loaded machine's: it is
kept in artifacts/load-timeouts/ and the campaign goes on);
its input is copied into the source tree's fuzz/regressions/<target>/, which the fuzz smoke (scripts/fuzz.sh,
CI) replays. At the end the script prints one Markdown table (the README's Fuzzing table is this output).
Needs the sanitizer build with the fuzz targets (`make test-asan`); BUILD= names it, default build-asan.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = "safetensors hf_import model_config token_files tokenizer options corpus_reader run_log".split()
LEDGER_HEADER = "finished_utc\tseconds\tcpu_seconds\texecutions\tcounted\texit\tcorpus"
TIMEOUT_S = 10  # libFuzzer's -timeout: wall seconds on one input
ARTIFACT = re.compile(r"^(crash|timeout|oom|leak|slow-unit)-")


def fail(msg: str, code: int = 2) -> None:
    print(f"fuzz-campaign: {msg}", file=sys.stderr)
    sys.exit(code)


def executions_in_log(text: str) -> tuple[int, str]:
    """The executions a libFuzzer log reports: (N, "final") from its final stats, else (N, "lower bound")
    from its last `#N` status line (a run killed before its final stats), else (0, "none")."""
    final = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
    if final:
        return int(final[-1]), "final"
    progress = re.findall(r"^#(\d+)\s", text, flags=re.M)
    if progress:
        return int(progress[-1]), "lower bound"
    return 0, "none"


def read_ledger(path: Path) -> list[dict]:
    """The ledger's rows as dicts of the header's columns (an absent ledger is empty)."""
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    if not lines or lines[0] != LEDGER_HEADER:
        fail(f"{path} is not a campaign ledger (its first line is not the header '{LEDGER_HEADER}')")
    keys = LEDGER_HEADER.split("\t")
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != len(keys):
            fail(f"{path} line {i}: {len(cells)} columns, not {len(keys)}")
        row = dict(zip(keys, cells))
        for k in ("seconds", "cpu_seconds"):
            row[k] = float(row[k])
        for k in ("executions", "exit", "corpus"):
            row[k] = int(row[k])
        rows.append(row)
    return rows


def append_ledger(path: Path, seconds: float, cpu_seconds: float, executions: int, counted: str, rc: int,
                  corpus: int) -> None:
    new = not path.exists()
    with path.open("a") as f:
        if new:
            f.write(LEDGER_HEADER + "\n")
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        f.write(f"{now}\t{seconds:.1f}\t{cpu_seconds:.1f}\t{executions}\t{counted}\t{rc}\t{corpus}\n")


def totals(rows: list[dict]) -> dict:
    return {
        "executions": sum(r["executions"] for r in rows),
        "seconds": sum(r["seconds"] for r in rows),
        "cpu_seconds": sum(r["cpu_seconds"] for r in rows),
        "runs": len(rows),
        "lower_bounds": sum(r["counted"] != "final" for r in rows),
    }


def file_count(d: Path) -> int:
    return sum(1 for p in d.iterdir() if p.is_file()) if d.is_dir() else 0


def findings(target_dir: Path) -> list[Path]:
    a = target_dir / "artifacts"
    return sorted(p for p in a.iterdir() if ARTIFACT.match(p.name)) if a.is_dir() else []


def hours(s: float) -> str:
    return f"{s / 3600:.2f}"


def table(campaign: Path, ledgers: Path, targets: list[str], goal: int) -> str:
    """The campaign's state as a Markdown table, one row per target; the CPU time still needed is the
    executions left divided by the rate the ledger measured (executions per CPU second)."""
    out = [f"| target | executions | {goal:,} reached | runs | wall h | CPU h | exec/s (wall) | exec per CPU s "
           f"| corpus | findings | CPU h to goal |",
           "|---|---:|:-:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in targets:
        d = campaign / t
        rows = read_ledger(ledgers / f"{t}.tsv")
        s = totals(rows)
        timed = [r for r in rows if r["cpu_seconds"] > 0]  # a run recorded after the campaign was killed has no CPU time
        cpu = sum(r["cpu_seconds"] for r in timed)
        rate = sum(r["executions"] for r in timed) / cpu if cpu > 0 else 0.0
        left = max(goal - s["executions"], 0)
        need = "0" if left == 0 else (hours(left / rate) if rate > 0 else "?")
        execs = f"{s['executions']:,}" + (" (lower bound)" if s["lower_bounds"] else "")
        wall_rate = s["executions"] / s["seconds"] if s["seconds"] > 0 else 0.0
        out.append(f"| {t} | {execs} | {'yes' if left == 0 else 'no'} | {s['runs']} | {hours(s['seconds'])} "
                   f"| {hours(s['cpu_seconds'])} | {wall_rate:.0f} | {rate:.0f} | {file_count(d / 'corpus')} "
                   f"| {len(findings(d))} | {need} |")
    return "\n".join(out)


class Campaign:
    def __init__(self, args: argparse.Namespace):
        self.build = Path(args.build)
        self.dir = Path(args.dir) if args.dir else self.build / "fuzz-campaign"
        self.ledgers = Path(args.ledgers)
        self.regressions = Path(args.regressions)
        self.goal = args.goal
        self.chunk = args.chunk_seconds
        self.deadline = time.monotonic() + args.hours * 3600 if args.hours else None
        self.nice = args.nice
        self.one_run = args.one_run
        self.stop = False
        self.child: subprocess.Popen | None = None

    def interrupt(self, signum, _frame) -> None:
        self.stop = True
        if self.child and self.child.poll() is None:
            self.child.send_signal(signal.SIGINT)  # libFuzzer prints its final stats and exits

    def record(self, t: str, log: Path, seconds: float, cpu: float, rc: int) -> int:
        d = self.dir / t
        executions, counted = executions_in_log(log.read_text(errors="replace"))
        # The mark goes first: a campaign killed between the two leaves the run uncounted (the count stays a
        # lower bound), never counted twice.
        (d / "running").unlink(missing_ok=True)
        append_ledger(self.ledger(t), seconds, cpu, executions, counted, rc, file_count(d / "corpus"))
        return executions

    def ledger(self, t: str) -> Path:
        path = self.ledgers / f"{t}.tsv"
        old = self.dir / t / "ledger.tsv"  # where a campaign kept it before the ledgers moved into the source tree
        if old.exists() and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(old, path)
            print(f"  {t}: its ledger {old} is now {path} (commit it)", flush=True)
        return path

    def recover(self, t: str) -> None:
        """Records a run that the campaign did not (it was killed while the run went on)."""
        mark = self.dir / t / "running"
        if not mark.exists():
            return
        try:
            pid_text, log_name, started = mark.read_text().split()
            pid, started = int(pid_text), float(started)
        except ValueError:
            fail(f"{mark} is not a run mark ('PID LOG START'): remove it if no run of {t} is going")
        log = self.dir / t / "logs" / log_name
        if not log.exists():
            fail(f"{mark} names {log}, which does not exist: remove the mark if no run of {t} is going")
        try:
            if pid <= 0:  # marked before its start: the campaign was killed before the fuzzer started, or just after
                raise ProcessLookupError
            os.kill(pid, 0)
            alive = Path(f"/proc/{pid}/cmdline").read_bytes().find(f"fuzz_{t}".encode()) >= 0
        except (ProcessLookupError, PermissionError, FileNotFoundError):
            alive = False
        if alive:
            fail(f"a run of {t} (pid {pid}) from an earlier campaign is still going: wait for it or stop it")
        self.record(t, log, max(log.stat().st_mtime - started, 0.0), 0.0, -1)
        print(f"  {t}: recorded an unrecorded run from {log}")

    def seeds(self) -> Path:
        seeds = self.dir / "seeds"
        r = subprocess.run([str(self.build / "fuzz" / "make_fuzz_seeds"), str(seeds)], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"making the seed corpora failed: {(r.stderr or r.stdout).strip()}", 1)
        return seeds

    def load_timeout(self, t: str, artifact: Path, env: dict) -> bool:
        """Whether a timeout or slow-unit artifact was the machine's, not the reader's: libFuzzer's -timeout and its
        slow-unit report (-report_slow_units, 10 s) count wall time, so a worker starved of CPU on a loaded machine,
        or stopped (a SIGSTOP, a suspended session: a 432 s "slowest unit" on an input that alone takes 0.05 s), can
        pass them on an input that takes milliseconds. The input is run once more alone (not niced); when that run
        ends with exit 0 inside the timeout, taking under TIMEOUT_S / 10 of CPU and of wall time, the artifact moves to
        artifacts/load-timeouts/ (kept, not a finding) and the campaign goes on. A real hang (a loop, or a wait)
        or a really slow input fails that test too and stays a finding."""
        if not artifact.name.startswith(("timeout-", "slow-unit-")):
            return False
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        try:
            r = subprocess.run([str(self.build / "fuzz" / f"fuzz_{t}"), f"-timeout={TIMEOUT_S}", str(artifact)],
                               env=env, capture_output=True, timeout=TIMEOUT_S * 3)
            rc = r.returncode
        except subprocess.TimeoutExpired:
            rc = None
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        wall = time.monotonic() - start
        if rc != 0 or cpu >= TIMEOUT_S / 10 or wall >= TIMEOUT_S / 10:  # wall too: an input that waits, not computes
            return False
        kept = artifact.parent / "load-timeouts"
        kept.mkdir(exist_ok=True)
        shutil.move(str(artifact), kept / artifact.name)
        load = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
        print(f"  {t}: {artifact.name} was the machine's: alone it ran in {cpu:.2f} CPU s ({wall:.2f} s) with exit 0 (load "
              f"{' '.join(load)}); kept in {kept}, not a finding", flush=True)
        return True

    def run_target(self, t: str, seeds: Path) -> bool:
        """Runs `t` in chunks until its goal, the deadline or a stop; False if it ended in a finding."""
        d = self.dir / t
        for sub in ("corpus", "artifacts", "logs", "tmp"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        self.recover(t)
        earlier = findings(d)
        if earlier:  # kept from an earlier run (and copied to the regressions then): not found again
            print(f"  {t}: not run: an earlier finding is still in {d / 'artifacts'} ({', '.join(p.name for p in earlier)});"
                  f" fix it, then remove it to fuzz {t} again", flush=True)
            return False
        sizes = [p.stat().st_size for p in (seeds / t).iterdir()] if (seeds / t).is_dir() else []
        max_len = max(sizes + [65536])
        while not self.stop:
            done = totals(read_ledger(self.ledger(t)))["executions"]
            if done >= self.goal:
                print(f"  {t}: {done:,} executions, goal {self.goal:,} reached")
                return True
            seconds = self.chunk
            if self.deadline is not None:
                seconds = min(seconds, int(self.deadline - time.monotonic()))
                if seconds < 5:
                    self.stop = True
                    break
            log = d / "logs" / f"run-{len(list((d / 'logs').iterdir())) + 1:04d}.log"
            dirs = [d / "corpus", seeds / t]
            if (self.regressions / t).is_dir():
                dirs.append(self.regressions / t)
            cmd = [str(self.build / "fuzz" / f"fuzz_{t}"), *map(str, dirs), f"-max_total_time={seconds}",
                   f"-runs={self.goal - done}", f"-timeout={TIMEOUT_S}", "-rss_limit_mb=2048", f"-max_len={max_len}",
                   "-print_final_stats=1", f"-artifact_prefix={d / 'artifacts'}/"]
            env = dict(os.environ, TMPDIR=str(d / "tmp"))
            # allocation stacks of 2 frames (ASan's default 30): recording them was a fifth of the INI target's time
            # (15 s runs: 16,310 and 16,209 executions against 21,954 and 19,498); a finding's input is kept, and
            # replayed with whole stacks by scripts/fuzz.sh (CI's smoke reads fuzz/regressions/). Not for the run
            # log, whose libhdf5 leak suppression (fuzz/lsan.supp) is matched on the leak's stack.
            env.setdefault("ASAN_OPTIONS", "detect_leaks=1" + ("" if t == "run_log" else ":malloc_context_size=2"))
            env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
            env.setdefault("LSAN_OPTIONS", f"suppressions={ROOT / 'fuzz' / 'lsan.supp'}:print_suppressions=0")
            load = open("/proc/loadavg").read().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
            print(f"  {t}: {done:,} so far; a run of up to {seconds} s (load {' '.join(load)})", flush=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start_wall, start = time.time(), time.monotonic()
            with log.open("w") as out:
                (d / "running").write_text(f"0 {log.name} {start_wall}\n")  # before the start: a kill is recovered
                self.child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                              preexec_fn=lambda: os.nice(self.nice))
                (d / "running").write_text(f"{self.child.pid} {log.name} {start_wall}\n")
                if self.stop:  # a stop that came between the loop's check and the start
                    self.child.send_signal(signal.SIGINT)
                rc = self.child.wait()
                self.child = None
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            n = self.record(t, log, time.monotonic() - start, cpu, rc)
            print(f"  {t}: +{n:,} executions in {time.monotonic() - start:.0f} s ({cpu:.0f} CPU s), exit {rc}",
                  flush=True)
            artifacts = findings(d)
            found = [p for p in artifacts if not self.load_timeout(t, p, env)]
            if found:
                dest = self.regressions / t
                dest.mkdir(parents=True, exist_ok=True)
                for p in found:
                    shutil.copy2(p, dest / p.name)
                print(f"  {t}: FINDING: {', '.join(p.name for p in found)} (copied to {dest}; log {log})")
                return False
            if rc != 0 and not self.stop and not artifacts:  # a load timeout set aside: the next run goes on
                fail(f"{t} exited {rc} without an input kept: see {log}", 1)
            if self.one_run:
                return True
        return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("BUILD", "build-asan"), help="the sanitizer build")
    ap.add_argument("--dir", help="the campaign's directory (default BUILD/fuzz-campaign)")
    ap.add_argument("--ledgers", default=str(ROOT / "fuzz" / "campaign"),
                    help="where each target's ledger (TARGET.tsv) is kept (default: the source tree's fuzz/campaign, "
                         "to be committed)")
    ap.add_argument("--regressions", default=str(ROOT / "fuzz" / "regressions"),
                    help="where a finding's input is copied (default: the source tree's fuzz/regressions)")
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated, in the order they run")
    ap.add_argument("--goal", type=float, default=1e7, help="executions per target (default 1e7)")
    ap.add_argument("--hours", type=float, default=0.0, help="stop after this much wall time (0: no limit)")
    ap.add_argument("--chunk-seconds", type=int, default=900, help="the length of one run (default 900)")
    ap.add_argument("--nice", type=int, default=10, help="the niceness of the fuzzer (default 10)")
    ap.add_argument("--one-run", action="store_true",
                    help="one run per target (of --chunk-seconds): a rate measurement that also counts")
    ap.add_argument("--table", action="store_true", help="print where the campaign stands and run nothing")
    args = ap.parse_args()
    targets = [t for t in args.targets.split(",") if t]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown or not targets:
        fail(f"unknown target '{unknown[0] if unknown else ''}' (the targets: {', '.join(TARGETS)})")
    if not (args.goal >= 1 and args.goal == int(args.goal)):
        fail(f"--goal must be a whole number of executions, not {args.goal:g}")
    args.goal = int(args.goal)
    if args.chunk_seconds < 5 or args.hours < 0:
        fail("--chunk-seconds must be at least 5 and --hours not negative")
    c = Campaign(args)
    if not args.table:
        for t in targets:
            if not os.access(c.build / "fuzz" / f"fuzz_{t}", os.X_OK):
                fail(f"{c.build}/fuzz/fuzz_{t} is missing: run `make test-asan` (or build target fuzz_all) first")
        signal.signal(signal.SIGINT, c.interrupt)
        signal.signal(signal.SIGTERM, c.interrupt)
        c.dir.mkdir(parents=True, exist_ok=True)
        c.ledgers.mkdir(parents=True, exist_ok=True)
        print(f"fuzz-campaign: goal {args.goal:,} executions per target, in {c.dir}, on {os.cpu_count()} cores")
        seeds = c.seeds()
        clean = True
        for t in targets:
            if c.stop:
                break
            clean = c.run_target(t, seeds) and clean
        print(f"fuzz-campaign: {'stopped' if c.stop else 'done'}; resume with the same command")
    print(table(c.dir, c.ledgers, targets, args.goal))
    return 0 if args.table or clean else 1


if __name__ == "__main__":
    sys.exit(main())
