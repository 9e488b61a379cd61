"""The fault cases and generated fault traces on an embedded broker behind the fault proxy.

One 4.0.8 broker is started here with ``faults=True`` (``fixtures/faults.py``: Toxiproxy, built
from its Go module on first use, between the clients and the broker; ``restart_broker`` restarts
the broker on its own data). Every case of ``conformance/cases/faults`` must PASS with each fault
rule it names judged PASS by its detector (PLS-FAULT-001..006), and generated traces that hold
fault ops (``LIVE_NEMESIS_CONFIG``, restarts included) must show no FAIL and no harness error. The
session broker of the other live tests has no proxy, so ``tests/conformance/test_cases.py`` leaves
the fault cases to this file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.case_files import discover_cases, is_upstream
from conformance.checker import check
from conformance.runner import PASS, run_case
from conformance.strategies import LIVE_NEMESIS_CONFIG, random_traces
from conformance.trace import FAULT_OPS, injects_faults

pytestmark = pytest.mark.live

# the suite's fault cases; the upstream translations that restart the broker run with the upstream cases
# (`pytest -m "live and upstream"`, docs/ci.md), not here
FAULT_CASES = [c for c in discover_cases() if injects_faults(c.trace) and not is_upstream(c)]
GENERATED_SEED = 12  # seeded fast generator: the same traces on every run
GENERATED_WITH_FAULTS = 6
GENERATED_IN_CI = 3  # the others are the extended tier's (docs/ci.md): each restarts the broker at least once


@pytest.fixture
def broker_log_since(fault_target):
    """The broker's warnings and errors written during this test, for a failure's message: CI keeps
    only what it prints, and a fault that goes wrong under load is seldom seen twice."""
    path = Path(fault_target.endpoint.log_path)
    start = path.stat().st_size if path.exists() else 0

    def read(limit: int = 40) -> str:
        try:
            with path.open("rb") as f:
                f.seek(start)
                text = f.read().decode("utf-8", errors="replace")
        except OSError as err:
            return f"(broker log {path} unreadable: {err})"
        lines = [line for line in text.splitlines() if " WARN " in line or " ERROR " in line or "pulsar-conformance:" in line]
        return f"broker log {path}, warnings and errors during the test (last {limit}):\n" + "\n".join(lines[-limit:])

    return read


def test_every_fault_rule_has_a_case_here():
    named = {r for c in FAULT_CASES for r in c.rules if r.startswith("PLS-FAULT-")}
    assert named == {f"PLS-FAULT-00{i}" for i in range(1, 7)}, sorted(named)
    assert all(c.runs_on("python") for c in FAULT_CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[pytest.mark.rule(*c.rules)]) for c in FAULT_CASES])
def test_fault_case_on_the_broker_behind_the_proxy(case, fault_target, tmp_path, request, broker_log_since):
    result = run_case(case, fault_target, client="python", history_dir=tmp_path)
    for rule, verdict in sorted(result.rule_verdicts.items()):
        request.node.user_properties.append((f"verdict:{rule}", verdict))
    assert result.status == PASS, result.failure_text() + "\n" + broker_log_since()
    for rule in case.rules:
        assert result.rule_verdicts.get(rule) == PASS, (rule, result.rule_verdicts.get(rule))


def _generated_fault_traces():
    config = LIVE_NEMESIS_CONFIG
    found = []
    for trace in random_traces(GENERATED_SEED, 400, config):
        if injects_faults(trace):
            found.append(trace)
        if len(found) == GENERATED_WITH_FAULTS:
            break
    return found


@pytest.mark.parametrize("trace", [pytest.param(t, id=t.header.trace_id, marks=[pytest.mark.extended] if i >= GENERATED_IN_CI else [])
                                   for i, t in enumerate(_generated_fault_traces())])
def test_generated_fault_trace_on_the_broker_behind_the_proxy(trace, fault_target, broker_log_since):
    history = fault_target.run(trace)
    report = check(history)
    assert not report.harness_errors, f"{report.harness_errors}\n{broker_log_since()}"
    assert report.ok, "\n".join([*(f"{v.rule_id} step {v.step}: {v.explanation}" for v in report.failures()), broker_log_since()])
    faults = [e for e in history.events if e.op.op in FAULT_OPS]
    assert faults and all(e.outcome.status == "ok" for e in faults), f"{[(e.step, e.op.op, e.outcome) for e in faults]}\n{broker_log_since()}"
