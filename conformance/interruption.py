"""Ctrl-C and SIGTERM as exceptions, so a long run cleans up, keeps what it judged, and says how to go on.

Python turns SIGINT into ``KeyboardInterrupt`` already; SIGTERM, by default, kills the process
on the spot (no ``finally``, no worker or broker teardown). ``interruptible()`` makes SIGTERM
raise ``Terminated`` instead, a ``KeyboardInterrupt``: every ``finally`` runs, and whatever lets
Ctrl-C through lets it through too. (Not a ``SystemExit``: Hypothesis takes a ``SystemExit``
raised in a test for a failing example and carries on.) It installs its handlers only in the
main thread and only where a signal still has Python's default handling, so a caller with its
own handler (the main job) keeps it. At the command's edge, ``reraise`` turns ``Terminated`` into
``SystemExit(143)``, the status a shell reports for a SIGTERMed command (the command line
already exits 130 on ``KeyboardInterrupt``). A handler's exception can be lost (raised inside a
gc callback, Python only prints it), so long loops also call ``check()`` at each step.
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


_received: int | None = None  # the signal ``interruptible()`` took, until its block ends


def _raise_for(signum: int, frame: object) -> None:
    global _received
    _received = signum
    if signum == signal.SIGTERM:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: let the cleanup it starts finish
        raise Terminated("SIGTERM")
    raise KeyboardInterrupt


def check() -> None:
    """Raise the interruption again if it was taken and lost: a signal handler runs between any two
    bytecodes, and an exception it raises inside a gc callback or a ``__del__`` (Hypothesis keeps
    gc callbacks) is only printed. Loops call this once per step, never from cleanup code."""
    if _received is not None:
        raise Terminated("SIGTERM") if _received == signal.SIGTERM else KeyboardInterrupt()


@contextmanager
def interruptible() -> Iterator[None]:
    """While inside, SIGTERM raises ``Terminated`` and SIGINT ``KeyboardInterrupt`` in the main
    thread, both remembered for ``check()``; a signal someone else handles is left to them."""
    global _received
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mine = [s for s, default in ((signal.SIGTERM, signal.SIG_DFL), (signal.SIGINT, signal.default_int_handler))
            if signal.getsignal(s) is default]
    previous = {s: signal.signal(s, _raise_for) for s in mine}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _received = None


def worker_ignores_sigint() -> None:
    """A worker process's initializer: Ctrl-C reaches the whole foreground process group, but the
    parent decides; it stops its workers itself (SIGTERM, which kills them), so a worker never
    dies half-way on its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_terminated(signum: int, frame: object) -> None:
    global _received
    _received = signum  # for check(): the exception below may be lost like any handler's
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
