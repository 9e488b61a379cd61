"""benchmarks/random_lies.step_context: what a rule text singles out about a step, read off the history alone (issue 45:
"the first delivery after each kind of seek, ownership after each membership change, the ids of delayed, chunked and
transactional messages, what a commit or an abort makes visible, what a schema registration returns")."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
sys.path.insert(0, str(ROOT))

from benchmarks.random_lies import step_context  # noqa: E402
from model_history_helpers import H, msg  # noqa: E402

SUB = {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"}


def _history():
    h = H().ok("subscribe", SUB).ok("create_producer", {"producer": "p", "topic": "t"})
    h = h.ok("send", {"producer": "p", "payload": "m1"}, {"message_id": [1, 0, -1, -1]})
    h = h.ok("send", {"producer": "p", "payload": "m2", "deliver_after_ms": 500}, {"message_id": [1, 1, -1, -1]})
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 100}, {"message": msg("m1", 0)})          # index 4
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 100}, {"message": msg("m2", 1)})          # 5: delayed
    h = h.ok("seek", {"consumer": "c1", "publish_time_of": "m1"})
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 100}, {"message": None})                  # 7: nothing yet
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 100}, {"message": msg("m1", 0)})          # 8: first after
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 100}, {"message": msg("m2", 1)})          # 9: not first
    h = h.ok("subscribe", {**SUB, "consumer": "c2"})
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 100}, {"message": None})                  # 11
    h = h.ok("create_producer", {"producer": "q", "topic": "t", "schema": {"type": "STRING"}})
    return h.history()


def test_contexts_are_read_off_the_history():
    h = _history()
    assert step_context(h, 4) == "receive"
    assert step_context(h, 5) == "receive: of a delayed message"
    assert step_context(h, 3) == "send: id of a delayed message"
    assert step_context(h, 2) == "send"
    assert step_context(h, 7) == "receive: first delivery after a seek by publish time"
    assert step_context(h, 8) == "receive: first delivery after a seek by publish time"
    assert step_context(h, 9) == "receive: of a delayed message"
    assert step_context(h, 11) == "receive: first delivery after a membership change"
    assert step_context(h, 12) == "create_producer: schema registration"
