"""Time to detection: how many generated traces, and seconds, the fuzzer needs to report a known difference.

    python3 -m benchmarks.time_to_detection [--model-only | --live] [--budget 200] [--seed 1] [--out DIR]
                                            [--only NAME]... [--repeats K] [--version-matrix] [--focused]

Each *difference* is a target that differs from the reference model in one known way. The fuzzer's
own search (``conformance.fuzz.fuzz_hypothesis``: Hypothesis generation, ``hypothesis_search``,
Hypothesis shrinking, ``ddmin`` polish, re-runs: what ``pulsar-conformance fuzz --generator
hypothesis`` does, with the command's limits for the target kind) runs generated traces on it until it
reports a failure the difference explains, or the budget of generated traces is spent. Printed per
difference: traces to the first failing trace, seconds to it, seconds until it was shrunk and confirmed,
the shrunk program's length in ops, the rule id (and anomaly) that failed, FAIL or FLAKY, and for a lie
``lies/chances/runs``: of the target's runs (generated, shrink and re-runs), how many carried the lie and how
many the operator could mutate at all (a lie, or one the spec allows: ``chances`` 0 means no generated trace
reached the rule; chances without lies, that every lie there was inside what the spec allows). Target
(issue 16): every difference found, and shrunk to at most 10 ops, within 200 live traces.

The differences:

(a) ``config:*``, a broker whose configuration differs from what the model assumes. A live target
    reads the broker's runtime configuration (``GET /admin/v2/brokers/configuration/runtime``) into
    every history's header (``broker_config``) and the checker follows it, so a flipped key changes
    nothing there. What a user really faces is the case where that read is refused (a token without
    superuser rights, ``BrokerTarget.broker_config``): the header has no ``broker_config`` and the
    model assumes its profile (the broker.conf defaults for the Key_Shared keys, the suite's embedded
    broker's values for the others). That is the mechanism here: the embedded broker is
    started with the key flipped (``--config-override``'s path, ``broker_for(overrides=...)``) and
    the target behaves as if the runtime read were refused (``DefaultsAssumed``); nothing is stripped
    from a history after the fact. On the model (``--model-only``) the same difference is the model
    target run with the flipped key pinned in the trace's ``broker_config`` (the model of such a broker),
    judged without it (``ConfiguredModel``).
    - ``subscriptionKeySharedUseConsistentHashing=false``: Key_Shared AUTO_SPLIT by hash ranges instead of
      the consistent-hash ring (PLS-KEYSHARED-003 vs -004). The ring places keys (and reports hash ranges)
      by consumer *name*, and the generator names Failover consumers only: with the client's random
      names the checker cannot know a ring owner and allows any consumer (``reference_model/dispatch/
      key_shared.py``, rule 1), so the generated traces cannot show this flip at all. The row
      ``(what-if: named)`` measures what naming Key_Shared consumers in the generator would give
      (``NamesKeySharedConsumers`` names each after its handle before the trace runs; the printed
      program leaves the name out). The fix belongs in ``strategies.py``; see docs/fuzzing.md.
    - ``PROFILE_FLIPS``, the other keys the model follows from ``broker_config`` (``PROFILE_CONFIG_KEYS``:
      ``acknowledgmentAtBatchIndexLevelEnabled=false``, the stock delayed-delivery tick and strictness,
      ``brokerDeduplicationEnabled=true``), each against the model's profile (the suite's embedded
      broker): on the model only, since the live pool (``LIVE_CONFIG``) generates no batching, delayed
      sends or deduplication yet. A failure counts when the unflipped model's history of the shrunk trace
      does not fail so.
(b) ``lie:<operator>``, one rule broken. ``conformance/mutation.py`` holds history mutations, not model
    mutations: each operator tells one lie in a history (a redelivery too early, a delivery that never
    came, ...) and says which rules it is meant to break. Here the target tells that lie: every history
    the real target (model or live broker) returns is replaced by the operator's first mutant that the
    spec forbids and a registered rule states (``LyingTarget``; a mutant the operator marks ``allowed`` or
    ``unstated`` is never told; a history with no such mutant is returned as it was: that trace did not
    reach the broken rule). It is a broker that breaks one rule whenever a trace gives it the chance; the
    checker's model is untouched. A detection counts when the fuzzer reports a failure the lie caused:
    the shrunk trace carried a lie and the untold history does not fail with that signature (so a live
    broker's own deviation is not counted). When the failing rule is not one the lie was meant to break,
    the table says ``(elsewhere)``: the fuzzer found the difference, the checker charged another rule.
    Every operator runs on the model; a handful (``LIVE_LIES``) on the live broker.
(c) ``version:3.3.6-as-4.0.8`` (``--version-matrix``, live only, needs the 3.3.6 distribution cached): a
    3.3.6 broker while the model is told 4.0.8 (the target reports 4.0.8 as its version,
    ``VersionAssumed``), the Key_Shared selectors of the two lines differing.

(d) ``--focused``: every difference again, the fuzzer aimed at its area (``fuzz --focus``,
    ``strategies.focused``: ``AREA_FOCUS`` names the features each area's rules need, switched on in
    every trace on top of the swarm's draws). It answers how long a user who fuzzes the area they care
    about waits; the unfocused rows how long a whole-vocabulary campaign does.

Choices:
- Generator pools: ``MODEL_CONFIG`` on the model (``MODEL_FAULT_CONFIG`` for the fault lies, as ``fuzz
  --faults``; now the same pool), ``LIVE_CONFIG`` live: the pools ``fuzz`` draws from. Limits as the command sets them:
  on the model 600 Hypothesis shrink runs, 500 ddmin runs, 1 re-run; live 60, 30 and 3.
- "Traces to detection" counts generated traces up to and including the first one whose failure the
  difference explains (``on_tick`` sees the signature appear); Hypothesis' shrink runs are not counted
  there but are in "s to shrunk".
- One seed per row by default: a time to detection is one draw; ``--repeats K`` runs K seeds and
  prints each row's median and worst.
- Every file (corpus parts, regressions, Hypothesis' files, ``results.json``) goes under ``--out``
  (default: a new temporary folder).

Not measured: the ``PROFILE_FLIPS`` keys on a live broker (their features are not in the live pool), and
``topicCompactionRetainNullKey`` (compaction of keyless messages; not flipped here).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance import mutation  # noqa: E402
from conformance.fuzz import FAIL, FailureRecord, fuzz_hypothesis  # noqa: E402
from conformance.fuzz.judge import check_history  # noqa: E402
from conformance.strategies import LIVE_CONFIG, MODEL_CONFIG, MODEL_FAULT_CONFIG, GenConfig, focused  # noqa: E402
from conformance.targets.model import ModelTarget  # noqa: E402
from conformance.trace import History, Trace  # noqa: E402

MAX_SHRUNK_OPS = 10  # the target: shrunk to at most this many ops

# The operators each area of conformance/mutation.py is told by (every operator, once).
AREAS: dict[str, tuple[str, ...]] = {
    "redelivery and delivery timing": ("shift_delivery_earlier", "shift_delivery_later"),
    "lost, duplicate, reordered deliveries": ("drop_delivery", "duplicate_delivery", "reorder_same_key"),
    "subscription ownership (Exclusive, Failover, priority)": ("move_to_other_consumer", "move_to_lower_priority"),
    "Key_Shared": ("misroute_key_shared", "deliver_before_drained", "change_reported_ranges"),
    "rejections": ("change_error_name", "accept_rejected", "reject_ok_op", "refuse_short_topic_name"),
    "stats and backlog": ("change_stat", "change_unacked_count", "stats_after_unsubscribe"),
    "acks": ("deliver_acked", "cumulative_ack_partial"),
    "message fields and ids": ("change_message_field", "change_send_id", "change_received_id",
                               "change_last_sequence_id"),
    "dead letters": ("drop_dlq_copy", "dlq_one_redelivery_fewer", "drop_initial_subscription",
                     "change_redelivery_count"),
    "TTL, retention, compaction": ("deliver_ttl_expired", "expiry_pass_kept", "delete_without_rollover",
                                   "compacted_sees_stale", "read_tombstone"),
    "non-persistent topics": ("redeliver_non_persistent",),
    "batching, dedup, chunking": ("change_flush_ids", "change_send_outcome", "deliver_chunk_alone"),
    "faults": ("deliver_acked_after_fault", "drop_after_fault", "early_delayed_after_fault", "forget_across_fault"),
    "transactions": ("deliver_through_transaction", "keep_held_after_timeout", "drop_abort_redelivery"),
    "schemas": ("refuse_schema_admission", "change_schema_versions", "change_schema_version"),
}
# The features each area's rules need (``--focused``): on in every trace of a focused row.
AREA_FOCUS: dict[str, tuple[str, ...]] = {
    "redelivery and delivery timing": ("consumer_nacks", "delayed_sends"),
    "lost, duplicate, reordered deliveries": ("several_consumers", "keys"),
    "subscription ownership (Exclusive, Failover, priority)": ("Failover", "several_consumers", "java_handles"),
    "Key_Shared": ("Key_Shared", "several_consumers", "keys", "consumer_options"),
    "rejections": ("expected_rejections",),
    "stats and backlog": ("admin_reads_backlog", "consumer_unsubscribes"),
    "acks": ("consumer_acks", "consumer_acks_cumulatively"),
    "message fields and ids": ("keys", "properties", "event_times"),
    "dead letters": ("dead_letter", "consumer_nacks"),
    "TTL, retention, compaction": ("namespace_policies", "admin_ops", "keys"),
    "non-persistent topics": ("non_persistent", "second_topic"),
    "batching, dedup, chunking": ("batching", "chunking", "producer_options"),
    "faults": ("faults",),
    "transactions": ("transactions", "java_handles"),
    "schemas": ("schemas", "java_handles"),
    "Key_Shared selector": ("Key_Shared", "several_consumers", "keys", "consumer_options"),
    "broker.conf the model follows": (),  # per key: FLIP_FOCUS
}
FLIP_FOCUS: dict[str, tuple[str, ...]] = {
    "acknowledgmentAtBatchIndexLevelEnabled": ("batching", "consumer_acks", "consumer_nacks"),
    "isDelayedDeliveryDeliverAtTimeStrict": ("delayed_sends",),
    "brokerDeduplicationEnabled": ("producer_options",),
}
FAULT_LIES = frozenset(AREAS["faults"])
# The handful told on the live broker: areas the live pool reaches (misroute_key_shared and the other
# Key_Shared lies find no owner to lie about in generated traces: see (a)).
LIVE_LIES = ("drop_delivery", "shift_delivery_earlier", "accept_rejected", "change_stat")

KEY_SHARED_FLIP = {"subscriptionKeySharedUseConsistentHashing": "false"}
# Keys the model follows from broker_config (reference_model/profiles.py PROFILE_CONFIG_KEYS), each set
# against the model's profile (the suite's embedded broker): measured on the model; the live pool does not
# reach their features yet (batching, delayed sends, deduplication are not in LIVE_CONFIG).
PROFILE_FLIPS = (
    {"acknowledgmentAtBatchIndexLevelEnabled": "false"},  # the stock 4.0 value; PLS-BATCH-004/005
    {"isDelayedDeliveryDeliverAtTimeStrict": "false", "delayedDeliveryTickTimeMillis": "1000"},  # stock; PLS-DELAY-*
    {"brokerDeduplicationEnabled": "true"},  # PLS-DEDUP-*
)


# --------------------------------------------------------------------------- the differences


class LyingTarget:
    """``inner`` with one rule broken: each history it returns carries ``operator``'s first lie that
    the spec forbids and a rule states (``conformance.mutation``), when the trace gives it one."""

    def __init__(self, inner: Any, operator: str):
        self.inner = inner
        self.operator = operator
        self.tell = mutation.OPERATORS[operator]
        # ops -> None (no lie told) or (the rules the lie is meant to break, the untold history's FAILs)
        self.told: dict[tuple, tuple[tuple[str, ...], set[tuple[str, str]]] | None] = {}
        self.runs = 0  # runs (generated, shrink and re-runs)
        self.chances = 0  # of which the operator could mutate (a lie, or one the spec allows)
        self.lies = 0  # of which carried a lie

    @property
    def name(self) -> str:
        return getattr(self.inner, "name", "target")

    def run(self, trace: Trace) -> History:
        history = self.inner.run(trace)
        self.runs += 1
        mutants = self.tell(history)
        self.chances += bool(mutants)
        lie = next((m for m in mutants if m.allowed is None and m.unstated is None), None)
        if lie is None:
            self.told[_ops_key(trace)] = None
            return history
        self.lies += 1
        # what the checker already fails in the truth: a failure there is not the lie's doing
        truth = {(v.rule_id, v.anomaly or "") for v in check_history(history).verdicts if v.status == FAIL}
        self.told[_ops_key(trace)] = (lie.meant_to_break, truth)
        return lie.history

    def explains(self, record: FailureRecord) -> bool:
        """The failure is the lie's: the trace carried a lie and the untold history does not fail so."""
        told = self.told.get(_ops_key(record.shrunk)) if record.shrunk is not None else None
        return told is not None and tuple(record.signature) not in told[1]

    def meant(self, record: FailureRecord) -> bool:
        """The failing rule is one the lie was meant to break (else the checker charged it elsewhere)."""
        told = self.told.get(_ops_key(record.shrunk)) if record.shrunk is not None else None
        return told is not None and record.signature[0] in told[0]


