"""The redraw loop of `gaugelab plot --watch`, apart so that its signal handling is tested on its own.

Ctrl-C or SIGTERM ends the watch after the redraw in progress, never inside an HDF5 read or a savefig:
- the main thread holds both signals blocked for the loop's life, so its reads and writes see no EINTR, and
  takes them with sigtimedwait in the wait between redraws;
- a thread of a library (a threaded BLAS under numpy) does not block them and may be the one the kernel gives
  a signal to: the handler installed for the loop records it (a list append, no lock) and the wait, taken in
  slices of at most SLICE_S, sees the record;
- a signal that arrives during the last redraw is taken before the mask and the handlers are given back, so
  it cannot end the process after the watch has ended.
An earlier loop's handler set a threading.Event: a signal landing while the main thread held that Event's
own lock inside Event.wait deadlocked the watch for good. The mask is inherited by a child process; the
draw starts none (a future one would need the mask restored in it)."""
from __future__ import annotations

import signal
import time
from typing import Callable

ENDS = (signal.SIGINT, signal.SIGTERM)
SLICE_S = 0.2  # the longest a signal taken by another thread waits to be seen


def watch(draw_once: Callable[[], bool], interval: float) -> int | None:
    """Calls draw_once() every `interval` seconds until it returns True (every run finished) or SIGINT or
    SIGTERM arrives. Returns the first such signal, else None. The mask and the handlers are given back."""
    got: list[int] = []
    handlers = {s: signal.signal(s, lambda signum, _frame: got.append(signum)) for s in ENDS}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ENDS)
    try:
        while not draw_once() and not got:
            until = time.monotonic() + interval
            while not got and (left := until - time.monotonic()) > 0:
                taken = signal.sigtimedwait(ENDS, min(left, SLICE_S))
                if taken is not None:
                    got.append(taken.si_signo)
    finally:
        while (taken := signal.sigtimedwait(ENDS, 0)) is not None:  # those that came during the last draw
            got.append(taken.si_signo)
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        for s, h in handlers.items():
            signal.signal(s, h)
    return got[0] if got else None
