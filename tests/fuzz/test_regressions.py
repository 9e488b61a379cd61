"""Replay every saved fuzz failure (``conformance/regressions/*.trace.jsonl``).

Each trace runs on the model (the checker must accept the model's own history) and, marked
``live``, on the broker (the checker must accept the broker's history). A regression whose
``<id>.verdicts.json`` says ``"open": true`` is a known, classified, not yet fixed finding
(``classification``: ``model-bug``, ``checker-bug``, ``harness-bug``, ``checker-tolerance`` or
``broker-deviation``): on the side it names (``"fails_on"``: ``model`` / ``live``) its failure is
an expected failure. On the model (deterministic) it is strict: once fixed, the test fails until
the entry is closed. On a live broker a timing finding may not reproduce every run, so there it
is lenient.
Anything else that fails is a regression.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.checker import check
from conformance.fuzz import program
from conformance.targets.model import ModelTarget
from conformance.timing import TimingBands
from conformance.trace import load

REGRESSIONS = Path(__file__).resolve().parents[2] / "conformance" / "regressions"
TRACES = sorted(REGRESSIONS.glob("*.trace.jsonl"))


def _bands(target) -> TimingBands:
    """The bands a live replay is judged with: those measured on the target's broker (the calibrated
    fixtures, conformance/plugin.py and tests/conftest.py), never narrower than the default bands the
    findings were kept under (``TimingBands.no_narrower_than_default``)."""
    timing = getattr(target, "timing", None)
    measured = TimingBands.from_json(timing) if timing else TimingBands.default_live()
    return measured.no_narrower_than_default()


def _meta(path: Path) -> dict:
    doc = path.with_name(path.name.replace(".trace.jsonl", ".verdicts.json"))
    return json.loads(doc.read_text(encoding="utf-8")) if doc.exists() else {}


def _judge(target, path: Path, side: str) -> None:
    trace = load(path)
    history = target.run(trace)
    report = check(history, tolerances=_bands(target) if side == "live" else None)
    failures = report.failures()
    meta = _meta(path)
    if not failures:
        # the model side is deterministic: an open finding that no longer fails there was fixed,
        # and its entry must be closed ("open": false) so it guards against the bug's return.
        if side == "model" and meta.get("open") and "model" in meta.get("fails_on", []):
            pytest.fail(f"{path.name}: this open {meta.get('classification')} no longer fails on the model; close it")
        return
    text = f"{report.summary()}\n{program(trace, history, report)}"
    if meta.get("open") and side in meta.get("fails_on", []):
        pytest.xfail(f"open {meta.get('classification')}: {meta.get('note', '')}\n{text}")
    pytest.fail(text)


@pytest.mark.parametrize("path", TRACES, ids=[p.name.replace(".trace.jsonl", "") for p in TRACES])
def test_regression_on_model(path: Path) -> None:
    _judge(ModelTarget(), path, "model")


def _injects_faults(path: Path) -> bool:
    from conformance.trace import injects_faults

    return injects_faults(load(path))


def _driver_handles(path: Path) -> bool:
    """Whether a handle of the trace belongs to the Java or the Go client (its op names ``client``)."""
    return any(op.args.get("client") in ("java", "go") for op in load(path).ops)


PLAIN = [p for p in TRACES if not _injects_faults(p)]
# The fault ops run live with Python handles only (docs/faults.md: the proxy's cut and restart are
# followed through the Python client); a fault trace with Java or Go handles is a finding of the
# model's generator and is replayed on the model only (test_regression_on_model).
WITH_FAULTS = [p for p in TRACES if _injects_faults(p) and not _driver_handles(p)]


@pytest.mark.live
@pytest.mark.parametrize("path", PLAIN, ids=[p.name.replace(".trace.jsonl", "") for p in PLAIN])
def test_regression_on_live_broker(path: Path, calibrated_target_for) -> None:
    _judge(calibrated_target_for("mixed" if _driver_handles(path) else "python"), path, "live")


if WITH_FAULTS:  # a parametrization over no trace would be a skip, which .ci/run refuses
    @pytest.mark.live
    @pytest.mark.parametrize("path", WITH_FAULTS, ids=[p.name.replace(".trace.jsonl", "") for p in WITH_FAULTS])
    def test_fault_regression_on_a_broker_behind_the_proxy(path: Path, fault_target) -> None:
        _judge(fault_target, path, "live")


CLASSIFICATIONS = ("model-bug", "checker-bug", "harness-bug", "checker-tolerance", "broker-deviation")  # as above


@pytest.mark.parametrize("path", TRACES, ids=[p.name.replace(".trace.jsonl", "") for p in TRACES])
def test_every_kept_finding_is_triaged(path: Path) -> None:
    """A finding kept in the store says what it was (its class), whether it is still open, and why: an
    ``unclassified`` entry is a finding nobody triaged."""
    meta = _meta(path)
    assert meta, f"{path.name} has no verdicts.json beside it"
    assert meta.get("classification") in CLASSIFICATIONS, \
        f"{path.name}: classification {meta.get('classification')!r} is not one of {CLASSIFICATIONS}; triage it"
    assert isinstance(meta.get("open"), bool), f"{path.name}: say \"open\": true or false"
    assert len(meta.get("note", "")) > 40, f"{path.name}: the note must say what the finding was and what was done"
    if meta["open"]:
        assert set(meta.get("fails_on", [])) <= {"model", "live"} and meta.get("fails_on"), \
            f"{path.name}: an open finding names the side it fails on (\"fails_on\": [\"model\"] or [\"live\"])"