class ConfiguredModel:
    """The model of a broker whose broker.conf has ``broker_config``, judged as if it had the defaults:
    the trace runs with the keys pinned in its header, and the history's header is the trace's own."""

    name = "model"

    def __init__(self, broker_config: dict[str, str]):
        self.inner = ModelTarget()
        self.broker_config = dict(broker_config)

    def run(self, trace: Trace) -> History:
        profile = {**dict(trace.header.profile), "broker_config": self.broker_config}
        history = self.inner.run(Trace(replace(trace.header, profile=profile), trace.ops))
        return History(replace(history.header, profile=dict(trace.header.profile)), history.events)


class NamesKeySharedConsumers:
    """``inner``, with every Key_Shared consumer named after its handle (``consumer_name``) before it runs.

    A what-if, not what the fuzzer does: the generator names Failover consumers only, and the
    consistent-hash ring places keys by consumer name, so with the client's random names the checker
    cannot know a key's owner and allows any consumer (``reference_model/dispatch/key_shared.py``, rule
    1). This wrapper shows what naming them in the generator (a change to ``strategies.py``) would buy."""

    def __init__(self, inner: Any):
        self.inner = inner

    @property
    def name(self) -> str:
        return getattr(self.inner, "name", "target")

    def run(self, trace: Trace) -> History:
        ops = tuple(replace(op, args={**op.args, "consumer_name": op.args["consumer"]})
                    if op.op == "subscribe" and op.args.get("type") == "Key_Shared" and "consumer_name" not in op.args
                    else op for op in trace.ops)
        return self.inner.run(Trace(trace.header, ops))


