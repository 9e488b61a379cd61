"""Every conformance case under conformance/cases/ loads, cites registered rules, and together the
cases cover every rule that is not withdrawn. No broker needed.

Also checks the house rules for cases (docs/trace-format.md#cases and the case-design notes):
distinct payload labels, bounded receive timeouts, at most one slow ack-timeout case, and
Java-only rules marked ``clients: [java]``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.case_files import CASE_CLIENTS, CASES_DIR, discover_cases, load_case
from reference_model import rules as R

CASE_FILES = sorted(Path(CASES_DIR).rglob("*.yaml"))


def _ids(paths):
    return [str(p.relative_to(CASES_DIR)) for p in paths]


@pytest.fixture(scope="module")
def cases():
    return discover_cases()  # refuses duplicate case ids


def test_there_are_cases():
    assert CASE_FILES, f"no cases found under {CASES_DIR}"


@pytest.mark.parametrize("path", CASE_FILES, ids=_ids(CASE_FILES))
def test_case_loads_and_cites_registered_rules(path):
    case = load_case(path)
    assert case.id == path.stem, f"{path}: the case id should equal the file name"
    for rule_id in case.rules:
        r = R.rule(rule_id)  # KeyError names the unknown id
        assert r.status != "withdrawn", f"{path}: cites withdrawn rule {rule_id}; cite its replacement"


@pytest.mark.parametrize("path", CASE_FILES, ids=_ids(CASE_FILES))
def test_case_follows_house_rules(path):
    case = load_case(path)
    payloads = [op.args["payload"] for op in case.trace.ops if op.op == "send"]
    assert len(payloads) == len(set(payloads)), f"{path}: every send needs a distinct payload label"
    for op in case.trace.ops:
        if op.op in ("receive", "read_next"):
            limit = 13000 if any(o.op == "subscribe" and "ack_timeout_ms" in o.args for o in case.trace.ops) else 2000
            assert op.args["timeout_ms"] <= limit, f"{path}: step {op.step} waits {op.args['timeout_ms']} ms"
        if op.op == "subscribe" and op.args.get("type") in ("Failover", "Shared", "Key_Shared"):
            assert "consumer_name" in op.args, f"{path}: step {op.step}: set consumer_name for determinism"
    for exp in case.expectations:
        assert exp.status in ("ok", "rejected", "indeterminate")


def test_every_active_rule_has_a_case(cases):
    cited = {rule_id for c in cases for rule_id in c.rules}
    missing = [r.id for r in R.active_rules() if r.id not in cited]
    assert not missing, f"rules without a case: {missing}"


def test_cases_stay_by_area():
    """A case lives in ``cases/<area>/<id>.yaml``: the folder names the area of the spec (the JUnit
    classname ends with it), the ``clients:`` field names the client; no folder per client."""
    not_areas = set(CASE_CLIENTS) | {"cross_client", "cross-client"}
    for path in CASE_FILES:
        rel = path.relative_to(CASES_DIR)
        assert len(rel.parts) == 2, f"{rel}: put the case directly in its area's folder, cases/<area>/<id>.yaml"
        assert rel.parts[0] not in not_areas, (
            f"{rel}: a folder per client; move it to the folder of its rules' area (clients: says the client)")
    areas = {p.relative_to(CASES_DIR).parts[0] for p in CASE_FILES}
    split = sorted((a, b) for a in areas for b in areas if b.startswith(a + "-") or b.startswith(a + "_"))
    assert not split, f"one folder per area: merge {split}"


def test_case_ids_unique(cases):
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))


def test_java_only_rules_are_marked(cases):
    for c in cases:
        rules = [R.rule(i) for i in c.rules]
        if any(r.applies_to.clients == ("java",) for r in rules):
            # java, or mixed: a mixed run has Java handles and judges every client's rules
            assert c.clients in (("java",), ("mixed",)), f"{c.id}: cites a Java-only rule; set clients: [java] (or [mixed])"
            assert not c.runs_on("python")


def test_only_one_slow_ack_timeout_case(cases):
    slow = [c.id for c in cases if any(o.op == "subscribe" and o.args.get("ack_timeout_ms", 0) >= 10000 and
                                       any(r.op == "receive" and r.args["timeout_ms"] > 2000 for r in c.trace.ops)
                                       for o in c.trace.ops)]
    assert len(slow) <= 1, f"more than one case waits for an ack timeout: {slow}"
