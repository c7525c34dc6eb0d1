#!/usr/bin/env python3
"""Rebuild every figure from declared inputs, showyourwork-style.

Two declarations drive it:
  EXPERIMENTS (analysis/manifest.py): name -> (command, output log, inputs it depends on)  [expensive; cached
               under runs/]
  FIGURE = Figure(...) at the top of each analysis/figures/ script: the experiment logs it reads, the paper's
               value and the claim rule  [cheap; always re-drawn]

An experiment re-runs only when its log is missing or older than what made it (the gaugelab
binary, its config file). Plotting never re-runs an experiment by itself: a figure whose log is
missing fails with the command that makes it. Interpreter: Debian's /usr/bin/python3 (h5py,
matplotlib, numpy from apt) — the project's one analysis Python.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "analysis"))

import lr_grid  # noqa: E402
import manifest  # noqa: E402


def stale(output: Path, deps: list[Path]) -> bool:
    if not output.exists():
        return True
    t = output.stat().st_mtime
    return any(d.exists() and d.stat().st_mtime > t for d in deps)


# The verbs the torch-free gaugelab runs itself (the others need gaugelab-torch).
TORCH_FREE_VERBS = ("toy", "sweep", "diag")


def tier_selection(tier: str) -> set[str]:
    """The experiments and figure scripts of a tier: "torch-free" (the experiments of TORCH_FREE_VERBS and the
    figures that read nothing else) or "torch" (all the others)."""
    free = {n for n, e in manifest.EXPERIMENTS.items() if e["args"][0] in TORCH_FREE_VERBS}
    free |= {s for s, f in manifest.figures().items() if set(f.inputs) <= free}
    return free if tier == "torch-free" else (set(manifest.EXPERIMENTS) | set(manifest.figures())) - free


def finished(log: Path) -> bool:
    """A training run's log says it completed or diverged (a diverged run stops the same way every time)."""
    try:
        import h5py

        with h5py.File(log, "r") as f:
            a = f["summary"].attrs
            return int(a.get("completed", 0)) == 1 or int(a.get("diverged", 0)) == 1
    except (OSError, KeyError, ValueError):
        return False


def run_one(binary: Path, name: str, exp: dict, launch: list[str] | None = None,
            to_file: bool = False) -> tuple[str, float, subprocess.CompletedProcess]:
    """Runs one experiment. A resumable one (a training run) with checkpoints is resumed (--resume), anything
    else starts afresh (--force). to_file: its output goes to <out_arg>.txt (runs in parallel), else it is kept."""
    out = ROOT / exp["out"]
    # "out_arg": what --out takes when the verb writes a directory (train: DIR, log at DIR/log.h5)
    out_arg = ROOT / exp.get("out_arg", exp["out"])
    args = manifest.resolve(exp["args"], lambda n: ROOT / manifest.EXPERIMENTS[n].get("out_arg", manifest.EXPERIMENTS[n]["out"]))
    ckpts = out_arg / "checkpoints"
    mode = "--resume" if exp.get("resumable") and ckpts.is_dir() and any(ckpts.iterdir()) else "--force"
    cmd = (launch or []) + [str(binary)] + args + ["--out", str(out_arg), mode]
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    if to_file:
        with open(f"{out_arg}.txt", "w") as log:
            r = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True)
        r = subprocess.CompletedProcess(cmd, r.returncode, "", f"(output in {out_arg}.txt)")
    else:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    # exit 3: a training run that diverged, logged as such: a result, not a failure
    if r.returncode == 3 and exp.get("resumable") and finished(out):
        r = subprocess.CompletedProcess(cmd, 0, r.stdout, r.stderr)
    return name, time.time() - t0, r