def defaults_assumed(endpoint: Any) -> Any:
    """A live target whose read of the broker's runtime configuration is refused (as for a token
    without superuser rights): the model then assumes the broker.conf defaults."""
    from conformance.targets.pulsar import BrokerTarget

    class DefaultsAssumed(BrokerTarget):
        def broker_config(self) -> dict[str, Any]:
            return {}

    return DefaultsAssumed(endpoint)


def version_assumed(endpoint: Any, version: str) -> Any:
    """A live target that reports ``version`` instead of its broker's: the model is told that release."""
    from conformance.targets.pulsar import BrokerTarget

    class VersionAssumed(BrokerTarget):
        def broker_version(self) -> str:
            return version

    return VersionAssumed(endpoint)


def _ops_key(trace: Trace) -> tuple:
    return tuple((op.op, json.dumps(op.args, sort_keys=True, default=str)) for op in trace.ops)


@dataclass
class Difference:
    name: str
    area: str
    config: GenConfig
    make: Callable[[], Any]  # a fresh target with the difference
    explains: Callable[[Any, FailureRecord], bool]  # (target, record) -> the difference explains it


def config_name(flip: dict[str, str]) -> str:
    return "config:" + ",".join(f"{k}={v}" for k, v in flip.items())


CONFIG_NAME = config_name(KEY_SHARED_FLIP)


