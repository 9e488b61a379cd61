"""A stand-in target for tests/fuzz/test_interrupt_resume.py: the model, until its worker is stuck.

Five seconds after its first trace (its parts flushed by then) the worker blocks SIGTERM and sleeps: what a worker inside a C++ client call
looks like to the parent (the signal stays pending, the Python handler never runs)."""

from __future__ import annotations

import signal
import time

from conformance.targets.model import ModelTarget


class StuckAfterFewTraces(ModelTarget):
    first: float | None = None

    def run(self, trace):
        now = time.monotonic()
        StuckAfterFewTraces.first = StuckAfterFewTraces.first or now
        if now - StuckAfterFewTraces.first > 5.0:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            time.sleep(3600)
        return super().run(trace)
