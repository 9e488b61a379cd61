"""The trace format: round trips, and malformed input refused with file, line and problem."""

from __future__ import annotations

import json

import pytest

from conformance.trace import (
    History,
    Outcome,
    Trace,
    TraceFormatError,
    dumps,
    load,
    make_trace,
    parse,
    save,
)

HEADER = {"kind": "header", "format": "pulsar-conformance-trace", "version": 1, "trace_id": "x"}


def _text(*ops: dict) -> str:
    return "\n".join(json.dumps(x) for x in (HEADER, *ops)) + "\n"


def test_trace_round_trip(tmp_path):
    trace = make_trace("t1", [("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s"}), ("receive", {"consumer": "c1", "timeout_ms": 10})], rules=("PLS-SUB-001",))
    path = save(trace, tmp_path / "a.jsonl")
    again = load(path)
    assert isinstance(again, Trace) and again == trace


def test_history_round_trip():
    text = _text(
        {"kind": "op", "step": 1, "op": "advance_time", "args": {"ms": 5}, "outcome": {"status": "ok", "value": {}}, "t_start_ms": 0, "t_end_ms": 5},
        {"kind": "op", "step": 2, "op": "subscribe", "args": {"consumer": "c", "topic": "t", "subscription": "s"}, "outcome": {"status": "rejected", "error": "ConsumerBusy", "detail": "busy"}, "t_start_ms": 5, "t_end_ms": 6},
    )
    history = parse(text)
    assert isinstance(history, History)
    assert history.events[1].outcome == Outcome("rejected", error="ConsumerBusy", detail="busy")
    assert parse(dumps(history)) == history
    assert history.trace().ops == tuple(e.op for e in history.events)


@pytest.mark.parametrize(
    "line, words",
    [
        ({"kind": "op", "step": 1, "op": "recieve", "args": {}}, "unknown op 'recieve'"),
        ({"kind": "op", "step": 1, "op": "advance_time", "args": {}}, "missing required argument 'ms'"),
        ({"kind": "op", "step": 1, "op": "advance_time", "args": {"ms": "5"}}, "must be integer"),
        ({"kind": "op", "step": 1, "op": "advance_time", "args": {"ms": True}}, "must be integer"),
        ({"kind": "op", "step": 1, "op": "advance_time", "args": {"ms": -1}}, "must not be negative"),
        ({"kind": "op", "step": 1, "op": "advance_time", "args": {"ms": 1, "x": 2}}, "unknown argument 'x'"),
        ({"kind": "op", "step": 1, "op": "subscribe", "args": {"consumer": "c", "topic": "t", "subscription": "s", "type": "shared"}}, "allowed: Exclusive"),
        ({"kind": "op", "step": 1, "op": "receive", "args": {"consumer": "c", "timeout_ms": 1}}, "which is not live"),
        ({"kind": "op", "step": 2, "op": "advance_time", "args": {"ms": 1}}, "expected step 1"),
        ({"kind": "op", "step": 1, "op": "advance_time", "args": {"ms": 1}, "outcome": {"status": "maybe"}}, "outcome status"),
    ],
)
def test_malformed_lines_name_file_line_and_problem(tmp_path, line, words):
    path = tmp_path / "bad.jsonl"
    path.write_text(_text(line))
    with pytest.raises(TraceFormatError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}:2: ")
    assert words in str(err.value)


def test_bad_json_and_version_and_mixed_outcomes(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(HEADER) + "\n{not json\n")
    with pytest.raises(TraceFormatError, match=r":2: not valid JSON"):
        load(path)
    path.write_text(json.dumps({**HEADER, "version": 99}) + "\n")
    with pytest.raises(TraceFormatError, match="version 99 is not supported"):
        load(path)
    mixed = _text(
        {"kind": "op", "step": 1, "op": "advance_time", "args": {"ms": 1}, "outcome": {"status": "ok"}, "t_start_ms": 0, "t_end_ms": 1},
        {"kind": "op", "step": 2, "op": "advance_time", "args": {"ms": 1}},
    )
    with pytest.raises(TraceFormatError, match=":3: some ops have outcomes"):
        parse(mixed, source="mixed")
    with pytest.raises(TraceFormatError, match="no such file"):
        load(tmp_path / "missing.jsonl")