def _explained_by_lie(target: Any, record: FailureRecord) -> bool:
    return target.explains(record)


def _explained_by_key_shared(target: Any, record: FailureRecord) -> bool:
    return record.signature[0].startswith("PLS-KEYSHARED-")


def _explained_by_flip(target: Any, record: FailureRecord) -> bool:
    """On the model: the unflipped model's history of the shrunk trace does not fail so."""
    if record.shrunk is None:
        return False
    truth = check_history(ModelTarget().run(record.shrunk))
    return all((v.rule_id, v.anomaly or "") != tuple(record.signature) for v in truth.verdicts if v.status == FAIL)


def config_differences(make: Callable[[], Any], config: GenConfig) -> list[Difference]:
    """(a) as the fuzzer generates traces, and the what-if with named Key_Shared consumers."""
    return [Difference(CONFIG_NAME, "Key_Shared selector", config, make, _explained_by_key_shared),
            Difference(CONFIG_NAME + " (what-if: named)", "Key_Shared selector", config,
                       lambda: NamesKeySharedConsumers(make()), _explained_by_key_shared)]


def lie_difference(operator: str, inner: Callable[[], Any], config: GenConfig) -> Difference:
    area = next(a for a, ops in AREAS.items() if operator in ops)
    return Difference(f"lie:{operator}", area, config, lambda: LyingTarget(inner(), operator), _explained_by_lie)


