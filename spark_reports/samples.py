"""A small hand-written outcome corpus with rows for every client the main job drives: ``python``,
``java`` and ``mixed`` (cross-client traces: a producer in one client, consumers in the other).

``spark_reports.generate`` makes large corpora from the reference model, per client *kind*
(``cpp``, ``java``); this one is for the client dimension of the reports and their tests, where
every verdict is known by construction:

- python (broker 4.0.8): batch index ack and the dead letter topic PASS (the client feature matrix
  says C++/Python have neither: two disagreements), individual acks PASS;
- java: individual acks and the Java nack backoff PASS; seek by publish time FAILs
  (``lost-message``) at step 16 of ``seek-publish-time``;
- mixed: ``cross-message-fields`` PASSes; ``cross-cumulative-ack-shared`` FAILs PLS-ACK-003 at
  step 7 (``wrong-value``: the Python consumer's cumulative ack on Shared was accepted).

Each broker trace has the model's rows beside it (target ``model``, line ``4.0``, client kind
``cpp``/``java``/``mixed``, as ``ModelTarget`` records them), equal to the broker's except at the
failing steps. Written with ``conformance.corpus.CorpusWriter`` (schema version 2).

Not modelled: timing (every step at t = 10 ms x step), message ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.corpus import CorpusWriter, observation_key

BROKER_VERSION = "4.0.8"
MODEL_LINE = "4.0"
RUN_ID = "sample-r1"
CLIENT_VERSIONS = {"python": "3.13.0", "java": "4.0.8", "mixed": "3.13.0+4.0.8"}
MODEL_KIND = {"python": "cpp", "java": "java", "mixed": "mixed"}


def _ok(value: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"status": "ok", "value": value or {}}


def _msg(payload: str | None, count: int = 0, **fields: Any) -> dict[str, Any]:
    if payload is None:
        return _ok({"message": None})
    return _ok({"message": {"payload": payload, "redelivery_count": count, "properties": {}, **fields}})


def _rejected(error: str) -> dict[str, Any]:
    return {"status": "rejected", "error": error}


# (op, rules judged, failed rules, anomaly, broker observation, model observation or None = same)
Step = tuple[str, tuple[str, ...], tuple[str, ...], str | None, dict[str, Any], dict[str, Any] | None]

TRACES: dict[tuple[str, str], list[Step]] = {
    ("python", "batch-nack-index-ack"): [
        ("subscribe", (), (), None, _ok(), None),
        ("create_producer", (), (), None, _ok(), None),
        ("send", (), (), None, _ok(), None),
        ("receive", ("PLS-BATCH-001",), (), None, _msg("m1"), None),
        ("nack", (), (), None, _ok(), None),
        ("receive", ("PLS-BATCH-005", "PLS-BATCH-006"), (), None, _msg("m1", 1), None),
    ],
    ("python", "dlq-default-name"): [
        ("subscribe", ("PLS-DLQ-001",), (), None, _ok(), None),
        ("stats", ("PLS-DLQ-001",), (), None, _ok({"backlog": 0}), None),
    ],
    ("python", "ack-individual"): [
        ("subscribe", (), (), None, _ok(), None),
        ("receive", (), (), None, _msg("m1"), None),
        ("ack", ("PLS-ACK-001",), (), None, _ok(), None),
        ("receive", ("PLS-ACK-001",), (), None, _msg(None), None),
    ],
    ("java", "ack-individual"): [
        ("subscribe", (), (), None, _ok(), None),
        ("receive", (), (), None, _msg("m1"), None),
        ("ack", ("PLS-ACK-001",), (), None, _ok(), None),
        ("receive", ("PLS-ACK-001",), (), None, _msg(None), None),
    ],
    ("java", "nack-backoff-java"): [
        ("subscribe", (), (), None, _ok(), None),
        ("receive", (), (), None, _msg("m1"), None),
        ("nack", (), (), None, _ok(), None),
        ("receive", ("PLS-NACK-004", "PLS-ACK-005"), (), None, _msg("m1", 1), None),
    ],
    ("java", "seek-publish-time"): [
        *[(op, (), (), None, _ok(), None) for op in ("subscribe", "create_producer", "send", "advance_time", "send",
                                                      "advance_time", "send", "advance_time", "send")],
        *[("receive", (), (), None, _msg(m), None) for m in ("m1", "m2", "m3", "m4")],
        ("ack_cumulative", (), (), None, _ok(), None),
        ("seek", (), (), None, _ok(), None),
        ("receive", ("PLS-SEEK-002",), ("PLS-SEEK-002",), "lost-message", _msg("m4"), _msg("m3")),
        ("receive", ("PLS-SEEK-002",), (), None, _msg(None), _msg("m4")),
        ("receive", ("PLS-SEEK-002",), (), None, _msg(None), None),
    ],
    ("mixed", "cross-cumulative-ack-shared"): [
        ("subscribe", (), (), None, _ok(), None),
        ("subscribe", (), (), None, _ok(), None),
        ("create_producer", (), (), None, _ok(), None),
        ("send", (), (), None, _ok(), None),
        ("receive", (), (), None, _msg("m1"), None),
        ("receive", (), (), None, _msg("m1"), None),
        ("ack_cumulative", ("PLS-ACK-003",), ("PLS-ACK-003",), "wrong-value", _ok(),
         _rejected("CumulativeAcknowledgementNotAllowedError")),
        ("ack_cumulative", (), (), None, _rejected("InvalidConfiguration"), None),
        ("advance_time", (), (), None, _ok(), None),
        ("stats", ("PLS-BACKLOG-001",), (), None, _ok({"backlog": 1}), None),
        ("stats", ("PLS-BACKLOG-001",), (), None, _ok({"backlog": 1}), None),
    ],
    ("mixed", "cross-message-fields"): [
        ("subscribe", (), (), None, _ok(), None),
        ("subscribe", (), (), None, _ok(), None),
        ("create_producer", (), (), None, _ok(), None),
        ("create_producer", (), (), None, _ok(), None),
        ("send", (), (), None, _ok(), None),
        ("send", (), (), None, _ok(), None),
        ("receive", ("PLS-MSG-001",), (), None, _msg("from-java", key="k1"), None),
        ("receive", ("PLS-MSG-001",), (), None, _msg("from-python", key="k2"), None),
    ],
}

# Every (client, rule) the broker rows judge, by construction: what a report over this corpus finds.
EXPECTED = {
    "clients": ("python", "java", "mixed"),
    "fail": {("java", "PLS-SEEK-002"), ("mixed", "PLS-ACK-003")},
    "pass": {("python", "PLS-BATCH-001"), ("python", "PLS-BATCH-005"), ("python", "PLS-BATCH-006"), ("python", "PLS-DLQ-001"),
             ("python", "PLS-ACK-001"), ("java", "PLS-ACK-001"), ("java", "PLS-ACK-005"), ("java", "PLS-NACK-004"),
             ("mixed", "PLS-MSG-001"), ("mixed", "PLS-BACKLOG-001")},
}


def _row(target: str, version: str, client: str, client_version: str, trace_id: str, step: int, s: Step, *, model: bool) -> dict[str, Any]:
    op, rules, failed, anomaly, observed, predicted = s
    obs = (predicted or observed) if model else observed
    failed = () if model else failed
    return {
        "run_id": RUN_ID, "trace_id": trace_id, "step": step, "op": op, "target": target,
        "broker_version": version, "client": client, "client_version": client_version, "profile": "{}",
        "rule_ids": sorted(rules), "anomalies": [anomaly] if anomaly and failed else [],
        "failed_rule_ids": sorted(failed), "indeterminate_rule_ids": [],
        "verdict": "FAIL" if failed else "PASS", "outcome_status": obs["status"],
        "observation": json.dumps(obs, sort_keys=True), "observation_key": observation_key(obs),
        "explanation": (f"Let {op} at step {step} be judged by {', '.join(failed)}. Then the broker's "
                        f"{json.dumps(observed, sort_keys=True)} is not allowed.") if failed else None,
        "t_start_ms": 10.0 * (step - 1), "t_end_ms": 10.0 * step,
    }


def write_sample_corpus(out_dir: Path, *, clients: tuple[str, ...] = ("python", "java", "mixed")) -> Path:
    """Write the sample corpus (the traces of ``clients``, each with its model rows) into ``out_dir``."""
    out_dir = Path(out_dir)
    rows: list[dict[str, Any]] = []
    for (client, trace_id), steps in TRACES.items():
        if client not in clients:
            continue
        for i, s in enumerate(steps, start=1):
            rows.append(_row("embedded", BROKER_VERSION, client, CLIENT_VERSIONS[client], trace_id, i, s, model=False))
            rows.append(_row("model", MODEL_LINE, MODEL_KIND[client], "reference-model", trace_id, i, s, model=True))
    with CorpusWriter(out_dir, run_id=RUN_ID) as writer:
        writer.add_rows(rows)
    return out_dir


def sample_summaries() -> list[dict[str, Any]]:
    """``summary-<client>.json`` documents agreeing with the corpus (every other rule of the registry
    NOT_EXERCISED where it applies to the client, NOT_APPLICABLE elsewhere)."""
    from reference_model.rules import CLIENTS, active_rules, applies

    out = []
    for client in EXPECTED["clients"]:
        rules = {}
        for r in active_rules():
            ok = any(applies(r, broker_version=BROKER_VERSION, client=c) for c in CLIENTS) if client == "mixed" \
                else applies(r, broker_version=BROKER_VERSION, client=client)
            rules[r.id] = "NOT_EXERCISED" if ok else "NOT_APPLICABLE"
        for c, rid in EXPECTED["pass"]:
            if c == client:
                rules[rid] = "PASS"
        for c, rid in EXPECTED["fail"]:
            if c == client:
                rules[rid] = "FAIL"
        out.append({"target": "embedded", "broker_version": BROKER_VERSION, "client": client,
                    "client_version": CLIENT_VERSIONS[client], "rules": rules, "counts": {}, "cases": {}})
    return out
