"""PLS-SCHEMA-020 against PLS-SCHEMA-018 when the topic's only use is a producer whose creation had not completed.

Live 4.0.8, Python (probe campaign seed 7301, fz-a16dec8f9073, FLAKY 1 of 3): a WaitForExclusive producer of a new
topic was still pending when its wait of 50 ms ended (nothing held the topic: a slow creation, PLS-ACCESS-005), then a
consumer with an AVRO schema subscribed. Twice the broker refused it (the producer was on the topic: an active topic
without a schema, PLS-SCHEMA-020), once it let it in (the producer was not there yet: an idle topic takes the
consumer's schema, PLS-SCHEMA-018). Which one is timing; once the creation is known complete, the refusal is owed.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.trace import parse

LIVE = Path(__file__).resolve().parent / "live_histories" / "live-4.0.8-python-schema-consumer-after-pending-producer.jsonl"


def _history(*, creation_completed: bool):
    lines = [json.loads(line) for line in LIVE.read_text(encoding="utf-8").splitlines() if line.strip()]
    if creation_completed:
        producer = next(d for d in lines[1:] if d["op"] == "create_producer")
        producer["outcome"]["value"] = {"pending": False, "producer_name": "standalone-0-7", "last_sequence_id": -1}
    return parse("\n".join(json.dumps(d) for d in lines))


def _schema_020(h) -> list[str]:
    return [v.status for v in check(h).verdicts if v.rule_id == "PLS-SCHEMA-020" and v.step is not None]


def test_a_consumer_schema_after_a_producer_creation_still_pending_is_not_judged():
    h = _history(creation_completed=False)
    assert not check(h).failures(), check(h).summary()
    assert _schema_020(h) == ["INDETERMINATE"]


def test_a_consumer_schema_after_a_completed_producer_creation_must_be_refused():
    assert _schema_020(_history(creation_completed=True)) == ["FAIL"]