def run_experiments(build: Path, only: set[str] | None, force: bool, jobs: int, on_done=None) -> None:
    """Runs the stale experiments, up to `jobs` at a time; one whose deps include another's log waits
    for it. Each experiment's output is printed when it ends; a failure stops everything after it. on_done(names),
    if given, is called with the experiments that are ready (up to date, or just finished) whenever that set grows."""
    binary = build / "gaugelab"
    todo, ready = {}, set()
    for name, exp in manifest.EXPERIMENTS.items():
        if only and name not in only:
            continue
        deps = [binary] + [ROOT / d for d in exp.get("deps", [])]
        if not force and not stale(ROOT / exp["out"], deps):
            print(f"[figures] {name}: up to date ({exp['out']})")
            ready.add(name)
            continue
        todo[name] = exp
    if on_done and ready:
        on_done(set(ready))
    outputs = {str(ROOT / e["out"]): n for n, e in todo.items()}
    waits = {n: {outputs[str(ROOT / d)] for d in e.get("deps", []) if str(ROOT / d) in outputs} for n, e in todo.items()}
    running: dict = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        while todo or running:
            for name in [n for n in todo if not (waits[n] & (set(todo) | set(running.values())))]:
                if len(running) >= max(1, jobs):
                    break
                exp = todo.pop(name)
                print(f"[figures] {name}: gaugelab {' '.join(exp['args'])}", flush=True)
                running[pool.submit(run_one, binary, name, exp)] = name
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                running.pop(fut)
                name, seconds, r = fut.result()
                if r.returncode != 0:
                    sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
                    raise SystemExit(f"[figures] {name} failed (exit {r.returncode}): "
                                     f"gaugelab {' '.join(manifest.EXPERIMENTS[name]['args'])}")
                print(f"[figures] {name}: done in {seconds:.1f} s", flush=True)
                ready.add(name)
            if on_done and done:
                on_done(set(ready))


