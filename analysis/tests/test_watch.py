"""The watch loop's ending (analysis/watch.py): a SIGINT or SIGTERM from outside ends it within a bound and
with status 0, also in a process with a second thread (a threaded BLAS's), which the kernel gives the signal
to while the main thread holds it blocked; one that lands while drawing ends it after that draw, also when
that draw was the last; the draw runs with both signals held and a handler that only records them. The
earlier loops failed these: one whose handler set a threading.Event deadlocked when a signal landed while
the main thread held that Event's own lock (4 tight-loop trials in 40 hung), and one that only blocked the
signals in the main thread died of them (KeyboardInterrupt, rc -2) when a second thread took them mid-draw."""
from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ANALYSIS))
import watch  # noqa: E402

BOUND_S = 10.0


def start(draw: str, interval: float, finished: str = "False") -> subprocess.Popen:
    """A python with a second, idle thread running watch.watch with the given draw body; it prints "ready" from
    inside its first draw. `finished`: what each draw returns."""
    code = (f"import sys, threading, time; sys.path.insert(0, {str(ANALYSIS)!r}); import watch\n"
            f"threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
            f"n = [0]\n"
            f"def draw():\n"
            f"    n[0] += 1\n"
            f"    if n[0] == 1: print('ready', flush=True)\n"
            f"    {draw}\n"
            f"    return {finished}\n"
            f"got = watch.watch(draw, {interval!r})\n"
            f"print('ended by', got, 'after', n[0], 'draws', flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    watchdog = threading.Timer(BOUND_S, p.kill)  # a child that never says "ready" does not hang the test
    watchdog.start()
    try:
        line = p.stdout.readline().strip()
    finally:
        watchdog.cancel()
    if line != "ready":
        p.kill()
        p.wait()
        pytest.fail(f"the child did not start its watch: {line!r}")
    return p


def ends_within_bound(p: subprocess.Popen) -> str:
    try:
        out, _ = p.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail(f"the watch did not end within {BOUND_S} s of the signal (deadlocked?)")
    assert p.returncode == 0, f"status {p.returncode}: {out}"
    return out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_from_outside_during_a_tight_loop_ends_it(sig):
    rng = random.Random(int(sig))
    for _ in range(5):
        p = start("pass", 1e-4)
        time.sleep(rng.uniform(0.0, 0.05))
        p.send_signal(sig)
        assert f"ended by {int(sig)}" in ends_within_bound(p)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("finished", ["False", "True"])
def test_a_signal_while_drawing_ends_it_after_that_draw(sig, finished):
    # The first draw is in progress when the signal lands (the second thread is the one that can take it);
    # with finished=True that draw is also the last.
    p = start("import time; time.sleep(0.5)", 3600.0, finished)
    p.send_signal(sig)
    out = ends_within_bound(p)
    assert f"ended by {int(sig)} after 1 draws" in out, out


def test_the_draw_runs_with_the_signals_held_and_a_handler_that_only_records():
    handlers = {s: signal.getsignal(s) for s in watch.ENDS}
    seen = []

    def draw() -> bool:
        seen.append((signal.pthread_sigmask(signal.SIG_BLOCK, []), {s: signal.getsignal(s) for s in watch.ENDS}))
        return len(seen) == 3

    assert watch.watch(draw, 1e-4) is None  # a draw that says "finished" ends it without a signal
    assert len(seen) == 3
    for mask, during in seen:
        assert set(watch.ENDS) <= mask, f"a signal is deliverable to the main thread while drawing: {mask}"
        assert all(during[s] is not handlers[s] for s in watch.ENDS), "no recording handler while drawing"
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, []) & set(watch.ENDS)  # the mask is given back
    assert {s: signal.getsignal(s) for s in watch.ENDS} == handlers  # and the handlers


def test_a_signal_taken_by_the_handler_ends_it_after_that_draw():
    # In this process: the recording handler is called as Python calls it (in the main thread, between
    # bytecodes) for a signal another thread took; the loop ends after the draw, with that signal.
    calls = []

    def draw() -> bool:
        calls.append(1)
        if len(calls) == 2:
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
        return False

    assert watch.watch(draw, 1e-4) == signal.SIGTERM
    assert len(calls) == 2
