"""conformance/targets/watchdog.py: a client call with no answer by its deadline is abandoned."""

from __future__ import annotations

import pytest


def test_the_watchdog_abandons_a_call_that_never_returns():
    """Any other Python-client call that never returns: the harness waits its deadline, the op is
    indeterminate and the next call gets a fresh worker. (A real call stuck in the C++ client
    would keep its thread, and the C++ runtime aborts such a process at exit, which is why seek,
    the one call seen hanging, is waited for asynchronously instead.)"""
    import threading

    from conformance.targets.watchdog import NoAnswer, Watchdog

    release = threading.Event()
    dog = Watchdog()
    with pytest.raises(NoAnswer, match="within 0 s"):
        dog.call(release.wait, 0.2)
    assert dog.abandoned == 1
    assert dog.call(lambda: "next", 5) == "next"
    with pytest.raises(KeyError):
        dog.call(lambda: {}["missing"], 5)
    release.set()