def cpu_bf16(build: Path) -> str:
    """This machine's CPU bf16 matmul instructions as the build's trainer reads and logs them: `gaugelab info`'s
    "cpu bf16" line ("avx512_bf16", "-" for none), or "" when the build cannot say (no binary, no such line)."""
    try:
        out = subprocess.run([str(build / "gaugelab"), "info"], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return next((ln[len("cpu bf16"):].strip() for ln in out.splitlines() if ln.startswith("cpu bf16 ")), "")


def run_grid(build: Path, name: str, overrides: dict, jobs: int, shard: tuple[int, int], launch: list[str],
             rerun_ledger: bool = False) -> None:
    """Runs grid `name` of the manifest (its needed corpora first): every n-th run from the i-th of its declared
    order (shard (i, n)), skipping finished runs, resuming interrupted ones, `jobs` at a time, each run's output
    in <run dir>.txt. A run that fails stops the grid after the runs under way (their state is kept).

    The declared grid (no setting changed but appended with KEY+=, or a setting that only picks some of its runs, as
    SEEDS=... does) keeps its results ledger
    (analysis/results/<grid>.csv, committed) up to date after every finished run, and skips the runs that ledger
    already holds whose logs are elsewhere (another machine's: logs are never committed and machines are not kept),
    unless rerun_ledger."""
    if name in manifest.GRID_REQUIRES and overrides:  # its runs must be the declared ones, on the declared machine
        raise ValueError(f"grid {name} takes no --set ({', '.join(overrides)}): its runs are declared for "
                         f"{manifest.GRID_REQUIRES[name]} as they are")
    runs = manifest.grid(name, overrides)
    if manifest.GRID_REQUIRES.get(name) == "cpu-bf16" and (have := cpu_bf16(build)) in ("", "-"):
        if have == "-":
            raise ValueError(f"grid {name} runs only on a CPU with bf16 matmul; `{build / 'gaugelab'} info` says "
                             "cpu bf16 -")
        raise ValueError(f"grid {name} runs only on a CPU with bf16 matmul, and `{build / 'gaugelab'} info` cannot "
                         "tell: " + ("no such executable (make build)" if not (build / "gaugelab").exists() else
                                     "it printed no 'cpu bf16' line (a build older than the line? make build)"))
    writable_root(runs)
    needs = set(manifest.GRID_NEEDS.get(name, [])) if "data" not in overrides else set()  # their own corpus else
    if needs:
        run_experiments(build, needs, False, jobs)
    i, n = shard
    # The ledger holds the declared grid's runs only: settings appended with KEY+= (e.g. a device) keep the grid
    # declared, and so does a setting that only picks some of its runs (SEEDS or CONDITIONS naming the runs still
    # missing after a machine was lost: each picked run has the declared run's directory and arguments, so the
    # ledger's row for it is that run's result and it is not made again).
    appended = {k: v for k, v in overrides.items() if k.endswith("+")}
    whole = runs if len(appended) == len(overrides) else manifest.grid(name, appended)
    declared = all(whole.get(k) == e for k, e in runs.items())
    import results_ledger

    recorded = results_ledger.recorded(name) if declared and not rerun_ledger else set()
    todo = [(k, e) for j, (k, e) in enumerate(runs.items()) if j % n == i]
    for k, e in todo:
        set_aside_if_off_declaration(name, k, e)
    here = [(k, e) for k, e in todo if not finished(ROOT / e["out"])]
    left = [(k, e) for k, e in here if Path(k).name not in recorded]
    print(f"[grid] {name}: {len(runs)} runs, shard {i}/{n}: {len(todo)}, {len(todo) - len(here)} finished before"
          + (f", {len(here) - len(left)} more in its ledger (logs elsewhere; --rerun-ledger runs them again)"
             if len(here) > len(left) else ""), flush=True)
    binary = build / "gaugelab"
    failed: list[str] = []

    def failures(done) -> list[str]:
        bad = [f.result()[0] for f in done if f.result()[2].returncode != 0]
        if declared and len(bad) < len(done):  # a finished run is in the ledger at once: a lost machine loses no result
            try:
                results_ledger.write(name)
            except (Exception, SystemExit) as err:  # noqa: BLE001 - e.g. a log another run is writing: the next has it
                print(f"[grid] {name}: ledger not rewritten now ({err}); it is after the next run", flush=True)
        return bad

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running: set = set()
        for k, e in left:
            while len(running) >= max(1, jobs):
                done, running = wait(running, return_when=FIRST_COMPLETED)
                failed += failures(done)
            if failed:  # no new run after a failure; the ones under way finish and keep their state
                break
            print(f"[grid] {k}: {'resuming' if (ROOT / e['out_arg'] / 'checkpoints').is_dir() else 'starting'}", flush=True)
            running.add(pool.submit(run_one, binary, k, e, launch, True))
        failed += failures(wait(running)[0])
    if failed:
        raise SystemExit(f"[grid] {name}: {len(failed)} run(s) failed, e.g. {failed[0]} (output in {failed[0]}.txt)")
    print(f"[grid] {name}: shard {i}/{n} done; logs under {runs and Path(next(iter(runs.values()))['out_arg']).parent}",
          flush=True)
    # The results ledger (analysis/results/<grid>.csv, to be committed): the grid's finished runs so far, so that its
    # results outlive the logs. Only for the declared grid (settings appended with KEY+=, e.g. a device, allowed).
    if declared and left:
        try:
            print(f"[grid] {name}: ledger {results_ledger.write(name).relative_to(ROOT)} (commit it)", flush=True)
        except (Exception, SystemExit) as err:  # noqa: BLE001 - the runs are done and their logs kept: say so, go on
            print(f"[grid] {name}: ledger not written ({err}): `python3 analysis/results_ledger.py write {name}`",
                  flush=True)


def parse_sets(items: list[str]) -> dict:
    """--set KEY=VALUE items as a dict; a ValueError (a usage error) for an item without '='."""
    out = {}
    for it in items:
        if "=" not in it:
            raise ValueError(f"--set takes KEY=VALUE, not {it!r}")
        k, v = it.split("=", 1)
        out[k] = v
    return out


def parse_shard(text: str) -> tuple[int, int]:
    """I/N with shards numbered from 0, as `gaugelab sweep --shard` numbers them; a ValueError otherwise."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard takes I/N (e.g. 0/4), not {text!r}") from None
    if n >= 1 and i == n:
        raise ValueError(f"--shard {text}: shards are numbered from 0 (0/{n} .. {n - 1}/{n}); from a 1-based task id "
                         f"give {n - 1}/{n}")
    if not 0 <= i < n:
        raise ValueError(f"--shard {text}: need 0 <= I < N")
    return i, n


def set_aside_if_off_declaration(grid: str, name: str, exp: dict) -> None:
    """A run not made as its grid declares is moved out of the grid's folder, to <grid root>.set-aside/<run>.<why>
    with its output, kept, and run again from the start: a log, finished or not, that ran bf16 under another mode than
    its arguments declare (lr_grid.bf16_modes: a run started before the grid declared one, since `auto` chooses by
    machine and load; a bf16 run that logged no mode), or a finished run that results_ledger.off_declaration leaves
    out (e.g. one that does not show the CPU its grid requires). A run whose trainer is live (it holds its directory's
    lock, io::WriterLock) is left alone, and said so."""
    import fcntl

    want = manifest.flag_value(exp["args"], "--bf16-mode")
    log = ROOT / exp["out"]
    if not log.exists():
        return
    got = lr_grid.logged_bf16_modes(log) if want is not None else None
    why, said = "", ""
    if got is not None and got != want:
        why, said = f"bf16-{got}", f"its log ran bf16 {got}, the grid declares {want}"
    elif manifest.GRID_REQUIRES.get(grid) and finished(log):
        import results_ledger

        try:
            run = lr_grid.load(log)
        except Exception as err:  # noqa: BLE001 - a log that cannot be read whole is not judged here
            print(f"[grid] {name}: its log cannot be read whole ({err}); left as it is", flush=True)
            return
        off = results_ledger.off_declaration(grid, [run]) if run is not None else []
        if off:
            why, said = "off-declaration", f"it was not made as the grid declares: {off[0][1]}"
    if not why:
        return
    src = ROOT / exp.get("out_arg", exp["out"])
    fd = os.open(src, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the trainer's own lock on its run directory
        except BlockingIOError:
            print(f"[grid] {name}: {said}, but its trainer is running: left as it is", flush=True)
            return
        aside = src.parent.with_name(f"{src.parent.name}.set-aside")
        aside.mkdir(parents=True, exist_ok=True)
        dest, k = aside / f"{src.name}.{why}", 1
        while dest.exists():
            k += 1
            dest = aside / f"{src.name}.{why}-{k}"
        src.rename(dest)
    finally:
        os.close(fd)
    txt = src.with_name(f"{src.name}.txt")
    if txt.exists():
        txt.rename(dest.with_name(f"{dest.name}.txt"))
    print(f"[grid] {name}: {said}: moved to {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}, run again",
          flush=True)


def writable_root(runs: dict) -> None:
    """Creates the folder the grid's runs go to, or refuses in one line (a ValueError) where it cannot be."""
    for e in runs.values():
        parent = (ROOT / e["out_arg"]).parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(f"cannot create the grid's folder {parent}: {err.strerror or err}") from None
        if not os.access(parent, os.W_OK):
            raise ValueError(f"cannot write in the grid's folder {parent} (permission denied)")


class Drawer:
    """Draws each selected figure once, as soon as every experiment it reads is ready (so that the first figures
    appear while later experiments still run), and the rest at the end."""

    def __init__(self, only: set[str] | None, outdir: Path, build: Path | None = None):
        outdir.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, GAUGELAB_FIGURES=str(outdir), MPLBACKEND="Agg")
        if build is not None:  # where a script that needs the gaugelab Python module finds it (<build>/python)
            self.env["GAUGELAB_BUILD_DIR"] = str(build)
        self.todo = {s: f for s, f in manifest.figures().items() if not only or s in only}

    def draw_ready(self, ready: set[str] | None = None) -> None:
        """Draws the figures whose inputs are all in `ready` (None: every figure left)."""
        for script, fig in list(self.todo.items()):
            if ready is not None and not set(fig.inputs) <= ready:
                continue
            del self.todo[script]
            inputs = [str(ROOT / manifest.EXPERIMENTS[e]["out"]) for e in fig.inputs]
            print(f"[figures] draw {script}", flush=True)
            subprocess.run([sys.executable, str(ROOT / "analysis" / "figures" / f"{script}.py"), *inputs],
                           check=True, cwd=ROOT, env=self.env)


