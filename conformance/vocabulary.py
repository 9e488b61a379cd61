"""How much of the trace vocabulary a set of traces uses.

The vocabulary is ``conformance.trace.OP_SPECS``: every op kind, every argument of each op, and
every named choice of an argument that has them (``subscribe.type`` is Exclusive, Shared,
Failover or Key_Shared). An item is written as a short string:

- ``send``: the op kind;
- ``send.deliver_after_ms``: an argument of it;
- ``subscribe.type=Shared``: one named choice of an argument.

The generator (``conformance.strategies``) is meant to emit every item; what it does not emit yet
is named, with the reason, in ``strategies.NOT_YET_GENERATED``, and
``tests/fuzz/test_vocabulary_coverage.py`` keeps that list equal to what a default model campaign
leaves out, so an op added to the vocabulary cannot be forgotten and a feature the generator
learns is struck off the list.
"""

from __future__ import annotations

from typing import Iterable

from conformance.trace import OP_SPECS, Trace


def vocabulary() -> frozenset[str]:
    """Every item of the trace vocabulary."""
    items: set[str] = set()
    for op, args in OP_SPECS.items():
        items.add(op)
        for name, spec in args.items():
            items.add(f"{op}.{name}")
            for choice in spec.choices or ():
                items.add(f"{op}.{name}={choice}")
    return frozenset(items)


def used(traces: Iterable[Trace]) -> frozenset[str]:
    """The vocabulary items the traces use (an argument left out, even one whose default is a
    named choice, does not count as using that choice)."""
    items: set[str] = set()
    for trace in traces:
        for op in trace.ops:
            items.add(op.op)
            specs = OP_SPECS.get(op.op, {})
            for name, value in op.args.items():
                items.add(f"{op.op}.{name}")
                spec = specs.get(name)
                if spec is not None and spec.choices and isinstance(value, str):
                    items.add(f"{op.op}.{name}={value}")
    return frozenset(items)


def coverage_line(items_used: frozenset[str], every: frozenset[str] | None = None) -> str:
    """``ops 20/26, arguments 46/97, choices 7/28``: how much of each kind of item is used."""
    every = vocabulary() if every is None else every
    kinds = (("ops", lambda i: "." not in i), ("arguments", lambda i: "." in i and "=" not in i), ("choices", lambda i: "=" in i))
    return ", ".join(f"{name} {sum(1 for i in items_used & every if is_kind(i))}/{sum(1 for i in every if is_kind(i))}"
                     for name, is_kind in kinds)
