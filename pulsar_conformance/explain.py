"""``pulsar-conformance explain RULE-ID``: one rule of the specification, at the prompt.

Part of Pulsar: any rule of ``reference_model.rules``. For one rule id it gathers, from the places
that own each fact, what a reader needs to understand a verdict on it:

- the rule record (``reference_model/rules.py``): title, status, source, verbatim quote, note, and
  ``applies_to`` (broker releases, clients, vendor profiles);
- its detector (``conformance/detector_registry.py``): the function that judges it, the module it
  lives in, the steps it judges at, and its "Violated if ..." sentence;
- the built-in cases whose ``rules`` name it (``conformance/cases/``), each with its file.

``explain(rule_id)`` returns an ``Explanation`` (a frozen value); ``text(explanation)`` renders it as
labelled lines wrapped for a terminal, ``to_json(explanation)`` as a JSON object with the same facts.
An unknown id raises ``UnknownRuleError`` (a ``ValueError``: exit 2 on the command line) naming the
closest registered ids. ``pulsar-conformance rules ID`` prints the same as ``explain ID``.

Not modelled: which cases of a user's own ``--cases`` folder exercise the rule (the built-in ones only).
Choices: an id is matched after ``strip().upper()`` (``pls-nack-001`` is ``PLS-NACK-001``); a case
file's path is shown relative to the folder that holds ``conformance/`` (``conformance/cases/...``).
"""

from __future__ import annotations

import difflib
import json
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

LABEL_WIDTH = 12  # "violated if:" is the longest label


class UnknownRuleError(ValueError):
    """The id names no registered rule; the message names the close ones and how to list them all."""


@dataclass(frozen=True)
class CaseRef:
    id: str
    file: str  # conformance/cases/<area>/<case>.yaml


@dataclass(frozen=True)
class DetectorRef:
    function: str  # the name inside its module: "_Checker._receive", "nack_delay_floor"
    module: str  # "conformance.checker"
    steps: tuple[str, ...]
    violated_if: str


@dataclass(frozen=True)
class Explanation:
    id: str
    title: str
    status: str
    source: str
    quote: str
    note: str
    brokers: str
    clients: tuple[str, ...]
    vendors: tuple[str, ...]
    detector: DetectorRef | None  # None: a withdrawn rule (no detector, no verdict)
    cases: tuple[CaseRef, ...]


def close_ids(rule_id: str, known: list[str], n: int = 3) -> list[str]:
    """The registered ids nearest to ``rule_id``: spelling first, then the same area's ids."""
    near = difflib.get_close_matches(rule_id, known, n=n, cutoff=0.6)
    if len(near) < n:
        area = rule_id.split("-")[1] if rule_id.count("-") >= 2 else ""
        near += [i for i in known if area and i.startswith(f"PLS-{area}-") and i not in near][: n - len(near)]
    return near


def case_file(path: Path | None) -> str:
    """``conformance/cases/...yaml`` for a built-in case's file (as a checkout has it), else the path as given."""
    if path is None:
        return ""
    parts = Path(path).parts
    for i in range(len(parts) - 1):
        if parts[i] == "conformance" and parts[i + 1] == "cases":
            return "/".join(parts[i:])
    return str(path)


def cases_naming(rule_id: str, cases: list | None = None) -> tuple[CaseRef, ...]:
    """The cases (default: the built-in ones) whose ``rules`` name ``rule_id``, in case-file order."""
    if cases is None:
        from conformance.case_files import discover_cases

        cases = discover_cases()
    return tuple(CaseRef(c.id, case_file(c.path)) for c in cases if rule_id in c.rules)


def explain(rule_id: str, *, cases: list | None = None) -> Explanation:
    """Everything the suite records about ``rule_id``; ``UnknownRuleError`` when it is not registered."""
    from conformance.detector_registry import DETECTORS
    from reference_model.rules import RULES

    wanted = rule_id.strip().upper()
    record = next((r for r in RULES if r.id == wanted), None)
    if record is None:
        near = close_ids(wanted, [r.id for r in RULES])
        hint = f"; close: {', '.join(near)}" if near else ""
        raise UnknownRuleError(f"unknown rule id {rule_id!r}{hint} ('pulsar-conformance rules' lists them all)")
    det = DETECTORS.get(record.id)
    detector = None if det is None else DetectorRef(".".join(det.attribute_path), det.module, det.steps, det.violated_if)
    return Explanation(id=record.id, title=record.title, status=record.status, source=record.source,
                       quote=record.quote, note=record.note, brokers=record.applies_to.brokers,
                       clients=tuple(record.applies_to.clients), vendors=tuple(record.applies_to.vendors),
                       detector=detector, cases=cases_naming(record.id, cases))


def _field(label: str, value: str, width: int) -> list[str]:
    """``label:`` then ``value`` wrapped so continuation lines start under the value."""
    head = f"{label + ':':<{LABEL_WIDTH}} "
    return textwrap.wrap(value, width=max(width, len(head) + 20), initial_indent=head,
                         subsequent_indent=" " * len(head), break_on_hyphens=False, break_long_words=False) or [head.rstrip()]


def text(e: Explanation, width: int = 100) -> str:
    """The explanation as labelled lines for a terminal ``width`` columns wide."""
    lines = _field("rule", f"{e.id} ({e.status})", width)
    lines += _field("text", e.title, width)
    lines += _field("source", e.source, width)
    lines += _field("quote", f"\"{e.quote}\"" if e.quote else "- (the source is code, not prose)", width)
    if e.note:
        lines += _field("note", e.note, width)
    lines += _field("applies to", f"brokers {e.brokers}; clients {', '.join(e.clients)}; "
                                  f"vendor profiles {', '.join(e.vendors)}", width)
    if e.detector is None:
        lines += _field("detector", "none: the rule is withdrawn, so no detector judges it and it gets no verdict", width)
    else:
        d = e.detector
        lines += _field("detector", f"{d.function} in {d.module} (judges at: {', '.join(d.steps)})", width)
        lines += _field("violated if", d.violated_if.removeprefix("Violated if "), width)
    if e.cases:
        lines += _field("cases", f"{len(e.cases)}: " + ", ".join(c.id for c in e.cases), width)
        lines += [" " * (LABEL_WIDTH + 1) + f"{c.id}: {c.file}" for c in e.cases]
    else:
        lines += _field("cases", "none of the built-in cases names it", width)
    return "\n".join(lines)


def to_json(e: Explanation) -> str:
    """The explanation as one JSON object (the same facts as ``text``)."""
    doc = asdict(e)
    doc["applies_to"] = {"brokers": doc.pop("brokers"), "clients": doc.pop("clients"), "vendors": doc.pop("vendors")}
    return json.dumps(doc, indent=2, ensure_ascii=False)
