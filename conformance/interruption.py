"""Ctrl-C and SIGTERM as exceptions, so a long run cleans up, keeps what it judged, and says how to go on.

Python turns SIGINT into ``KeyboardInterrupt`` already; SIGTERM, by default, kills the process
on the spot (no ``finally``, no worker or broker teardown). ``sigterm_raises()`` makes SIGTERM
raise ``Terminated`` instead, a ``KeyboardInterrupt``: every ``finally`` runs, and whatever lets
Ctrl-C through lets it through too. (Not a ``SystemExit``: Hypothesis takes a ``SystemExit``
raised in a test for a failing example and carries on.) It installs its handler only in the
main thread and only where SIGTERM still has its default disposition, so a caller with its own
handler (the main job) keeps it. At the command's edge, ``reraise`` turns ``Terminated`` into
``SystemExit(143)``, the status a shell reports for a SIGTERMed command (the command line
already exits 130 on ``KeyboardInterrupt``).
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator, NoReturn


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program was."""


INTERRUPTS = (KeyboardInterrupt,)  # Ctrl-C, and SIGTERM as ``Terminated``


def exit_code(err: BaseException) -> int:
    """130 for Ctrl-C (SIGINT), 143 for SIGTERM: 128 + the signal's number."""
    return 128 + (signal.SIGTERM if isinstance(err, Terminated) else signal.SIGINT)


def signal_name(err: BaseException) -> str:
    return "SIGTERM" if isinstance(err, Terminated) else "SIGINT"


def reraise(err: BaseException) -> NoReturn:
    """Re-raise an interruption at a command's edge: Ctrl-C as it is, SIGTERM as ``SystemExit(143)``."""
    if isinstance(err, Terminated):
        raise SystemExit(exit_code(err)) from err
    raise err


def _raise_terminated(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: let the cleanup it starts finish
    raise Terminated("SIGTERM")


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
    parent decides; it stops its workers itself (SIGTERM, which kills them), so a worker never
    dies half-way on its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_terminated(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills a worker stuck in its cleanup
    raise Terminated("SIGTERM")


def worker_cleans_up_on_sigterm() -> None:
    """Initializer of a worker that holds resources (a broker, namespaces): Ctrl-C is the parent's,
    SIGTERM raises ``Terminated`` so the worker's ``finally`` blocks tear them down; the worker
    then ends with ``exit_quietly``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminated)


def exit_quietly(err: BaseException) -> NoReturn:
    """End a worker process stopped by ``err`` (its cleanup done) without a traceback on stderr."""
    os._exit(exit_code(err))
