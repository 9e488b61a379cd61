"""Whatever the model target does, the checker must accept (the target's choice is in the allowed set).

Random traces from a seeded generator run on ``ModelTarget``; every history must check with no
FAIL and no INDETERMINATE. A failure prints the trace as JSON lines to replay.
"""

from __future__ import annotations

import random

import pytest

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import dumps, make_trace


def random_trace(seed: int, n_ops: int = 40):
    rng = random.Random(seed)
    sub_type = rng.choice(["Exclusive", "Shared", "Failover", "Key_Shared"])
    partitioned = sub_type != "Failover" and rng.random() < 0.25
    dead_letter = sub_type in ("Shared", "Key_Shared") and rng.random() < 0.3
    ops = [("create_topic", {"topic": "t", "partitions": 3})] if partitioned else []
    ops.append(("create_producer", {"producer": "p", "topic": "t"}))
    if dead_letter:
        ops.append(("subscribe", {"consumer": "dlq", "topic": "t-s-DLQ", "subscription": "d"}))
    live: list[str] = []
    received: dict[str, list[str]] = {}
    next_consumer = 0
    next_msg = 0
    for _ in range(n_ops):
        choice = rng.random()
        if choice < 0.12 or not live:
            if sub_type == "Exclusive" and live:
                continue
            c = f"c{next_consumer}"
            next_consumer += 1
            args = {"consumer": c, "topic": "t", "subscription": "s", "type": sub_type,
                    "nack_delay_ms": rng.choice([100, 200, 1000]),
                    "initial_position": rng.choice(["Earliest", "Latest"])}
            if rng.random() < 0.2:
                args["ack_timeout_ms"] = 10_000
            if dead_letter:
                args["dead_letter"] = {"max_redeliver_count": rng.choice([1, 2])}
            ops.append(("subscribe", args))
            live.append(c)
            received[c] = []
        elif choice < 0.35:
            ops.append(("send", {"producer": "p", "payload": f"m{next_msg}"}))
            next_msg += 1
        elif choice < 0.6:
            c = rng.choice(live)
            ops.append(("receive", {"consumer": c, "timeout_ms": rng.choice([0, 100, 500, 15000])}))
        elif choice < 0.72 and next_msg:
            c = rng.choice(live)
            ops.append(("ack", {"consumer": c, "message": f"m{rng.randrange(next_msg)}"}))
        elif choice < 0.8 and next_msg:
            c = rng.choice(live)
            ops.append(("nack", {"consumer": c, "message": f"m{rng.randrange(next_msg)}"}))
        elif choice < 0.83 and next_msg and sub_type in ("Exclusive", "Failover"):
            c = rng.choice(live)
            ops.append(("ack_cumulative", {"consumer": c, "message": f"m{rng.randrange(next_msg)}"}))
        elif choice < 0.86:
            ops.append(("redeliver_unacked", {"consumer": rng.choice(live)}))
        elif choice < 0.9:
            c = rng.choice(live)
            ops.append(("close", {"handle": c}))
            live.remove(c)
        elif choice < 0.93:
            ops.append(("advance_time", {"ms": rng.choice([50, 300, 11_000])}))
        elif choice < 0.96:
            ops.append(("stats", {"topic": "t", "subscription": "s"}))
        elif next_msg and not partitioned:
            c = rng.choice(live)
            kind = rng.choice(["message", "position", "publish_time_of"])
            arg = {"position": rng.choice(["earliest", "latest"])} if kind == "position" else {kind: f"m{rng.randrange(next_msg)}"}
            ops.append(("seek", {"consumer": c, **arg}))
    for c in live:
        ops.append(("receive", {"consumer": c, "timeout_ms": 20_000}))
    if dead_letter:
        ops += [("receive", {"consumer": "dlq", "timeout_ms": 1000})] * 3
    return make_trace(f"random-{seed}", ops)


@pytest.mark.parametrize("seed", range(400))
def test_model_target_history_checks_clean(seed):
    trace = random_trace(seed)
    history = ModelTarget().run(trace)
    report = check(history)
    # An op the model does not follow (a dead-letter limit that differs between the consumers of a
    # subscription, a redeliver-all past it) leaves what it touches INDETERMINATE, and says so in
    # the notes; nothing else may be anything but PASS.
    not_followed = any("not modelled" in note for note in report.notes)
    bad = [v for v in report.verdicts if v.status == "FAIL" or (v.status != "PASS" and not not_followed)]
    assert not bad, f"{report.summary()}\n{bad[:3]}\n{dumps(history)}"


# ---------------------------------------------------------------------------- mutations
# The same random histories, each changed in one way Pulsar forbids: the checker must notice.

from dataclasses import replace as _replace

from conformance.trace import Event, History, Op, Outcome


def _restep(events):
    return tuple(_replace(e, op=_replace(e.op, step=i)) for i, e in enumerate(events, start=1))


def _resurrect_after_ack(history: History) -> History | None:
    """Insert, right after an ack of a message its consumer received, a receive of it again."""
    received: dict[tuple[str, str], dict] = {}
    events = list(history.events)
    for i, e in enumerate(events):
        if e.op.op == "receive" and e.outcome.status == "ok" and e.outcome.value["message"]:
            received[(e.op.args["consumer"], e.outcome.value["message"]["payload"])] = e.outcome.value["message"]
        if e.op.op == "ack" and e.outcome.status == "ok":
            key = (e.op.args["consumer"], e.op.args["message"])
            if key in received:
                bogus = Event(Op(0, "receive", {"consumer": key[0], "timeout_ms": 0}),
                              Outcome.ok({"message": received[key]}), e.t_end_ms, e.t_end_ms)
                return History(history.header, _restep(events[: i + 1] + [bogus] + events[i + 1:]))
    return None


def _tamper_properties(history: History) -> History | None:
    events = list(history.events)
    for i, e in enumerate(events):
        if e.op.op == "receive" and e.outcome.status == "ok" and e.outcome.value["message"]:
            message = dict(e.outcome.value["message"], properties={"tampered": "yes"})
            events[i] = _replace(e, outcome=Outcome.ok({"message": message}))
            return History(history.header, tuple(events))
    return None


@pytest.mark.parametrize("seed", range(150))
def test_checker_catches_mutated_histories(seed):
    history = ModelTarget().run(random_trace(seed))
    mutated = _resurrect_after_ack(history)
    if mutated is not None:
        # FAIL, or INDETERMINATE when a copy may have been queued before the ack: never PASS.
        flagged = {v.anomaly for v in check(mutated).verdicts if v.status in ("FAIL", "INDETERMINATE")}
        assert "ack-resurrection" in flagged, dumps(mutated)
    mutated = _tamper_properties(history)
    if mutated is not None:
        assert ("PLS-MSG-001", "wrong-value") in {(v.rule_id, v.anomaly) for v in check(mutated).failures()}
