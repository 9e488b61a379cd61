"""Build hand-written histories for checker tests: one line per op, with outcome and times."""

from __future__ import annotations

from typing import Any

from conformance.trace import Event, History, Op, Outcome, TraceHeader


def msg(label: str, entry: int, *, count: int = 0, topic: str = "t", ledger: int = 1, producer: str = "p") -> dict[str, Any]:
    """The observation of message ``label`` stored at ``entry`` of a model-made topic."""
    return {"payload": label, "message_id": [ledger, entry, -1, -1], "topic": topic, "key": None,
            "ordering_key": None, "properties": {}, "event_time": 0, "publish_time": 0,
            "redelivery_count": count, "producer_name": producer}


class H:
    """``H().ok("subscribe", {...}).ok("receive", {...}, {"message": ...}, t=(0, 5))...history()``."""

    def __init__(self, target: str = "model", **header: Any):
        self.events: list[Event] = []
        self.target = target
        self.header = header
        self.now = 0.0

    def _add(self, op: str, args: dict, outcome: Outcome, t: tuple[float, float] | float | None) -> "H":
        if t is None:
            t0 = t1 = self.now
        elif isinstance(t, (int, float)):
            t0 = t1 = float(t)
        else:
            t0, t1 = map(float, t)
        self.now = t1
        self.events.append(Event(Op(len(self.events) + 1, op, args), outcome, t0, t1))
        return self

    def ok(self, op: str, args: dict, value: dict | None = None, t=None) -> "H":
        return self._add(op, args, Outcome.ok(value or {}), t)

    def rejected(self, op: str, args: dict, error: str, t=None) -> "H":
        return self._add(op, args, Outcome.rejected(error, "test"), t)

    def indeterminate(self, op: str, args: dict, t=None) -> "H":
        return self._add(op, args, Outcome.indeterminate("connection lost"), t)

    # shorthands -------------------------------------------------------------------------
    def sub(self, c: str, type_: str = "Exclusive", sub: str = "s", t=None, **kw) -> "H":
        return self.ok("subscribe", {"consumer": c, "topic": "t", "subscription": sub, "type": type_, **kw}, t=t)

    def producer(self, p: str = "p", t=None) -> "H":
        return self.ok("create_producer", {"producer": p, "topic": "t"}, {"producer_name": p, "last_sequence_id": -1}, t=t)

    def send(self, label: str, entry: int, p: str = "p", t=None) -> "H":
        return self.ok("send", {"producer": p, "payload": label}, {"message_id": [1, entry, -1, -1], "publish_time": 0}, t=t)

    def recv(self, c: str, label: str | None, entry: int = 0, *, count: int = 0, t=None, timeout: int = 1000) -> "H":
        value = {"message": None if label is None else msg(label, entry, count=count)}
        return self.ok("receive", {"consumer": c, "timeout_ms": timeout}, value, t=t)

    def history(self) -> History:
        return History(TraceHeader(trace_id="test", target=self.target, **self.header), tuple(self.events))


def without_ops(lines: list[dict[str, Any]], op: str) -> list[dict[str, Any]]:
    """A history's JSON lines (header first) with every ``op`` event taken out, the steps renumbered and the header's
    op count lowered to match (a lie or a control made from a recorded history)."""
    kept = [d for d in lines if not (d.get("kind") == "op" and d["op"] == op)]
    for i, d in enumerate(x for x in kept if x.get("kind") == "op"):
        d["step"] = i + 1
    kept[0]["op_count"] -= len(lines) - len(kept)
    return kept