def test_handles_must_be_closed_before_reuse_and_of_the_right_kind():
    with pytest.raises(TraceFormatError, match="already live"):
        make_trace("x", [("subscribe", {"consumer": "c", "topic": "t", "subscription": "s"})] * 2)
    with pytest.raises(TraceFormatError, match="is a consumer"):
        make_trace("x", [("subscribe", {"consumer": "c", "topic": "t", "subscription": "s"}), ("send", {"producer": "c", "payload": "m"})])
    ok = make_trace("x", [("subscribe", {"consumer": "c", "topic": "t", "subscription": "s"}), ("close", {"handle": "c"}), ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s"})])
    assert len(ok.ops) == 3


def test_seek_and_reader_argument_shapes():
    sub = ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s"})
    with pytest.raises(TraceFormatError, match="exactly one of 'message'"):
        make_trace("x", [sub, ("seek", {"consumer": "c", "message": "m1", "position": "earliest"})])
    with pytest.raises(TraceFormatError, match="use 'earliest', 'latest'"):
        make_trace("x", [("create_reader", {"reader": "r", "topic": "t", "start": "middle"})])


def test_unknown_error_name_is_refused():
    with pytest.raises(ValueError, match="unknown error name"):
        Outcome.rejected("Oops")


def test_feature_ops_validate():
    # docs/trace-format.md: feature ops and arguments (issue 5).
    from conformance.trace import TraceFormatError, validate_op

    validate_op("set_policy", {"deduplication": True})
    validate_op("set_policy", {"retention_minutes": 10, "retention_size_mb": 10})
    validate_op("compact", {"topic": "t"})
    validate_op("expire_messages", {"topic": "t", "subscription": "s", "seconds": 1})
    validate_op("flush", {"producer": "p"})
    validate_op("unload_topic", {"topic": "t"})
    validate_op("send", {"producer": "p", "payload": "x", "async": True, "tombstone": "null"})
    validate_op("create_reader", {"reader": "r", "topic": "t", "start": "earliest", "read_compacted": True})
    for op, args in (("set_policy", {}), ("set_policy", {"retention_minutes": 10}),
                     ("send", {"producer": "p", "payload": "x", "tombstone": "zero"}),
                     ("expire_messages", {"topic": "t", "subscription": "s", "seconds": -1})):
        with pytest.raises(TraceFormatError):
            validate_op(op, args)


# Found by test_loaders_hypothesis once a new evidence history joined its seeds (2026-11-26): both
# crashed the checker (ValueError / TypeError) instead of being refused at load.
@pytest.mark.parametrize("value", [":", [], True, None])
def test_a_broker_config_value_the_model_cannot_read_is_refused(tmp_path, value):
    header = dict(HEADER, profile={"broker_config": {"subscriptionKeySharedConsistentHashingReplicaPoints": value}})
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(TraceFormatError) as err:
        load(path)
    assert "subscriptionKeySharedConsistentHashingReplicaPoints" in str(err.value) and str(path) in str(err.value)
    header["profile"]["broker_config"]["subscriptionKeySharedConsistentHashingReplicaPoints"] = "100"
    path.write_text(json.dumps(header) + "\n")
    assert load(path).header.profile["broker_config"]


def test_a_stats_consumer_entry_of_the_wrong_shape_is_refused(tmp_path):
    stats = {"kind": "op", "step": 1, "op": "stats", "args": {"topic": "t", "subscription": "s"},
             "outcome": {"status": "ok", "value": {"backlog": 0, "consumer_unacked": [
                 {"consumer_name": [], "unacked_messages": 5, "blocked": False}]}}, "t_start_ms": 0, "t_end_ms": 1}
    path = tmp_path / "h.jsonl"
    path.write_text(_text(stats))
    with pytest.raises(TraceFormatError, match="consumer_unacked consumer_name must be string or null"):
        load(path)
