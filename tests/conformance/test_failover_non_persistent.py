"""PLS-FAILOVER-003 on a non-persistent topic: no activation delay. A persistent Failover subscription's broker reads
for a newly picked active consumer only ``activeConsumerFailoverDelayTimeMillis`` (1000 ms) after a join or leave
(``AbstractDispatcherSingleActiveConsumer#scheduleReadOnActiveConsumer`` schedules the read); the non-persistent
dispatcher (``NonPersistentDispatcherSingleActiveConsumer``) overrides that method with a no-op and sends each message
to the active consumer of the moment, so a message published right after the join is owed at once. The review of
5187d07 found the model and the lie classifier holding both kinds of topic to the delay.
"""

from __future__ import annotations

from conformance.checker import check
from model_history_helpers import H, msg

NP = "non-persistent://n"


def _history(got_it: bool, *, topic: str = NP):
    """A Python consumer c1 (its first permits leave before its subscribe returns) alone on Failover s; m1 sent 10 ms
    after the join; a 500 ms receive gets it, or nothing."""
    h = H()
    h.ok("subscribe", {"consumer": "c1", "topic": topic, "subscription": "s", "type": "Failover", "consumer_name": "c1"}, t=(0, 10))
    h.ok("create_producer", {"producer": "p", "topic": topic}, {"producer_name": "p", "last_sequence_id": -1}, t=(10, 15))
    entry = 0
    ledger = 0 if topic == NP else 1
    h.ok("send", {"producer": "p", "payload": "m1"}, {"message_id": [ledger, entry, -1, -1], "publish_time": 0}, t=(20, 21))
    value = {"message": msg("m1", entry, topic=topic, ledger=ledger) if got_it else None}
    h.ok("receive", {"consumer": "c1", "timeout_ms": 500}, value, t=(21, 30 if got_it else 521))
    return h.history()


def _statuses(history, step: int = 4) -> dict[str, str]:
    return {v.rule_id: v.status for v in check(history).verdicts if v.step == step}


def test_a_message_is_owed_at_once_on_a_non_persistent_failover_subscription():
    assert "FAIL" not in _statuses(_history(True)).values()
    missed = _statuses(_history(False))
    assert "FAIL" in missed.values(), missed


def test_on_a_persistent_topic_the_activation_delay_still_holds():
    # 500 ms after the join is inside the 1000 ms delay: nothing is owed yet
    assert "FAIL" not in _statuses(_history(False, topic="t")).values()
