"""The closed vocabulary of anomalies: the ways a broker can do what the model does not allow.

Like Jepsen's Elle, every failure names an anomaly from a fixed list, each with one definition,
so reports from different traces, targets and broker versions can be counted together. The
model names them where it produces them (a dispatcher's ``Refusal`` says why a delivery is not
allowed: ``dispatch/base.py`` refuses a name that is not here), and the checker reports them;
neither invents a name: ``anomaly(name)`` refuses one that is not here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Anomaly:
    name: str
    definition: str


ANOMALIES: dict[str, Anomaly] = {a.name: a for a in (
    Anomaly("lost-message",
            "A published, unacknowledged message was deliverable to a consumer that asked for messages "
            "and received nothing, although no other consumer could have taken it."),
    Anomaly("duplicate-delivery",
            "A message reached a consumer (or reader) again while nothing allowed a redelivery: no nack, "
            "ack timeout, redeliver_unacked, consumer close, seek or rewind was in effect."),
    Anomaly("ack-resurrection",
            "A message acknowledged on a subscription was delivered again on that subscription."),
    Anomaly("uncommitted-delivery",
            "A message produced in a transaction reached a consumer or reader while that transaction was still "
            "open (PLS-TXN-001)."),
    Anomaly("aborted-delivery",
            "A message produced in a transaction that aborted or timed out reached a consumer or reader "
            "(PLS-TXN-002)."),
    Anomaly("read-past-open-transaction",
            "A message appended after the first message of a still-open transaction reached a consumer or reader "
            "before that transaction ended (PLS-TXN-003)."),
    Anomaly("early-redelivery",
            "A redelivered message arrived before the earliest instant its cause allows "
            "(e.g. sooner than the nack delay d after the nack)."),
    Anomaly("early-delivery",
            "A delayed message (deliver_at / deliver_after) reached a Shared or Key_Shared consumer before "
            "its deliver-at time allows (strict mode: never before it; non-strict: at most one tick before)."),
    Anomaly("late-delivery",
            "A delayed message whose deliver-at time had come did not arrive within the allowed ticks, "
            "plus the dispatch-latency tolerance."),
    Anomaly("late-redelivery",
            "A redelivery that was due did not arrive by the latest instant its cause allows, "
            "plus the dispatch-latency tolerance."),
    Anomaly("wrong-consumer",
            "A message reached a consumer that may not receive it (an inactive Failover consumer, "
            "a closed consumer)."),
    Anomaly("order-violation",
            "Messages reached an in-order consumer or reader (Exclusive, Failover, reader) out of "
            "publish order, or message ids did not grow in publish order."),
    Anomaly("unexpected-rejection",
            "An op the model says succeeds was rejected."),
    Anomaly("missing-rejection",
            "An op the model says is refused (e.g. a second Exclusive consumer: ConsumerBusy) succeeded."),
    Anomaly("wrong-error",
            "An op was rejected as the model predicts, but with a different error name."),
    Anomaly("wrong-value",
            "An op succeeded but its value differs from the model's: a message field changed in "
            "transit, a message id broke its conventions, a sequence id, a message not in the subscription."),
    Anomaly("wrong-redelivery-count",
            "A delivered message carried a redelivery_count outside the range its delivery history allows."),
    Anomaly("key-order-violation",
            "Two messages with the same sticky key reached Key_Shared consumers out of publish order: a "
            "later one was delivered while an earlier one had never been delivered to anyone."),
    Anomaly("key-stickiness-violation",
            "A Key_Shared message reached a consumer that does not serve its key: not the owner the "
            "selector gives (ring, hash ranges, sticky ranges), or while another consumer held that key."),
    Anomaly("draining-violation",
            "On a 4.x Key_Shared subscription, a message of a hash that moved to a new consumer reached "
            "another consumer while the previous owner still held unacked messages of that hash (PIP-379)."),
    Anomaly("wrong-partition",
            "A producer's message landed on a partition its routing does not allow: not hash(key) mod N "
            "for a keyed message under a known scheme, not where the same key went before, or out of "
            "round-robin turn."),
    Anomaly("wrong-backlog",
            "The subscription backlog reported by stats differs from the number of entries not yet "
            "acknowledged (allowing for acks the client had not flushed yet)."),
)}


def anomaly(name: str) -> str:
    """``name`` if it is in the vocabulary; a ``KeyError`` (a checker bug) otherwise."""
    if name not in ANOMALIES:
        raise KeyError(f"unknown anomaly {name!r}; add it to reference_model.anomalies.ANOMALIES with a definition")
    return name
