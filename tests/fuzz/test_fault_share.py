"""``fuzz --faults`` on a broker draws fault ops in at least half of its traces (docs/faults.md,
docs/fuzzing.md), with either generator, checked on the generator alone (no broker): the traces a
live ``fuzz --target embedded --faults`` would run are generated from the same config."""

from __future__ import annotations

from pathlib import Path

from conformance.fuzz.driver import hypothesis_search
from conformance.strategies import generation_config, random_traces
from conformance.targets.model import ModelTarget
from conformance.trace import injects_faults

STATED_SHARE = 0.5  # docs/faults.md "fuzz --faults": at least half the traces hold a fault op
TRACES = 200


def test_the_seeded_generator_with_faults_puts_a_fault_in_at_least_half_the_traces():
    config = generation_config(model=False, faults=True)
    for seed in (0, 7):
        with_fault = sum(injects_faults(t) for t in random_traces(seed, TRACES, config))
        assert with_fault >= STATED_SHARE * TRACES, (seed, with_fault)


def test_without_faults_no_trace_holds_one():
    assert not any(injects_faults(t) for t in random_traces(0, TRACES, generation_config(model=False)))


def test_hypothesis_with_faults_puts_a_fault_in_at_least_half_the_traces(tmp_path):
    """The live default generator. Hypothesis draws its simplest example first: that one holds a
    fault too, so even ``--examples 3`` runs faults."""
    seen: list[bool] = []
    hypothesis_search(ModelTarget(), config=generation_config(model=False, faults=True), max_examples=TRACES, seed=3,
                      known=set(), on_example=lambda trace, history, report: seen.append(injects_faults(trace)),
                      storage_dir=Path(tmp_path) / ".hypothesis")
    assert len(seen) == TRACES
    assert seen[0], "the first (simplest) example holds no fault op"
    assert sum(seen) >= STATED_SHARE * TRACES, sum(seen)
