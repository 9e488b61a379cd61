"""The broker configurations a fuzz campaign draws (fixtures/broker_configs.py), and the model following them.

A config is only worth drawing if the model judges a broker started with it by that config's
rules: every key must be one the live target records in a history's header and the model reads.
"""

from __future__ import annotations

import pytest

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, make_trace
from fixtures.broker_configs import BROKER_CONFIGS, broker_configs
from fixtures.embedded import CONFORMANCE_CONFIG
from reference_model.dispatch.key_shared import BROKER_CONFIG_KEYS
from reference_model.profiles import PROFILE_CONFIG_KEYS, profile_for, with_broker_config


def test_names_are_read_in_order_and_bad_ones_are_named():
    assert broker_configs("all") == BROKER_CONFIGS
    assert [c.name for c in broker_configs("dedup-on, suite")] == ["dedup-on", "suite"]
    with pytest.raises(ValueError, match="unknown broker config nope; use all or names among suite"):
        broker_configs("suite,nope")
    with pytest.raises(ValueError, match="named twice"):
        broker_configs("suite,suite")
    with pytest.raises(ValueError, match="unknown broker config"):
        broker_configs(" , ")


def test_every_drawn_key_is_one_the_model_follows_and_differs_from_the_suite_broker():
    followed = set(PROFILE_CONFIG_KEYS) | set(BROKER_CONFIG_KEYS)
    for config in BROKER_CONFIGS:
        assert set(config.overrides) <= followed, (config.name, set(config.overrides) - followed)
        assert config.moves
        changed = {k for k, v in config.overrides.items() if CONFORMANCE_CONFIG.get(k) != v}
        assert changed == set(config.overrides), (config.name, "a value equal to the suite broker's draws nothing new")


def test_the_runtime_values_set_the_profile():
    base = profile_for("4.0.8")
    assert (base.broker_batch_index_ack, base.delayed_delivery_strict, base.delayed_delivery_tick_ms, base.broker_deduplication) \
        == (True, True, 100, False)
    got = with_broker_config(base, {"acknowledgmentAtBatchIndexLevelEnabled": "false", "isDelayedDeliveryDeliverAtTimeStrict": "false",
                                    "delayedDeliveryTickTimeMillis": "1000", "brokerDeduplicationEnabled": True})
    assert (got.broker_batch_index_ack, got.delayed_delivery_strict, got.delayed_delivery_tick_ms, got.broker_deduplication) \
        == (False, False, 1000, True)
    assert with_broker_config(base, {"delayedDeliveryTickTimeMillis": ""}) is base  # unset on the broker: the default


def _dedup_trace(broker_config=None):
    profile = {"broker_config": broker_config} if broker_config else None
    return make_trace("broker-dedup", [
        ("create_producer", {"producer": "p1", "topic": "t", "name": "n1"}),
        ("send", {"producer": "p1", "payload": "m1", "sequence_id": 5}),
        ("send", {"producer": "p1", "payload": "m2", "sequence_id": 5}),
    ], **({"profile": profile} if profile else {}))


def test_broker_wide_deduplication_is_followed_from_the_header():
    """brokerDeduplicationEnabled=true: a namespace without a policy deduplicates (PLS-DEDUP-001), so
    the second send with sequence id 5 is not stored and gets the id (-1, -1, -1, -1)."""
    on = ModelTarget().run(_dedup_trace({"brokerDeduplicationEnabled": "true"}))
    assert on.events[-1].outcome.value["message_id"] == [-1, -1, -1, -1]
    off = ModelTarget().run(_dedup_trace())
    assert off.events[-1].outcome.value["message_id"][:2] != [-1, -1]
    # a broker that deduplicated, judged without its config, FAILs PLS-DEDUP-003; with it, PASSes
    assert not check(on).failures()
    unannounced = History(off.header, tuple(Event(e.op, on_e.outcome, e.t_start_ms, e.t_end_ms)
                                            for e, on_e in zip(off.events, on.events)))
    assert "PLS-DEDUP-003" in {v.rule_id for v in check(unannounced).failures()}


def test_a_namespace_policy_overrides_the_broker_default():
    trace = make_trace("policy-over-broker", [
        ("set_policy", {"deduplication": False}),
        ("create_producer", {"producer": "p1", "topic": "t", "name": "n1"}),
        ("send", {"producer": "p1", "payload": "m1", "sequence_id": 5}),
        ("send", {"producer": "p1", "payload": "m2", "sequence_id": 5}),
    ], profile={"broker_config": {"brokerDeduplicationEnabled": "true"}})
    assert ModelTarget().run(trace).events[-1].outcome.value["message_id"][:2] != [-1, -1]