def main() -> int:
    ap = argparse.ArgumentParser(prog="make_figures.py", description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="build directory holding the gaugelab binary")
    ap.add_argument("--only", nargs="*", help="experiment names and figure scripts to restrict to")
    ap.add_argument("--force", action="store_true", help="re-run experiments even when their logs are fresh")
    ap.add_argument("--no-run", action="store_true", help="draw only; never run an experiment")
    ap.add_argument("--out", "--figures", dest="figures", metavar="DIR", default="figures",
                    help="output folder for PNG/PDF/Markdown")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="experiments run at once (each sets its own threads; default: the cores)")
    ap.add_argument("--tier", choices=("all", "torch-free", "torch"), default="all",
                    help="torch-free: only the experiments of the torch-free verbs (toy, sweep, diag) and the figures "
                         "that read nothing else (what the torch-free gaugelab makes while the LibTorch half compiles); "
                         "torch: the others")
    ap.add_argument("--slice", choices=("all", "demo"), default="all",
                    help="demo: only the demo's slice (analysis/manifest.py demo_slice: the experiments not marked "
                         "\"demo\": False, at their declared size, and the figures that read only those); its index "
                         "goes to FIGURES_DIR/INDEX.md, never over analysis/FIGURES.md")
    ap.add_argument("--no-index", action="store_true", help="do not rewrite analysis/FIGURES.md")
    ap.add_argument("--grid", metavar="NAME", help=f"run one grid of the manifest instead ({', '.join(manifest.GRIDS)}); "
                    "resumable and shardable; draws nothing")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="with --grid: change one of its settings (e.g. seeds='1 2 3', extra='--device cuda')")
    ap.add_argument("--shard", default="0/1", help="with --grid: run every N-th run from the I-th (I/N)")
    ap.add_argument("--rerun-ledger", action="store_true",
                    help="with --grid: run again the runs its results ledger holds whose logs are not here")
    ap.add_argument("--launch", default="", help="with --grid: a prefix for each run (e.g. 'torchrun --nproc_per_node=8 "
                    "--no-python')")
    a = ap.parse_args()
    if a.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {a.jobs}")
    if a.grid:
        try:  # the settings are checked before anything runs: a usage error is argparse's line and exit 2
            sets, shard = parse_sets(a.set), parse_shard(a.shard)
            manifest.grid(a.grid, sets)
        except ValueError as e:
            ap.error(str(e))
        try:
            run_grid(ROOT / a.build, a.grid, sets, a.jobs, shard, a.launch.split(), a.rerun_ledger)
        except ValueError as e:
            ap.error(str(e))
        return 0
    only = set(a.only) if a.only else None
    if a.tier != "all":
        tier = tier_selection(a.tier)
        only = (only or tier) & tier
    if a.slice == "demo":
        demo = manifest.demo_slice()
        only = (only or demo) & demo
    drawer = Drawer(only, ROOT / a.figures, ROOT / a.build)
    if not a.no_run:
        run_experiments(ROOT / a.build, only, a.force, a.jobs, on_done=drawer.draw_ready)
    drawer.draw_ready()
    if not a.only and a.tier != "torch-free" and not a.no_index:
        import figure_index
        index = ROOT / a.figures / "INDEX.md" if a.slice == "demo" else ROOT / "analysis" / "FIGURES.md"
        index.write_text(figure_index.render())
        print(f"[figures] wrote {index.relative_to(ROOT) if index.is_relative_to(ROOT) else index}")
    if a.slice == "demo" and not a.only and a.tier != "torch-free":
        left = sorted(set(manifest.figures()) - manifest.demo_slice())
        heavy = sorted(n for n, e in manifest.EXPERIMENTS.items() if not e.get("demo", True))
        print(f"[figures] left to `make figures` (the heavy experiments {', '.join(heavy)}): {', '.join(left)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
