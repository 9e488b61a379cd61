"""The rule registry (reference_model/rules.py): its invariants, lookups and coverage by cases.

No broker needed. Rule ids: all of them (the registry as a whole).
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from reference_model import rules as R
from reference_model.rules import AppliesTo, Rule, RuleRegistryError, build_registry

# The ids the model-core issue fixes (/tmp/rule_ids.md at the time of writing). They must stay
# registered forever: an id is never removed, only withdrawn.
FIXED_IDS = (
    "PLS-TOPIC-001 PLS-TOPIC-002 PLS-TOPIC-003 PLS-MSGID-001 PLS-MSGID-002 PLS-MSG-001 "
    "PLS-PROD-001 PLS-PROD-002 PLS-SUB-001 PLS-SUB-002 PLS-SUB-003 PLS-SUB-004 PLS-SUB-005 "
    "PLS-SUB-006 PLS-SEEK-001 PLS-SEEK-002 PLS-SEEK-003 PLS-READER-001 PLS-READER-002 "
    "PLS-READER-003 PLS-READER-004 PLS-EXCL-001 PLS-EXCL-002 PLS-SUBTYPE-001 PLS-FAILOVER-001 "
    "PLS-FAILOVER-002 PLS-SHARED-001 PLS-SHARED-002 PLS-ACK-001 PLS-ACK-002 PLS-ACK-003 "
    "PLS-ACK-004 PLS-ACK-005 PLS-NACK-001 PLS-NACK-002 PLS-NACK-003 PLS-NACK-004 "
    "PLS-ACKTIMEOUT-001 PLS-ACKTIMEOUT-002 PLS-REDELIVER-001 PLS-BACKLOG-001 PLS-DLQ-001 "
    "PLS-RETRY-001"
).split()


def _good(**changes) -> Rule:
    base = dict(
        id="PLS-TEST-001",
        area="TEST",
        title="a rule",
        source="docs/concepts-messaging.md#acknowledgment",
        quote="A sentence from the docs.",
        status="normative",
        applies_to=AppliesTo("*", ("python",)),
        note="",
    )
    base.update(changes)
    return Rule(**base)


# --------------------------------------------------------------------------- the table


def test_every_fixed_id_is_registered():
    registered = {r.id for r in R.RULES}
    missing = [i for i in FIXED_IDS if i not in registered]
    assert not missing, f"rule ids were removed from the registry (withdraw them instead): {missing}"


def test_ids_unique_well_formed_and_area_matches():
    ids = [r.id for r in R.RULES]
    assert len(ids) == len(set(ids))
    for r in R.RULES:
        m = R.RULE_ID_RE.match(r.id)
        assert m and m.group("area") == r.area, r.id


def test_statuses_known_and_evidence_present():
    for r in R.RULES:
        assert r.status in R.STATUSES, r.id
        if r.status == "normative":
            assert r.quote.strip(), f"{r.id}: normative rules quote their source"
        else:
            assert r.note.strip(), f"{r.id}: non-normative rules say where they come from"


def test_sources_name_a_docs_page_or_a_source_file():
    docs = re.compile(r"^(docs|static/reference/[0-9.x]+/[a-z]+)/[a-z0-9-]+\.md(#[a-z0-9-]+)?$")
    code = re.compile(r"^apache/(pulsar|pulsar-client-cpp|pulsar-client-python|pulsar-client-go) \S+")
    # a vendor profile's rules (reference_model/vendors.py) cite the vendor's documentation page (without its scheme:
    # the HTML report prints sources, and the page links nowhere, tests/reports/test_html_report_browser.py)
    vendor = re.compile(r"^tencentcloud\.com/document/product/\d+/\d+$")
    for r in R.RULES:
        if r.applies_to.vendors != R.VENDORS:
            assert vendor.match(r.source), f"{r.id}: a vendor rule cites its vendor's page, not {r.source!r}"
            continue
        assert docs.match(r.source) or code.match(r.source), f"{r.id}: odd source {r.source!r}"


def test_quotes_are_short_and_code_sources_carry_no_quote():
    for r in R.RULES:
        assert len(r.quote) <= 300, f"{r.id}: quote one sentence, not a paragraph"
        if r.source.startswith("apache/") and r.source.endswith((".cc", ".h", ".java")):
            assert r.quote == "", f"{r.id}: a code source is cited, not quoted (paraphrase in note)"


def test_withdrawn_rules_say_why():
    for r in R.RULES:
        if r.status == "withdrawn":
            assert "withdrawn" in r.note.lower() or "replaced" in r.note.lower(), r.id


def test_rules_are_frozen():
    r = R.RULES[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.status = "withdrawn"  # type: ignore[misc]


# --------------------------------------------------------------------------- lookups


def test_rule_lookup_and_helpful_key_error():
    assert R.rule("PLS-ACK-004").area == "ACK"
    with pytest.raises(KeyError, match="PLS-ACK-001"):
        R.rule("PLS-ACK-999")
    with pytest.raises(KeyError, match="unknown rule id"):
        R.rule("nonsense")


def test_rules_by_area_partitions_the_registry():
    groups = R.rules_by_area()
    assert sum(len(v) for v in groups.values()) == len(R.RULES)
    for area, rs in groups.items():
        assert all(r.area == area for r in rs)
    assert [r.id for r in groups["NACK"]][:2] == ["PLS-NACK-001", "PLS-NACK-002"]


def test_applies_by_client_and_broker_version():
    nack = R.rule("PLS-NACK-001")
    assert R.applies(nack, broker_version="4.0.8", client="python")
    assert not R.applies(nack, broker_version="4.0.8", client="java")
    assert not R.applies(R.rule("PLS-NACK-004"), broker_version="4.0.8", client="python")
    assert R.applies(R.rule("PLS-NACK-004"), broker_version="4.0.8", client="java")
    ranged = _good(applies_to=AppliesTo(">=3.0,<4.1", ("python",)))
    assert R.applies(ranged, broker_version="3.0.0", client="python")
    assert R.applies(ranged, broker_version="4.0.8", client="python")
    assert not R.applies(ranged, broker_version="4.1.0", client="python")
    assert not R.applies(ranged, broker_version="2.11.4", client="python")


def test_withdrawn_rules_apply_nowhere():
    for r in R.RULES:
        if r.status == "withdrawn":
            assert not R.applies(r, broker_version="4.0.8", client=r.applies_to.clients[0])


def test_to_json_round_trips_every_rule():
    data = json.loads(R.to_json())
    assert [d["id"] for d in data] == [r.id for r in R.RULES]
    first = data[0]
    assert set(first) == {f.name for f in dataclasses.fields(Rule)}
    assert set(first["applies_to"]) == {"brokers", "clients"}


# --------------------------------------------------------------------------- validation


def test_duplicate_id_is_refused():
    with pytest.raises(RuleRegistryError, match="duplicate rule id PLS-TEST-001"):
        build_registry([_good(), _good(title="another")])


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"status": "confirmed"}, "status"),
        ({"id": "PLS-TEST-1"}, "must look like"),
        ({"id": "ACK-001", "area": "ACK"}, "must look like"),
        ({"area": "ACK"}, "does not match"),
        ({"quote": ""}, "quote"),
        ({"status": "inferred", "note": ""}, "note"),
    ],
)
def test_malformed_rule_is_refused(changes, message):
    with pytest.raises(RuleRegistryError, match=message):
        _good(**changes)


def test_bad_broker_version_spec_is_refused():
    with pytest.raises(RuleRegistryError, match="broker version clause"):
        AppliesTo("~4.0", ("python",))


def test_unknown_client_is_refused():
    with pytest.raises(RuleRegistryError, match="unknown clients"):
        AppliesTo("*", ("rust",))
