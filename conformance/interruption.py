"""Ctrl-C and SIGTERM as exceptions, so a long run cleans up, keeps what it judged, and says how to go on.

Python turns SIGINT into ``KeyboardInterrupt`` already; SIGTERM, by default, kills the process
on the spot (no ``finally``, no worker or broker teardown). ``sigterm_raises()`` makes SIGTERM
raise ``Terminated`` instead, a ``SystemExit(143)``: every ``finally`` runs, and when nobody
catches it the process exits 143, as a shell reports a SIGTERMed command. It installs its handler
only in the main thread and only where SIGTERM still has its default disposition, so a caller
with its own handler (the main job) keeps it.

``INTERRUPTS`` is what an interrupted run catches to clean up and re-raise; ``exit_code``
and ``signal_name`` read one of them.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class Terminated(SystemExit):
    """SIGTERM, raised where the program was (a ``SystemExit`` with code 143)."""

    def __init__(self) -> None:
        super().__init__(128 + signal.SIGTERM)


INTERRUPTS = (KeyboardInterrupt, Terminated)


def exit_code(err: BaseException) -> int:
    """130 for Ctrl-C (SIGINT), 143 for SIGTERM: 128 + the signal's number."""
    return 128 + (signal.SIGTERM if isinstance(err, Terminated) else signal.SIGINT)


def signal_name(err: BaseException) -> str:
    return "SIGTERM" if isinstance(err, Terminated) else "SIGINT"


def _raise_terminated(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: let the cleanup it starts finish
    raise Terminated()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises ``Terminated`` in the main thread (unless someone else handles it)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def worker_ignores_sigint() -> None:
    """A worker process's initializer: Ctrl-C reaches the whole foreground process group, but the
    parent decides; it stops its workers itself (SIGTERM), so a worker never dies half-way on its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def worker_cleans_up_on_sigterm() -> None:
    """Initializer of a worker that holds resources (a broker, namespaces): Ctrl-C is the parent's,
    SIGTERM raises ``Terminated`` so the worker's ``finally`` blocks tear them down."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _raise_terminated)
