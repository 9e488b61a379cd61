"""The bookie registration lock loop a standalone broker may enter after a SIGKILL
(``fixtures.embedded.registration_lock_loop``, used by ``EmbeddedBroker.restart``).

The log lines are in the broker's own format (log4j, ``ResourceLockImpl``), as a 4.0.8 standalone
wrote them: a restart that settles logs a few invalidations while it starts; a loop keeps logging
them. The live fault tests run the crash restarts themselves (``tests/live/test_faults_live.py``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from fixtures.embedded import LOCK_LOOP_MIN_LINES, count_lock_invalidations, registration_lock_loop

INVALIDATED = ("2026-11-26T14:11:28,054+0000 [metadata-store-1-1] INFO  org.apache.pulsar.metadata.coordination.impl."
               "ResourceLockImpl - Lock on resource /ledgers/available/127.0.0.1:39359 was invalidated. state Valid\n")
REACQUIRED = ("2026-11-26T14:11:28,065+0000 [metadata-store-1-1] INFO  org.apache.pulsar.metadata.coordination.impl."
              "ResourceLockImpl - Successfully re-acquired lock at /ledgers/available/127.0.0.1:39359\n")
OTHER_LOCK = ("2026-11-26T14:11:30,001+0000 [metadata-store-1-1] INFO  org.apache.pulsar.metadata.coordination.impl."
              "ResourceLockImpl - Lock on resource /loadbalance/brokers/127.0.0.1:8080 was invalidated. state Valid\n")


def test_only_the_bookie_registration_lock_counts():
    assert count_lock_invalidations(INVALIDATED * 3 + REACQUIRED * 3 + OTHER_LOCK * 5) == 3
    assert count_lock_invalidations("") == 0


def _append_while_watched(path: Path, lines: str, count: int, spread_s: float) -> threading.Thread:
    def write():
        for _ in range(count):
            with path.open("a") as f:
                f.write(lines)
            time.sleep(spread_s / max(count, 1))
    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_loop_that_goes_on_after_ready_is_named(tmp_path):
    log = tmp_path / "broker.log"
    log.write_text(INVALIDATED * 5)  # the start-up's own invalidations: before the watch, not counted
    writer = _append_while_watched(log, INVALIDATED + REACQUIRED, LOCK_LOOP_MIN_LINES * 3, 0.3)
    found = registration_lock_loop(log, window_s=0.6)
    writer.join()
    assert found is not None and "lock loop" in found and "invalidations" in found


def test_a_settled_restart_is_not_a_loop(tmp_path):
    log = tmp_path / "broker.log"
    log.write_text(INVALIDATED * 500)  # however many while it started
    writer = _append_while_watched(log, INVALIDATED, 3, 0.3)  # a few stragglers, as a settled restart logs
    assert registration_lock_loop(log, window_s=0.6) is None
    writer.join()


def test_other_locks_churning_are_not_the_bookie_loop(tmp_path):
    log = tmp_path / "broker.log"
    log.write_text("")
    writer = _append_while_watched(log, OTHER_LOCK, LOCK_LOOP_MIN_LINES * 3, 0.3)
    assert registration_lock_loop(log, window_s=0.6) is None
    writer.join()


def test_a_missing_log_is_no_loop(tmp_path):
    assert registration_lock_loop(tmp_path / "absent.log", window_s=0.0) is None
