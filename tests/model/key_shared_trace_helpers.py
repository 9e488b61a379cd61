"""Ops and history edits for Key_Shared, routing and retry traces on the model (shared by the chapter tests)."""

from __future__ import annotations

from dataclasses import replace

from conformance.targets.model import ModelTarget
from conformance.trace import History, make_trace

KS = {"subscription": "s", "type": "Key_Shared", "topic": "t"}


def sub(handle, name, **extra):
    return ("subscribe", dict(KS, consumer=handle, consumer_name=name, **extra))


def send(label, key=None, producer="p1", **extra):
    args = {"producer": producer, "payload": label, **extra}
    if key is not None:
        args["key"] = key
    return ("send", args)


def recv(handle, ms=500):
    return ("receive", {"consumer": handle, "timeout_ms": ms})


def run(*ops, profile=None, header_profile=None):
    trace = make_trace("t", ops, profile=header_profile or {})
    return ModelTarget(profile).run(trace)


def received(h):
    return [(e.op.args["consumer"], e.outcome.value["message"]["payload"])
            for e in h.events if e.op.op == "receive" and e.outcome.value.get("message")]


def swap_receive(h: History, step: int, other_step: int) -> History:
    """The receive at ``step`` got what the receive at ``other_step`` got instead (and vice versa)."""
    events = list(h.events)
    a, b = events[step - 1], events[other_step - 1]
    events[step - 1] = replace(a, outcome=b.outcome)
    events[other_step - 1] = replace(b, outcome=a.outcome)
    return History(h.header, tuple(events))
