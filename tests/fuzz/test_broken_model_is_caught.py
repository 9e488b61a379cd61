"""The proof that differential fuzzing works: a deliberately broken rule is caught and shrunk.

The checker judges the *real* model target's histories with a *broken* copy of the model (one
rule flipped by monkeypatching the checker's ``Broker``). The pipeline must find a trace where
the two disagree and shrink it to a few ops. A live test then runs ~20 generated traces on the
broker and reports what it found.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import conformance.checker as checker_module
import reference_model.broker as broker_module
from conformance.fuzz import fuzz_hypothesis
from conformance.strategies import LIVE_CONFIG, MODEL_CONFIG
from conformance.targets.model import ModelTarget
from reference_model.broker import Broker


class ForgetsSharedCumulativeRefusal(Broker):
    """Broken PLS-ACK-003: forgets that cumulative acks are refused on Shared/Key_Shared."""

    def _ack_cumulative_anywhere(self, args, at, observed):
        saved = broker_module.CUMULATIVE_ACK_TYPES
        broker_module.CUMULATIVE_ACK_TYPES = ("Exclusive", "Failover", "Shared", "Key_Shared")
        try:
            return (yield from Broker.STEPS["ack_cumulative"](self, args, at, observed))
        finally:
            broker_module.CUMULATIVE_ACK_TYPES = saved

    STEPS = {**Broker.STEPS, "ack_cumulative": _ack_cumulative_anywhere}


class SlowNackBroker(Broker):
    """Broken PLS-NACK-002: believes the client floors the nack delay at 1 s, not 100 ms."""

    def __init__(self, profile=None, **kw):
        super().__init__(profile, **kw)
        self.profile = replace(self.profile, nack_min_delay_ms=1000)


# Each proof searches the features its broken rule lives in (every one of them on: no swarm), so
# whether the rule is reached does not hang on one seed's luck; the search and the shrinking are
# the real pipeline. The whole-feature search is exercised by the mass runs and the live test.
BASICS = ("producer_connects", "producer_sends", "consumer_subscribes", "consumer_receives", "clock_advances")
CUMULATIVE = replace(MODEL_CONFIG, swarm=False, features=BASICS + (
    "consumer_acks_cumulatively", "consumer_acks", "expected_rejections", "Shared", "Key_Shared", "Exclusive"))
NACKS = replace(MODEL_CONFIG, swarm=False, features=BASICS + ("consumer_nacks", "consumer_acks", "Shared", "Exclusive"))


def _caught(monkeypatch, tmp_path, broken, wanted, *, config, examples=400, seed=7):
    monkeypatch.setattr(checker_module, "Broker", broken)
    summary = fuzz_hypothesis(ModelTarget(), examples=examples, seed=seed, out_dir=tmp_path / "out", run_id="proof",
                              config=config, regressions_dir=tmp_path / "regressions", reruns=1,
                              max_shrinks=200, progress=False, stop_when=wanted)
    hits = [f for f in summary.failures if wanted(f)]
    assert hits, f"the broken rule was not caught:\n{summary.text()}"
    return hits[0], summary


def test_forgotten_cumulative_ack_refusal_is_caught_and_shrunk(monkeypatch, tmp_path):
    hit, summary = _caught(monkeypatch, tmp_path, ForgetsSharedCumulativeRefusal,
                           # the broken model forgot PLS-ACK-003's reason, so the refusal has none a rule names
                           lambda f: f.signature == ("PLS-OP-001", "unexpected-rejection"), config=CUMULATIVE)
    print(f"shrunk {hit.original_ops} -> {hit.shrunk_ops} ops:\n{hit.program}")
    assert hit.status == "FAIL"
    assert hit.shrunk_ops <= 6, hit.program
    assert "ack_cumulative" in hit.program and "Shared" in hit.program
    saved = tmp_path / "regressions"
    assert list(saved.glob("*.trace.jsonl")) and list(saved.glob("*.history.jsonl")) and list(saved.glob("*.verdicts.json"))


def test_wrong_nack_delay_floor_is_caught_and_shrunk(monkeypatch, tmp_path):
    hit, _ = _caught(monkeypatch, tmp_path, SlowNackBroker, lambda f: f.signature[1] == "early-redelivery", config=NACKS)
    print(f"shrunk {hit.original_ops} -> {hit.shrunk_ops} ops:\n{hit.program}")
    assert hit.shrunk_ops <= 6, hit.program
    assert ".nack(" in hit.program


@pytest.mark.live
def test_generated_traces_on_the_live_broker(live_target, tmp_path):
    summary = fuzz_hypothesis(live_target, examples=20, seed=2026, out_dir=tmp_path / "out", run_id="live-proof",
                              config=LIVE_CONFIG, regressions_dir=tmp_path / "regressions", reruns=2,
                              max_shrinks=12, polish_runs=10, progress=False)
    print(summary.text())
    assert summary.examples + summary.skipped >= 20
    assert summary.model_failed == 0 or all(k.startswith("model: PLS-SHARED-001") for k in summary.signatures
                                            if k.startswith("model:")), summary.text()
    assert not [f for f in summary.failures if f.status == "FAIL"], summary.text()
