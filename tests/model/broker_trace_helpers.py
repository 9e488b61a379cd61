"""Ops for the model as a target, run and judged (shared by the chapter tests that run traces on ``Broker``)."""

from __future__ import annotations

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import make_trace


def run(*ops, **header):
    trace = make_trace("t", ops, **header)
    history = ModelTarget().run(trace)
    report = check(history)
    assert report.ok and not [v for v in report.verdicts if v.status != "PASS"], report.summary()
    return history


def received(history):
    out = []
    for e in history.events:
        if e.op.op in ("receive", "read_next") and e.outcome.status == "ok":
            m = e.outcome.value["message"]
            out.append(None if m is None else (m["payload"], m["redelivery_count"], e.t_end_ms))
    return out


def labels(history):
    return [None if r is None else r[0] for r in received(history)]


P = ("create_producer", {"producer": "p", "topic": "t"})


def send(label, **kw):
    return ("send", {"producer": "p", "payload": label, **kw})


def sub(c, type_="Exclusive", **kw):
    return ("subscribe", {"consumer": c, "topic": "t", "subscription": "s", "type": type_, **kw})


def recv(c, timeout=1000):
    return ("receive", {"consumer": c, "timeout_ms": timeout})
