"""Structural shrinking: the smallest trace that still shows a failure's signature.

Part of the differential fuzzer (``conformance.fuzz``). ``ddmin`` is delta debugging over the
trace: delete an op together with every later op that depends on it (ops on the handle it
created, ops naming the label it sent), then drop optional arguments; a candidate the trace
format refuses (a dangling handle) is never run. Hypothesis' own shrinker runs first on a
Hypothesis failure (``conformance.fuzz.driver``); ``ddmin`` polishes its result and alone
shrinks a fast-generator failure.
"""

from __future__ import annotations

from typing import Any, Callable

from conformance.fuzz.judge import has_signature, run_and_judge
from conformance.trace import Op, Trace, TraceFormatError, check_handles


def _rebuild(trace: Trace, ops: list[tuple[str, dict[str, Any]]]) -> Trace | None:
    built = tuple(Op(i, name, dict(args)) for i, (name, args) in enumerate(ops, start=1))
    try:
        check_handles(built)
    except TraceFormatError:
        return None
    return Trace(trace.header, built)


def _without(ops: list[tuple[str, dict[str, Any]]], index: int) -> list[tuple[str, dict[str, Any]]]:
    """Drop op ``index`` and every later op that depends on what it created or sent."""
    name, args = ops[index]
    handles: set[str] = set()
    labels: set[str] = set()
    if name in ("create_producer", "subscribe", "create_reader"):
        handles.add(args.get("producer") or args.get("consumer") or args.get("reader"))
    if name == "send":
        labels.add(args["payload"])
    out = ops[:index]
    for later_name, later in ops[index + 1:]:
        if later_name == "send" and later.get("producer") in handles:
            labels.add(later["payload"])
        uses = {later.get("producer"), later.get("consumer"), later.get("reader"), later.get("handle")}
        named = {later.get("message"), later.get("publish_time_of")}
        if isinstance(later.get("start"), dict):
            named.add(later["start"].get("message"))
        if uses & handles or named & labels:
            continue
        out.append((later_name, later))
    return out


OPTIONAL_ARGS = ("key", "ordering_key", "properties", "event_time", "initial_position", "receiver_queue_size",
                 "inclusive", "consumer_name")


def ddmin(trace: Trace, fails: Callable[[Trace], bool], *, max_runs: int = 2000) -> Trace:
    """Smallest trace (by op deletion with dependents, then argument removal) for which ``fails``."""
    runs = 0
    best = trace
    changed = True
    while changed and runs < max_runs:
        changed = False
        ops = [(op.op, dict(op.args)) for op in best.ops]
        i = len(ops) - 1
        while i >= 0 and runs < max_runs:
            candidate = _rebuild(best, _without(ops, i))
            if candidate is not None and len(candidate.ops) < len(best.ops):
                runs += 1
                if fails(candidate):
                    best, ops, changed = candidate, [(op.op, dict(op.args)) for op in candidate.ops], True
                    i = min(i, len(ops)) - 1
                    continue
            i -= 1
        for i, (name, args) in enumerate(list(ops)):
            for arg in OPTIONAL_ARGS:
                if arg in args and not (arg == "consumer_name" and args.get("type") == "Failover") and runs < max_runs:
                    trial = list(ops)
                    trial[i] = (name, {k: v for k, v in args.items() if k != arg})
                    candidate = _rebuild(best, trial)
                    runs += 1
                    if candidate is not None and fails(candidate):
                        best, ops, args, changed = candidate, trial, trial[i][1], True
    return best



def shrink_keeping_signature(target: Any, trace: Trace, sig: tuple[str, str], max_runs: int) -> Trace:
    def fails(candidate: Trace) -> bool:
        _, report = run_and_judge(target, candidate)
        return has_signature(report, sig)

    return ddmin(trace, fails, max_runs=max_runs)

