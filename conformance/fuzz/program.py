"""A trace as a short program a person reads (``c1.ack("m1")   # -> rejected ...``).

Part of the differential fuzzer (``conformance.fuzz``): every shrunk failure is printed this
way and stored in its ``<id>.verdicts.json``; the regression tests print it on failure.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from conformance.trace import History, Op, Trace


def _lit(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (str, dict, list)) else repr(v)


def _kw(args: dict[str, Any], skip: Iterable[str]) -> str:
    rest = [f"{k}={_lit(v)}" for k, v in args.items() if k not in skip]
    return (", " + ", ".join(rest)) if rest else ""


def op_line(op: Op) -> str:
    a, name = op.args, op.op
    if name == "create_topic":
        return f"create_topic({_lit(a['topic'])}, partitions={a.get('partitions', 0)})"
    if name == "create_producer":
        return f"{a['producer']} = producer({_lit(a['topic'])}{_kw(a, ('producer', 'topic'))})"
    if name == "send":
        return f"{a['producer']}.send({_lit(a['payload'])}{_kw(a, ('producer', 'payload'))})"
    if name == "subscribe":
        return (f"{a['consumer']} = subscribe({_lit(a.get('topic') or a.get('topics'))}, {_lit(a['subscription'])}, "
                f"{a.get('type', 'Exclusive')}{_kw(a, ('consumer', 'topic', 'topics', 'subscription', 'type'))})")
    if name in ("receive", "read_next"):
        who = a.get("consumer") or a.get("reader")
        return f"{who}.{name}(timeout_ms={a['timeout_ms']})"
    if name in ("ack", "ack_cumulative", "nack"):
        return f"{a['consumer']}.{name}({_lit(a['message'])})"
    if name in ("redeliver_unacked", "unsubscribe"):
        return f"{a['consumer']}.{name}()"
    if name == "seek":
        return f"{a['consumer']}.seek({_kw(a, ('consumer',))[2:]})"
    if name == "close":
        return f"{a['handle']}.close()"
    if name == "create_reader":
        return f"{a['reader']} = reader({_lit(a['topic'])}, start={_lit(a['start'])}{_kw(a, ('reader', 'topic', 'start'))})"
    if name == "advance_time":
        return f"sleep_ms({a['ms']})"
    if name == "stats":
        return f"backlog({_lit(a['topic'])}, {_lit(a['subscription'])})"
    return f"{name}({_kw(a, ())[2:]})"


def program(trace: Trace, history: History | None = None, report: Any = None) -> str:
    """The trace as a few lines a person reads; with a history, what each op observed."""
    fails: dict[int | None, list[str]] = {}
    if report is not None:
        for v in report.verdicts:
            if v.status == "FAIL":
                fails.setdefault(v.step, []).append(f"FAIL {v.rule_id} {v.anomaly or ''}".rstrip())
    lines = []
    events = {e.step: e for e in history.events} if history is not None else {}
    for op in trace.ops:
        line = op_line(op)
        notes = []
        event = events.get(op.step)
        if event is not None:
            out = event.outcome
            if out.status == "rejected":
                notes.append(f"rejected {out.error}")
            elif out.status == "indeterminate":
                notes.append("indeterminate")
            elif op.op in ("receive", "read_next"):
                msg = (out.value or {}).get("message")
                notes.append("nothing" if msg is None else f"{msg['payload']} (redelivery {msg['redelivery_count']})")
                notes[-1] += f" at {event.t_end_ms:.0f} ms"
            elif op.op == "stats":
                notes.append(f"backlog {(out.value or {}).get('backlog')}")
        notes += fails.get(op.step, [])
        lines.append(line + (f"   # -> {'; '.join(notes)}" if notes else ""))
    for note in fails.get(None, []):
        lines.append(f"# at the end: {note}")
    return "\n".join(lines)

