"""A deadline for client calls that may never return.

Why: the C++ client (under the Python client) completes a consumer's ``seek`` only once the
consumer has reconnected after the broker's reset (apache/pulsar-client-cpp lib/ConsumerImpl.cc;
PR #533 fixed one way it could block for ever). When the reconnect itself is refused for good,
for example a consumer whose schema the broker no longer admits (ALWAYS_INCOMPATIBLE and a
registered schema: ``checkConsumerCompatibility`` refuses even the same schema), the call never
returns, and a live fuzz campaign hung in ``Consumer.seek`` (2026-11-27, broker 4.0.8, the
broker log showing the refused re-subscribe every few seconds).

So each Python-client call runs on a worker thread and the harness waits at most ``timeout_s``.
A call with no answer by then is abandoned: its thread (a daemon, so it never holds the process
at exit) stays blocked in the client, the op is recorded as indeterminate, and the next call gets
a new worker. Nothing is cancelled: the client may still complete the call later.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any


class NoAnswer(Exception):
    """The call did not return within its deadline and was abandoned."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        super().__init__(f"no answer from the client within {timeout_s:.0f} s: the harness abandoned the call "
                         "(its thread may still be waiting in the client)")


class _Call:
    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class _Worker:
    def __init__(self) -> None:
        self.calls: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="pulsar-conformance-client-call", daemon=True).start()

    def _loop(self) -> None:
        while True:
            call = self.calls.get()
            try:
                call.result = call.fn()
            except BaseException as err:  # noqa: BLE001 - handed back to the caller as it is
                call.error = err
            call.done.set()


class Watchdog:
    """Runs calls one at a time on a worker thread, each with a deadline."""

    def __init__(self) -> None:
        self._worker: _Worker | None = None
        self.abandoned = 0

    def call(self, fn: Callable[[], Any], timeout_s: float) -> Any:
        if self._worker is None:
            self._worker = _Worker()
        call = _Call(fn)
        self._worker.calls.put(call)
        if not call.done.wait(timeout_s):
            self._worker = None  # that thread is stuck in the client: the next call gets a fresh one
            self.abandoned += 1
            raise NoAnswer(timeout_s)
        if call.error is not None:
            raise call.error
        return call.result
