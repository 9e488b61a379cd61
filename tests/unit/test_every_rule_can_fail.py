"""Every active rule can FAIL: for each, a history that breaks it, and the checker says FAIL on it.

The breaking histories are mutants (``conformance.mutation``) of the recorded live histories in
``conformance/evidence/mutation/`` (and ``EXTRA_EVIDENCE``) and of every case run on the reference model
(``ModelTarget``, with the case's own client as ``runner.run_case`` picks it). A mutant counts for
a rule only when the rule is one the mutant was *meant* to break (derived from the history's ops,
never from the checker) and the unmutated history did not already FAIL it.

Rules for which no breaking history can be produced yet, or where the checker does not FAIL the
rule a mutant breaks, are listed in ``KNOWN_GAPS`` and xfail strictly: when the checker (or the
harness) learns to FAIL one, its test XPASSes, fails, and the entry must be removed.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from conformance import mutation
from conformance.case_files import discover_cases
from conformance.checker import FAIL, check
from conformance.targets.model import ModelTarget
from conformance.trace import History, load
from reference_model.rules import RULES

EVIDENCE = Path(__file__).resolve().parents[2] / "conformance" / "evidence" / "mutation"
# live recordings kept beside a case of their own (e.g. acked data deleted after an unload, PLS-RETENTION-001)
EXTRA_EVIDENCE = (EVIDENCE.parent / "retention",)
ACTIVE = [r.id for r in RULES if r.status != "withdrawn"]

_NO_OPERATOR = "no mutation operator produces a history that breaks it yet (harness gap): "
_CHARGED = "the checker does not FAIL it on the mutants that break it: "

KNOWN_GAPS: dict[str, str] = {
    # --- the checker charges another rule (or nothing) for histories that break these
    # --- no operator breaks these yet
}


def _histories() -> list[tuple[str, History]]:
    out = [(f"evidence:{p.relative_to(EVIDENCE.parent)}", load(p))
           for root in (EVIDENCE, *EXTRA_EVIDENCE) for p in sorted(root.rglob("*.jsonl"))]
    for case in discover_cases():
        client = case.clients[0] if case.clients else "python"
        client = client if client in ("java", "go") else "python"
        try:
            out.append((f"model:{case.id}", ModelTarget(client=client).run(case.trace)))
        except Exception:  # a case the model cannot run (mixed clients, ...): no history to mutate
            continue
    return out


@lru_cache(maxsize=1)
def breaking_mutants() -> dict[str, tuple[str, mutation.Mutant]]:
    """rule id -> the first (source, mutant) meant to break it that the checker FAILs on it."""
    found: dict[str, tuple[str, mutation.Mutant]] = {}
    for name, history in _histories():
        base = {v.rule_id for v in check(history).failures()}
        for m in mutation.mutants(history):
            if m.allowed is not None or m.unstated is not None or set(m.meant_to_break) <= set(found):
                continue
            try:
                fails = {v.rule_id for v in check(m.history).failures()} - base
            except Exception:
                continue
            for rule in set(m.meant_to_break) & fails:
                found.setdefault(rule, (name, m))
    return found


def test_known_gaps_name_active_rules():
    assert set(KNOWN_GAPS) <= set(ACTIVE), sorted(set(KNOWN_GAPS) - set(ACTIVE))


@pytest.mark.parametrize("rule_id", [
    pytest.param(r, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[r])) if r in KNOWN_GAPS else r
    for r in ACTIVE
])
def test_rule_can_fail(rule_id):
    hit = breaking_mutants().get(rule_id)
    assert hit is not None, f"no mutant meant to break {rule_id} got FAIL on it from conformance.checker.check"
    source, m = hit
    report = check(m.history)
    assert any(v.rule_id == rule_id and v.status == FAIL for v in report.verdicts), (source, m.description)
