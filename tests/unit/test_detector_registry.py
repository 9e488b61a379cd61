"""The detector registry (conformance/detector_registry.py): one detector per active rule, each a real function.

No broker needed. Rule ids: all of them (the registry as a whole); PLS-FAILOVER-001 as the withdrawn one.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import re

import pytest

from conformance import detector_registry as DR
from conformance.detector_registry import DETECTORS, Detector, DetectorRegistryError, build, detector_for
from conformance.trace import OP_SPECS
from reference_model.rules import RULES, Rule, active_rules

# The new detectors live here; until the module exists its names are pending, not failures.
PENDING_MODULE = DR.DETECTORS_MODULE


def _resolve(dotted: str) -> object:
    """The function ``dotted`` names; AttributeError / ModuleNotFoundError when it does not exist."""
    module, path = DR._split(dotted)
    obj: object = importlib.import_module(module)
    for part in path:
        obj = getattr(obj, part)
    return obj


def unresolved(detectors: dict[str, Detector], *, pending_module_exists: bool) -> tuple[list[str], list[str]]:
    """(broken, pending): judged_by names that do not resolve to a function, and those that wait for
    ``PENDING_MODULE`` to be written. Only names in ``PENDING_MODULE``, and only while it is absent, are pending."""
    broken, pending = [], []
    for d in detectors.values():
        if d.module == PENDING_MODULE and not pending_module_exists:
            pending.append(f"{d.rule_id}: {d.judged_by}")
            continue
        try:
            obj = _resolve(d.judged_by)
        except (ImportError, AttributeError) as err:
            broken.append(f"{d.rule_id}: {d.judged_by} ({type(err).__name__}: {err})")
            continue
        if not callable(obj) or inspect.isclass(obj):
            broken.append(f"{d.rule_id}: {d.judged_by} is a {type(obj).__name__}, not a function or method")
    return broken, pending


def _pending_module_exists() -> bool:
    return importlib.util.find_spec(PENDING_MODULE) is not None


# --------------------------------------------------------------------------- the table


def test_one_detector_per_active_rule_and_none_for_withdrawn():
    active = {r.id for r in active_rules()}
    withdrawn = {r.id for r in RULES if r.status == "withdrawn"}
    assert set(DETECTORS) == active, (f"missing: {sorted(active - set(DETECTORS))}; "
                                      f"not active: {sorted(set(DETECTORS) - active)}")
    assert not withdrawn & set(DETECTORS)
    assert all(d.rule_id == k for k, d in DETECTORS.items())
    # one row per rule in the source table too (DETECTORS is a dict: a duplicate would hide there)
    ids = [row[0] for row in DR._TABLE]
    assert len(ids) == len(set(ids)) == len(active)


def test_violated_if_is_one_sentence_starting_violated_if():
    for d in DETECTORS.values():
        assert d.violated_if.startswith("Violated if "), d.rule_id
        assert d.violated_if.endswith(".") and ". " not in d.violated_if.replace("e.g. ", ""), \
            f"{d.rule_id}: one sentence: {d.violated_if!r}"


def test_steps_are_op_kinds_of_the_trace_vocabulary():
    known = set(OP_SPECS) | {"end"}
    for d in DETECTORS.values():
        assert d.steps and len(set(d.steps)) == len(d.steps), d.rule_id
        assert set(d.steps) <= known, f"{d.rule_id}: unknown step kinds {sorted(set(d.steps) - known)}"


def test_every_judged_by_resolves_to_a_function():
    broken, pending = unresolved(DETECTORS, pending_module_exists=_pending_module_exists())
    assert not broken, "judged_by names that do not resolve:\n" + "\n".join(broken)
    if _pending_module_exists():
        assert not pending


def test_detectors_in_the_detectors_module_say_which_rule_and_violated_if():
    if not _pending_module_exists():
        return  # nothing to read yet; test_every_judged_by_resolves_to_a_function lists them as pending
    for d in DETECTORS.values():
        if d.module != PENDING_MODULE:
            continue
        doc = inspect.getdoc(_resolve(d.judged_by)) or ""
        assert doc.startswith(d.rule_id), f"{d.judged_by}'s docstring must start with {d.rule_id}: {doc[:60]!r}"
        assert re.search(r"\bViolated if\b", doc), f"{d.judged_by}'s docstring must say 'Violated if ...'"


def test_no_detector_in_the_detectors_module_is_left_unregistered():
    if not _pending_module_exists():
        return
    mod = importlib.import_module(PENDING_MODULE)
    registered = {_resolve(d.judged_by) for d in DETECTORS.values() if d.module == PENDING_MODULE}
    run = set(getattr(mod, "RECEIPT_DETECTORS", ())) | set(getattr(mod, "OP_DETECTORS", ()))
    assert run <= registered, "detectors the checker runs but the registry does not name: " + \
        ", ".join(sorted(f.__name__ for f in run - registered))


# --------------------------------------------------------------------------- the pending rule itself


def test_a_missing_name_fails_once_the_module_exists_and_is_pending_only_before():
    ghost = {"PLS-ACK-001": dataclasses.replace(DETECTORS["PLS-ACK-001"], judged_by=f"{PENDING_MODULE}.no_such_detector")}
    broken, pending = unresolved(ghost, pending_module_exists=False)
    assert (broken, pending) == ([], [f"PLS-ACK-001: {PENDING_MODULE}.no_such_detector"])
    if _pending_module_exists():
        broken, pending = unresolved(ghost, pending_module_exists=True)
        assert pending == [] and len(broken) == 1 and "no_such_detector" in broken[0]


def test_a_missing_name_in_another_module_is_never_pending():
    ghost = {"PLS-MSG-001": dataclasses.replace(DETECTORS["PLS-MSG-001"], judged_by="conformance.checker._Checker._no_such")}
    broken, pending = unresolved(ghost, pending_module_exists=False)
    assert pending == [] and len(broken) == 1 and "_no_such" in broken[0]


def test_a_name_that_is_not_a_function_is_broken():
    ghost = {"PLS-MSG-001": dataclasses.replace(DETECTORS["PLS-MSG-001"], judged_by="conformance.checker.Verdict")}
    broken, _ = unresolved(ghost, pending_module_exists=True)
    assert len(broken) == 1 and "not a function" in broken[0]


def test_split_finds_module_and_attribute_path():
    assert DR._split("conformance.checker._Checker._receive") == ("conformance.checker", ("_Checker", "_receive"))
    assert DR._split("conformance.feature_checks.check_send") == ("conformance.feature_checks", ("check_send",))
    assert DR._split("conformance.detectors.ack_individual") == ("conformance.detectors", ("ack_individual",))


# --------------------------------------------------------------------------- validation at build


def _row(rule_id: str, judged_by: str = "conformance.checker._Checker._receive") -> tuple:
    return (rule_id, judged_by, ("receive",), f"Violated if {rule_id} breaks.")


def _rule(rule_id: str, status: str = "inferred") -> Rule:
    area = rule_id.split("-")[1]
    return Rule(id=rule_id, area=area, title="t", source="docs/concepts-messaging.md", quote="", status=status, note="n")


def test_build_refuses_an_unregistered_rule():
    with pytest.raises(DetectorRegistryError, match=r"PLS-TEST-002.*not in reference_model/rules.py"):
        build((_row("PLS-TEST-001"), _row("PLS-TEST-002")), rules=(_rule("PLS-TEST-001"),))


def test_build_refuses_a_withdrawn_rule():
    with pytest.raises(DetectorRegistryError, match=r"PLS-TEST-002.*withdrawn"):
        build((_row("PLS-TEST-001"), _row("PLS-TEST-002")), rules=(_rule("PLS-TEST-001"), _rule("PLS-TEST-002", "withdrawn")))


def test_build_refuses_a_missing_active_rule():
    with pytest.raises(DetectorRegistryError, match=r"without a detector: PLS-TEST-002"):
        build((_row("PLS-TEST-001"),), rules=(_rule("PLS-TEST-001"), _rule("PLS-TEST-002")))


def test_build_refuses_two_detectors_for_one_rule():
    with pytest.raises(DetectorRegistryError, match=r"two detectors for PLS-TEST-001"):
        build((_row("PLS-TEST-001"), _row("PLS-TEST-001", "conformance.checker._Checker._generic")),
              rules=(_rule("PLS-TEST-001"),))


def test_build_accepts_a_withdrawn_rule_left_without_detector():
    got = build((_row("PLS-TEST-001"),), rules=(_rule("PLS-TEST-001"), _rule("PLS-TEST-002", "withdrawn")))
    assert list(got) == ["PLS-TEST-001"]


@pytest.mark.parametrize("field, value, match", [
    ("violated_if", "Fails if x.", "must start 'Violated if '"),
    ("violated_if", "Violated if x", "ending in '.'"),
    ("judged_by", "checker._receive", "dotted name in conformance"),
    ("steps", (), "non-empty tuple"),
])
def test_a_malformed_detector_is_refused(field, value, match):
    with pytest.raises(DetectorRegistryError, match=match):
        dataclasses.replace(DETECTORS["PLS-MSG-001"], **{field: value})


def test_detectors_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DETECTORS["PLS-MSG-001"].judged_by = "conformance.checker._Checker._generic"  # type: ignore[misc]


# --------------------------------------------------------------------------- lookups


def test_detector_for_an_active_rule():
    d = detector_for("PLS-NACK-001")
    assert d.rule_id == "PLS-NACK-001" and d is DETECTORS["PLS-NACK-001"]


def test_detector_for_a_withdrawn_rule_says_withdrawn():
    with pytest.raises(KeyError, match="PLS-FAILOVER-001 is withdrawn"):
        detector_for("PLS-FAILOVER-001")


def test_detector_for_an_unknown_rule_names_its_area():
    with pytest.raises(KeyError, match=r"not a registered rule; rules with detectors in that area: PLS-ACK-001"):
        detector_for("PLS-ACK-999")
    with pytest.raises(KeyError, match=r"'nonsense': not a registered rule"):
        detector_for("nonsense")
