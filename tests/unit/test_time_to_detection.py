"""The differences ``benchmarks/time_to_detection.py`` injects do change the checker's verdict.

Hand-built traces, on the model only (no timing is asserted; the benchmark prints the figures):
the Key_Shared config flip fails the checker when the consumer is named and cannot when it is not,
and a lying target tells its operator's lie, knows which rules it breaks, and tells none where the
trace gives it no chance.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from conformance.checker import check
from conformance.fuzz import FailureRecord, signature
from conformance.targets.model import ModelTarget
from conformance.trace import Op, Trace, TraceHeader

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("time_to_detection", ROOT / "benchmarks" / "time_to_detection.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _trace(*ops: tuple[str, dict]) -> Trace:
    return Trace(TraceHeader("ttd-test"), tuple(Op(i, name, args) for i, (name, args) in enumerate(ops, start=1)))


def _record(sig: tuple[str, str], shrunk: Trace) -> FailureRecord:
    return FailureRecord(sig, "FAIL", "model", "fz-x", len(shrunk.ops), len(shrunk.ops), 1, 1, "", "", "hypothesis",
                         shrunk=shrunk)


def test_key_shared_config_flip_fails_only_where_the_owner_is_known():
    bench = _bench()
    sub = {"consumer": "c1", "topic": "t", "subscription": "s1", "type": "Key_Shared"}
    unnamed = _trace(("subscribe", sub), ("stats", {"topic": "t", "subscription": "s1"}))
    flipped = bench.ConfiguredModel(bench.KEY_SHARED_FLIP)
    assert signature(check(ModelTarget().run(unnamed))) is None
    # the ring places keys by consumer name: with the client's random name the checker allows any range
    assert signature(check(flipped.run(unnamed))) is None
    history = bench.NamesKeySharedConsumers(flipped).run(unnamed)
    assert history.events[0].op.args["consumer_name"] == "c1"
    assert history.header.profile == {}  # judged as if the broker had the defaults
    assert signature(check(history))[0] == "PLS-KEYSHARED-003"
    assert signature(check(bench.NamesKeySharedConsumers(ModelTarget()).run(unnamed))) is None


def test_lying_target_tells_its_lie_and_knows_what_it_breaks():
    bench = _bench()
    trace = _trace(("create_producer", {"producer": "p1", "topic": "t"}),
                   ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s1", "type": "Exclusive"}),
                   ("send", {"producer": "p1", "payload": "m1"}),
                   ("receive", {"consumer": "c1", "timeout_ms": 1000}))
    assert signature(check(ModelTarget().run(trace))) is None
    lying = bench.LyingTarget(ModelTarget(), "drop_delivery")
    sig = signature(check(lying.run(trace)))
    assert sig is not None and (lying.lies, lying.runs) == (1, 1)
    assert lying.explains(_record(sig, trace)) and lying.meant(_record(sig, trace))
    elsewhere = _record(("PLS-NOT-A-RULE", ""), trace)
    assert lying.explains(elsewhere) and not lying.meant(elsewhere)
    quiet = trace.ops[:2]
    no_chance = Trace(trace.header, quiet)
    assert lying.run(no_chance).events == ModelTarget().run(no_chance).events and lying.lies == 1
    assert not lying.explains(_record(sig, no_chance))
