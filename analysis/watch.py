"""The redraw loop of `gaugelab plot --watch`, apart so that its signal handling is tested on its own.

Ctrl-C or SIGTERM ends the watch after the redraw in progress, never inside an HDF5 read or a savefig:
both signals are blocked (held pending) for the loop's whole life and taken only by the wait between
redraws (sigtimedwait), which returns at once for one that arrived while drawing. A handler is not used:
the earlier one set a threading.Event, and a signal landing while the main thread held that Event's own
lock inside Event.wait deadlocked the watch for good (about 1 trial in 10 with a short interval)."""
from __future__ import annotations

import signal
from typing import Callable

ENDS = frozenset({signal.SIGINT, signal.SIGTERM})


def watch(draw_once: Callable[[], bool], interval: float) -> int | None:
    """Calls draw_once() every `interval` seconds until it returns True (every run finished) or SIGINT or
    SIGTERM arrives. Returns the signal that ended it, else None. The signals' mask is restored after."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ENDS)
    try:
        while not draw_once():
            got = signal.sigtimedwait(ENDS, interval)
            if got is not None:
                return got.si_signo
        return None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
