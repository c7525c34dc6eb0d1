"""The watch loop's ending (analysis/watch.py): a SIGINT or SIGTERM from outside ends it within a bound
and with status 0, one that lands while drawing ends it after that draw, and the draw runs with both
signals held pending and no Python handler of them installed. That last case is the one the earlier
loop failed: its handler set a threading.Event, and a signal landing while the main thread held that
Event's own lock inside Event.wait deadlocked the watch (a hung Ctrl-C; 4 trials in 40 of a tight loop
hung before the fix). Where a signal lands in a loop cannot be chosen from a test, so the mechanism that
rules the deadlock out is what is asserted."""
from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ANALYSIS))
import watch  # noqa: E402

BOUND_S = 10.0


def start(draw: str, interval: float) -> subprocess.Popen:
    """A python running watch.watch with the given draw body; prints "ready" from inside its first draw."""
    code = (f"import sys; sys.path.insert(0, {str(ANALYSIS)!r}); import watch\n"
            f"n = [0]\n"
            f"def draw():\n"
            f"    n[0] += 1\n"
            f"    if n[0] == 1: print('ready', flush=True)\n"
            f"    {draw}\n"
            f"    return False\n"
            f"got = watch.watch(draw, {interval!r})\n"
            f"print('ended by', got, 'after', n[0], 'draws', flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def ends_within_bound(p: subprocess.Popen) -> str:
    try:
        out, _ = p.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail(f"the watch did not end within {BOUND_S} s of the signal (deadlocked?)")
    assert p.returncode == 0, out
    return out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_from_outside_during_a_tight_loop_ends_it(sig):
    rng = random.Random(int(sig))
    for _ in range(5):
        p = start("pass", 1e-4)
        time.sleep(rng.uniform(0.0, 0.05))
        p.send_signal(sig)
        assert f"ended by {int(sig)}" in ends_within_bound(p)


def test_a_signal_while_drawing_ends_it_after_that_draw():
    p = start("import time; time.sleep(0.5)", 3600.0)  # the first draw is in progress when the signal lands
    p.send_signal(signal.SIGINT)
    out = ends_within_bound(p)
    assert f"ended by {int(signal.SIGINT)} after 1 draws" in out, out


def test_the_draw_runs_with_the_signals_held_and_no_handler_of_them():
    handlers = {s: signal.getsignal(s) for s in watch.ENDS}
    seen = []

    def draw() -> bool:
        seen.append((signal.pthread_sigmask(signal.SIG_BLOCK, []), {s: signal.getsignal(s) for s in watch.ENDS}))
        return len(seen) == 3

    assert watch.watch(draw, 1e-4) is None  # a draw that says "finished" ends it without a signal
    assert len(seen) == 3
    for mask, during in seen:
        assert watch.ENDS <= mask, f"a signal is deliverable while drawing: {sorted(watch.ENDS - mask)}"
        assert during == handlers, "a Python handler was installed (it would run at an arbitrary bytecode)"
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, []) & watch.ENDS  # the mask is given back
