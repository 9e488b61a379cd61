"""Helpers shared by the live tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def drain():
    """``drain(consumer, timeout_ms=500)``: every message the consumer receives until a receive
    times out, in order (the timeout is how long "nothing more" must last)."""
    import pulsar

    def _drain(consumer, timeout_ms: int = 500) -> list:
        got = []
        while True:
            try:
                got.append(consumer.receive(timeout_millis=timeout_ms))
            except pulsar.Timeout:
                return got

    return _drain