def model_differences() -> list[Difference]:
    out = config_differences(lambda: ConfiguredModel(KEY_SHARED_FLIP), MODEL_CONFIG)
    out += [Difference(config_name(flip), "broker.conf the model follows", MODEL_CONFIG,
                       lambda flip=flip: ConfiguredModel(flip), _explained_by_flip) for flip in PROFILE_FLIPS]
    for operators in AREAS.values():
        out += [lie_difference(op, ModelTarget, MODEL_FAULT_CONFIG if op in FAULT_LIES else MODEL_CONFIG)
                for op in operators]
    return out


def focus_of(diff: Difference) -> tuple[str, ...]:
    """The features a focused row of ``diff`` switches on (``AREA_FOCUS``, ``FLIP_FOCUS``)."""
    if diff.area == "broker.conf the model follows":
        return tuple(f for key, feats in FLIP_FOCUS.items() if key in diff.name for f in feats)
    return AREA_FOCUS[diff.area]


def focused_differences(diffs: list[Difference]) -> list[Difference]:
    """(d): each difference with the fuzzer aimed at its area (what ``fuzz --focus`` does)."""
    out = []
    for d in diffs:
        names = focus_of(d)
        out.append(replace(d, name=f"{d.name} [focus: {','.join(names)}]", config=focused(d.config, names)))
    return out


# --------------------------------------------------------------------------- one measurement


@dataclass
class Row:
    difference: str
    target: str
    area: str
    seed: int
    budget: int
    traces: int | None = None  # generated traces up to the first one the difference explains
    seconds: float | None = None  # to that trace
    seconds_shrunk: float | None = None  # until shrunk and confirmed
    original_ops: int | None = None
    shrunk_ops: int | None = None
    rule: str = ""
    status: str = ""  # FAIL | FLAKY | "" (not found)
    judged: int = 0  # generated traces judged in all
    lies: str | None = None  # lie rows: runs that carried a lie / that the operator could mutate / all runs
    meant: bool | None = None  # lie rows: the failing rule is one the lie was meant to break
    other: list[str] = field(default_factory=list)  # failures the difference does not explain
    program: str = ""

    @property
    def met(self) -> bool:
        return self.traces is not None and self.traces <= self.budget and (self.shrunk_ops or 99) <= MAX_SHRUNK_OPS


