"""Scenario rules (``conformance/strategies.py``, "scenarios"): each builds the shape its area's rules need.

A scenario applies a short chain of ops in one draw, so that rules which separate draws almost never
reach (a message nacked past its dead-letter limit and its copy read, a Key_Shared slot drained, a
compacted read, an ack before a cut) are reached within the time-to-detection budget. Proved here the
way the benchmark sees it: a scenario applied alone to a fresh builder gives the model a history that the
lie operators of its area (``conformance.mutation``) can turn into a lie the spec forbids, on many
seeds; a broker configuration the model follows is told by the batch scenario. Each scenario's history is
also the model's own, so the checker passes it.
"""

from __future__ import annotations

import random

import pytest

from conformance import mutation
from conformance.fuzz.judge import check_history
from conformance.strategies import ALL_FEATURES, MODEL_CONFIG, RandomChooser, TraceBuilder, _rule, focused
from conformance.fuzz import FAIL
from conformance.trace import Trace, TraceHeader

SEEDS = 20

# scenario rule -> the lie operators it is there to give a chance (each must get one on several seeds)
SCENARIO_LIES = {
    "consumer_exhausts_redeliveries": ("drop_dlq_copy", "dlq_one_redelivery_fewer", "drop_initial_subscription"),
    "consumer_outranks_another": ("move_to_lower_priority",),
    "key_shared_consumer_takes_over": ("misroute_key_shared", "deliver_before_drained", "change_reported_ranges"),
    "consumer_acks_several": ("cumulative_ack_partial",),
    "admin_reads_named_consumers": ("change_unacked_count",),
    "admin_expires_messages": ("deliver_ttl_expired", "expiry_pass_kept"),
    "reader_reads_compacted": ("compacted_sees_stale", "read_tombstone"),
    "broker_cuts_after_acks": ("deliver_acked_after_fault", "drop_after_fault", "early_delayed_after_fault",
                             "forget_across_fault"),
    "transaction_holds_then_ends": ("deliver_through_transaction", "keep_held_after_timeout", "drop_abort_redelivery"),
    "consumer_nacks_and_waits": ("shift_delivery_earlier", "shift_delivery_later", "redeliver_non_persistent"),
    "consumer_fails_over": ("move_to_other_consumer",),
    "producer_sends_chunked": ("deliver_chunk_alone",),
}
MIN_SEEDS = 3  # of SEEDS: a scenario that reaches its lie more rarely than this is not doing its job


def _scenario_history(name: str, seed: int):
    """The model's history of ``name`` applied once to a fresh builder with every feature on."""
    config = focused(MODEL_CONFIG, ALL_FEATURES)
    b = TraceBuilder(RandomChooser(random.Random(f"scenario:{name}:{seed}")), config)
    b.enabled = set(config.features)
    b._apply_rule(_rule(name))
    trace = Trace(TraceHeader(trace_id=f"{name}-{seed}", title=name), tuple(b.ops))
    return b.model_history(trace)


def _lies(operator: str, history) -> bool:
    return any(m.allowed is None and m.unstated is None for m in mutation.OPERATORS[operator](history))


@pytest.mark.parametrize("name", sorted(SCENARIO_LIES))
def test_a_scenario_gives_its_lies_a_chance_and_passes_on_the_model(name):
    histories = [_scenario_history(name, seed) for seed in range(SEEDS)]
    assert all(len(h.events) >= 4 for h in histories), [len(h.events) for h in histories]
    for h in histories:
        fails = [(v.rule_id, v.anomaly) for v in check_history(h).verdicts if v.status == FAIL]
        assert not fails, (h.header.trace_id, fails)
    for operator in SCENARIO_LIES[name]:
        reached = sum(_lies(operator, h) for h in histories)
        assert reached >= MIN_SEEDS, f"{name}: {operator} found a lie on {reached} of {SEEDS} seeds"


def test_the_batch_scenario_tells_batch_index_acks_off_from_on():
    """With batch-index acks off on the broker, the acked message of the batch comes back with its
    siblings; the model of the default profile (on) says it may not: the checker FAILs it."""
    from benchmarks.time_to_detection import ConfiguredModel

    flipped = ConfiguredModel({"acknowledgmentAtBatchIndexLevelEnabled": "false"})
    failed = 0
    for seed in range(SEEDS):
        config = focused(MODEL_CONFIG, ALL_FEATURES)
        b = TraceBuilder(RandomChooser(random.Random(f"batch:{seed}")), config)
        b.enabled = set(config.features)
        b._apply_rule(_rule("consumer_acks_in_batches"))
        trace = Trace(TraceHeader(trace_id=f"batch-{seed}", title="batch"), tuple(b.ops))
        assert not [v for v in check_history(b.model_history(trace)).verdicts if v.status == FAIL]
        failed += any(v.status == FAIL for v in check_history(flipped.run(trace)).verdicts)
    assert failed >= MIN_SEEDS, f"the flip was told on {failed} of {SEEDS} seeds"


def test_the_unload_scenario_builds_an_earliest_subscription_after_the_unload():
    """``delete_without_rollover`` needs a broker that deleted acked data after the unload; the model keeps
    it (both answers are allowed without retention, docs/fuzzing.md), so on the model only the shape is
    checked: acks, the consumer closed, the unload, then a new Earliest subscription receiving."""
    shaped = 0
    for seed in range(SEEDS):
        ops = [e.op for e in _scenario_history("topic_unloaded_after_acks", seed).events]
        kinds = [op.op for op in ops]
        if "unload_topic" in kinds:
            u = kinds.index("unload_topic")
            shaped += "ack" in kinds[:u] and "close" in kinds[:u] and any(
                op.op == "subscribe" and op.args.get("initial_position") == "Earliest" for op in ops[u:]) \
                and kinds[-1] == "receive"
    assert shaped >= MIN_SEEDS, shaped


def test_scenarios_are_only_drawn_with_their_feature_on():
    """A trace whose swarm switched a scenario's feature off never runs it (the config without the
    feature builds the traces it built before scenarios existed)."""
    from conformance.strategies import _FEATURE_OF, _enabled

    for name in list(SCENARIO_LIES) + ["consumer_acks_in_batches", "topic_unloaded_after_acks"]:
        feature = _FEATURE_OF[name]
        b = TraceBuilder(RandomChooser(random.Random(0)), MODEL_CONFIG)
        b.enabled = set(MODEL_CONFIG.features) - {feature}
        assert not _enabled(b, _rule(name)), name
        b.enabled.add(feature)
        assert _enabled(b, _rule(name)), name
