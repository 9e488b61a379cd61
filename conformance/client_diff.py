"""Run one trace once per client and say, step by step, where the clients agree and differ.

The same trace goes to a target driven by each client (the Python client and the Java client by
default; the Go client too when asked), and to the model with each client's profile. Each step is
then one of:

- ``same``: every client observed the same thing (ids, which differ run to run, are compared by
  shape only);
- ``differs, explained``: the clients observed different things, the model predicts a difference
  at that step between those clients, and the checker accepts every history there; the rules
  the checker judged at the step name the reason (e.g. PLS-SEEK-001);
- ``differs, allowed``: different, but the model predicts no client difference there and the
  checker accepts them all: nondeterminism the spec allows (which consumer, which partition first);
- ``differs, unexplained``: the checker rejects one of the histories at that step (the rule is
  named), or a step is indeterminate in one run.

Used by ``pulsar-conformance diff-clients``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.trace import History, Trace

SAME, EXPLAINED, ALLOWED, UNEXPLAINED = "same", "differs, explained", "differs, allowed", "differs, unexplained"
CLIENT_PAIR = ("python", "java")  # the default comparison
CLIENTS = ("python", "java", "go")  # what can be compared
_ID_LIKE = re.compile(r"\d+")
_NAMESPACE = re.compile(r"(?:non-)?persistent://[^/]+/[^/]+/")  # each run has a namespace of its own


@dataclass(frozen=True)
class StepDiff:
    step: int
    op: str
    verdict: str
    observed: dict[str, Any]  # client -> normalised observation
    predicted: dict[str, Any]  # client -> the model's normalised observation
    rules: tuple[str, ...] = ()
    why: str = ""


@dataclass(frozen=True)
class ClientDiff:
    trace_id: str
    steps: tuple[StepDiff, ...]
    histories: dict[str, History] = field(default_factory=dict)
    clients: tuple[str, ...] = CLIENT_PAIR

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.steps:
            out[s.verdict] = out.get(s.verdict, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "clients": list(self.clients), "counts": self.counts(),
                "steps": [{"step": s.step, "op": s.op, "verdict": s.verdict, "observed": s.observed,
                           "predicted": s.predicted, "rules": list(s.rules), "why": s.why} for s in self.steps]}

    def text(self) -> str:
        lines = [f"{self.trace_id}: " + ", ".join(f"{k} {v}" for k, v in sorted(self.counts().items()))]
        for s in self.steps:
            if s.verdict == SAME:
                continue
            lines.append(f"  step {s.step} {s.op}: {s.verdict}" + (f" [{', '.join(s.rules)}]" if s.rules else ""))
            for client in self.clients:
                lines.append(f"      {client:<6} {s.observed.get(client)}   (model: {s.predicted.get(client)})")
            if s.why:
                lines.append(f"      {s.why}")
        return "\n".join(lines)


def _comparable(key: str, value: Any) -> Any:
    """A property value as compared across runs: topic names without the run's namespace, and the
    numbers inside ids (ledger, entry) by shape only."""
    text = _NAMESPACE.sub("", str(value))
    return _ID_LIKE.sub("N", text) if key in ("ORIGIN_MESSAGE_ID", "REAL_TOPIC") or "ID" in key else text


def normalise(event: Any) -> Any:
    """What of an outcome is compared across clients: status, error, and the message's payload,
    redelivery count, topic, keys and properties; numbers inside property values (message ids)
    are compared by shape."""
    out = event.outcome
    if out.status != "ok":
        return {"status": out.status, "error": out.error}
    value = dict(out.value or {})
    if "message" in value:
        msg = value["message"]
        if msg is None:
            return {"message": None}
        props = {k: _comparable(k, v) for k, v in dict(msg.get("properties") or {}).items()}
        return {"message": {"payload": msg.get("payload"), "redelivery_count": msg.get("redelivery_count"),
                            "topic": msg.get("topic"), "key": msg.get("key"), "ordering_key": msg.get("ordering_key"),
                            "properties": props}}
    if "backlog" in value:
        return {"backlog": value["backlog"]}
    return {"status": "ok"}


def _verdicts_at(history: History, check: Callable[[History], Any]) -> dict[int, list[Any]]:
    by_step: dict[int, list[Any]] = {}
    for v in check(history).verdicts:
        if v.step is not None:
            by_step.setdefault(v.step, []).append(v)
    return by_step


def diff_clients(trace: Trace, run_on: Callable[[str], History], model_on: Callable[[str], History],
                 check: Callable[[History], Any] | None = None, clients: tuple[str, ...] = CLIENT_PAIR) -> ClientDiff:
    """``run_on(client)`` runs the trace on the live target with that client; ``model_on(client)``
    on the model with that client's profile; ``clients`` (two or more of ``CLIENTS``) are compared."""
    clients = check_clients(clients)
    if check is None:
        from conformance.checker import check as check  # noqa: PLW0127
    if any("client" in op.args for op in trace.ops):
        raise ValueError(f"trace {trace.header.trace_id!r} names the client of its handles; diff-clients runs a "
                         "single-client trace once per client (remove the 'client' arguments)")
    live = {c: run_on(c) for c in clients}
    for client, history in live.items():
        reported = "python" if history.header.client in ("python", "cpp") else history.header.client
        if reported != client:
            raise ValueError(f"the {client} run of {trace.header.trace_id!r} reports client {history.header.client!r}; "
                             "each run must be driven by the client it is compared as")
    model = {c: model_on(c) for c in clients}
    verdicts = {c: _verdicts_at(live[c], check) for c in clients}
    steps = []
    for i, op in enumerate(trace.ops):
        events = {c: live[c].events[i] if i < len(live[c].events) else None for c in clients}
        observed = {c: normalise(e) if e is not None else None for c, e in events.items()}
        predicted = {c: normalise(model[c].events[i]) if i < len(model[c].events) else None for c in clients}
        failing = [v for c in clients for v in verdicts[c].get(op.step, []) if v.status == "FAIL"]
        judged = sorted({v.rule_id for c in clients for v in verdicts[c].get(op.step, [])})
        unknown = [c for c, e in events.items() if e is None or e.outcome.status == "indeterminate"]
        if _all_equal(observed[c] for c in clients) and not failing:
            steps.append(StepDiff(op.step, op.op, SAME, observed, predicted))
        elif failing or unknown:
            why = "; ".join(f"{v.rule_id}: {v.explanation}" for v in failing) or f"indeterminate on {', '.join(unknown)}"
            steps.append(StepDiff(op.step, op.op, UNEXPLAINED, observed, predicted, tuple(sorted({v.rule_id for v in failing})), why))
        elif not _all_equal(predicted[c] for c in clients):
            steps.append(StepDiff(op.step, op.op, EXPLAINED, observed, predicted, tuple(judged or trace.header.rules),
                                  "the model predicts this difference between the clients"))
        else:
            steps.append(StepDiff(op.step, op.op, ALLOWED, observed, predicted, tuple(judged),
                                  "the model allows both outcomes for either client (nondeterminism, not a client rule)"))
    return ClientDiff(trace.header.trace_id, tuple(steps), live, clients)


def check_clients(clients: Any, given: str = "") -> tuple[str, ...]:
    """``clients`` as a tuple if they are two or more different ones among ``CLIENTS``, else ValueError
    (``given``: how the user wrote them, e.g. "--clients 'python,rust'", to name in the message)."""
    clients = tuple(clients)
    if any(c not in CLIENTS for c in clients) or len(set(clients)) < 2 or len(set(clients)) != len(clients):
        raise ValueError(f"{given + ': ' if given else ''}diff-clients compares two or more different clients among "
                         f"{', '.join(CLIENTS)}, comma-separated (e.g. python,java,go); got {', '.join(clients) or 'none'}")
    return clients


def _all_equal(values: Any) -> bool:
    values = list(values)
    return all(v == values[0] for v in values[1:])