def measure(diff: Difference, target: Any, *, budget: int, seed: int, out_dir: Path, live: bool) -> Row:
    """Run the fuzzer's search on ``target`` until it reports a failure ``diff`` explains."""
    row = Row(diff.name, getattr(target, "name", "target"), diff.area, seed, budget)
    first_seen: dict[str, tuple[int, float]] = {}
    t0 = time.monotonic()

    def on_tick(summary: Any) -> None:
        for key in summary.signatures:
            first_seen.setdefault(key, (summary.examples, time.monotonic() - t0))

    def stop_when(record: FailureRecord) -> bool:
        if not diff.explains(target, record):
            row.other.append(f"{record.signature[0]} {record.signature[1]}".strip())
            return False
        row.traces, row.seconds = first_seen.get(" ".join(record.signature), (None, None))
        row.seconds_shrunk = time.monotonic() - t0
        row.original_ops, row.shrunk_ops, row.status = record.original_ops, record.shrunk_ops, record.status
        row.rule = " ".join(record.signature).strip()
        row.program = record.program
        if isinstance(target, LyingTarget):
            row.meant = target.meant(record)
        return True

    run_dir = out_dir / re.sub(r"[^A-Za-z0-9_.-]+", "-", diff.name).strip("-") / f"seed{seed}"
    # the fuzz command's limits for the target kind (pulsar_conformance/cli.py, fuzz.driver.fuzz)
    limits = dict(reruns=3, max_shrinks=60) if live else dict(reruns=1, max_shrinks=600)
    summary = fuzz_hypothesis(target, examples=budget, seed=seed, out_dir=run_dir, run_id=f"ttd-{seed}",
                              config=diff.config, progress=False, on_tick=on_tick, stop_when=stop_when, **limits)
    row.judged = summary.examples
    if isinstance(target, LyingTarget):
        row.lies = f"{target.lies}/{target.chances}/{target.runs}"
    return row


# --------------------------------------------------------------------------- printing


def _fmt(value: Any, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def table(rows: list[Row]) -> str:
    head = ("difference", "target", "traces", "s to find", "s to shrunk", "ops", "rule (anomaly)", "status",
            "lies/chances/runs", "met")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ops = f"{r.original_ops} -> {r.shrunk_ops}" if r.shrunk_ops is not None else "-"
        traces = _fmt(r.traces) if r.traces is not None else f"not in {r.judged}"
        rule = (r.rule + (" (elsewhere)" if r.meant is False else "")) if r.rule else \
            (("other: " + ", ".join(sorted(set(r.other)))) if r.other else "-")
        lines.append(f"| {r.difference} | {r.target} | {traces} | {_fmt(r.seconds, '.1f')} | "
                     f"{_fmt(r.seconds_shrunk, '.1f')} | {ops} | {rule} | {r.status or '-'} | {r.lies or '-'} | "
                     f"{'yes' if r.met else 'no'} |")
    return "\n".join(lines)


def medians(rows: list[Row]) -> str:
    """Per difference over its seeds: how many found, median and worst traces to detection and ops."""
    by: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        by.setdefault((r.difference, r.target), []).append(r)
    lines = ["| difference | target | found | traces median / worst | shrunk ops median / worst |",
             "|---|---|---|---|---|"]
    for (name, target), rs in by.items():
        found = [r for r in rs if r.traces is not None]
        t = [r.traces for r in found]
        o = [r.shrunk_ops for r in found if r.shrunk_ops is not None]
        lines.append(f"| {name} | {target} | {len(found)}/{len(rs)} | "
                     f"{statistics.median(t) if t else '-'} / {max(t) if t else '-'} | "
                     f"{statistics.median(o) if o else '-'} / {max(o) if o else '-'} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the runs


def _selected(args: argparse.Namespace, diff: Difference) -> bool:
    return not args.only or any(o in diff.name for o in args.only)


def run_all(args: argparse.Namespace, diffs: list[Difference], out: Path, live: bool) -> list[Row]:
    rows = []
    for diff in diffs:
        for k in range(args.repeats if _selected(args, diff) else 0):
            row = measure(diff, diff.make(), budget=args.budget, seed=args.seed + k, out_dir=out, live=live)
            rows.append(row)
            print(table([row]).splitlines()[-1], flush=True)
    return rows


def run_live(args: argparse.Namespace, out: Path) -> list[Row]:
    """One broker at a time: the stock embedded broker for the lies, then one with the key flipped
    (then, with ``--version-matrix``, a 3.3.6 broker)."""
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.endpoint import parse_target
    from fixtures.provider import broker_for

    rows: list[Row] = []
    spec = parse_target("embedded")
    say = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    lies = [d for op in LIVE_LIES if _selected(args, d := lie_difference(op, lambda: None, LIVE_CONFIG))]
    if lies:
        with broker_for(spec, progress=say) as endpoint:
            lies = [lie_difference(d.name[4:], lambda: BrokerTarget(endpoint), LIVE_CONFIG) for d in lies]
            rows += run_all(args, lies, out / "live", live=True)
    configs = [d for d in config_differences(lambda: None, LIVE_CONFIG) if _selected(args, d)]
    if configs:
        with broker_for(spec, overrides=KEY_SHARED_FLIP, progress=say) as endpoint:
            configs = [d for d in config_differences(lambda: defaults_assumed(endpoint), LIVE_CONFIG)
                       if _selected(args, d)]
            rows += run_all(args, configs, out / "live", live=True)
    if args.version_matrix:
        with broker_for(spec, version="3.3.6", progress=say) as endpoint:
            name = "version:3.3.6-as-4.0.8"
            versions = [Difference(name, "Key_Shared selectors by release", LIVE_CONFIG,
                                   lambda: version_assumed(endpoint, "4.0.8"), _explained_by_key_shared),
                        Difference(name + " (what-if: named)", "Key_Shared selectors by release", LIVE_CONFIG,
                                   lambda: NamesKeySharedConsumers(version_assumed(endpoint, "4.0.8")),
                                   _explained_by_key_shared)]
            rows += run_all(args, versions, out / "live", live=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--model-only", dest="live", action="store_false", help="the model target only (default)")
    where.add_argument("--live", dest="live", action="store_true",
                       help="also the live embedded broker: the config flip and the lies in LIVE_LIES")
    parser.set_defaults(live=False)
    parser.add_argument("--budget", type=int, default=200, help="generated traces per difference (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1, help="seeds per difference: seed, seed+1, ...")
    parser.add_argument("--only", action="append", default=[], help="differences whose name contains this (repeatable)")
    parser.add_argument("--skip-model", action="store_true", help="with --live: the live rows only")
    parser.add_argument("--version-matrix", action="store_true",
                        help="with --live: a 3.3.6 broker judged as 4.0.8 (needs the 3.3.6 distribution)")
    parser.add_argument("--focused", action="store_true",
                        help="also each model difference with the fuzzer aimed at its area (fuzz --focus; AREA_FOCUS)")
    parser.add_argument("--out", type=Path, default=None, help="every file goes here (default: a new temporary folder)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="pc-ttd-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"time to detection: budget {args.budget} generated traces per difference, seed {args.seed}, "
          f"repeats {args.repeats}; target: found and shrunk to <= {MAX_SHRUNK_OPS} ops; out {out}", flush=True)
    t0 = time.monotonic()
    rows: list[Row] = []
    if not (args.live and args.skip_model):
        diffs = model_differences()
        rows += run_all(args, diffs, out / "model", live=False)
        if args.focused:
            rows += run_all(args, focused_differences(diffs), out / "model-focused", live=False)
    if args.live:
        rows += run_live(args, out)
    print("\n" + table(rows))
    if args.repeats > 1:
        print("\n" + medians(rows))
    met = sum(r.met for r in rows)
    print(f"\n{met} of {len(rows)} rows met the target (found within {args.budget} traces, shrunk to <= "
          f"{MAX_SHRUNK_OPS} ops); {time.monotonic() - t0:.0f} s in all")
    (out / "results.json").write_text(json.dumps([r.__dict__ | {"met": r.met} for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
