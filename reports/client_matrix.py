"""The client x feature matrix: the rows of Pulsar's own client feature matrix, what it claims for
each client, and what our verdicts say about each client (python, java, go, mixed).

Part of Pulsar: the client libraries. The rows, and the claims, are the official client feature
matrix (https://pulsar.apache.org/client-feature-matrix/), whose data is ``data/matrix.js`` in
apache/pulsar-site (read at commit ``17ba131fdf21e5a1fad2da8df046585e972d4b81``; rendered by
``client-libraries/feature-matrix.mdx``, whose legend reads 2 = "Full Support", 1 = "Partial
Support", 0 = "Not Supported"). Row names are copied verbatim: section (Client, Producer,
Consumer, Reader, TableView), feature, and sub-feature where the matrix has one. Each row maps to
the rule ids (or whole rule areas) of ``reference_model.rules`` that exercise it; a row no rule
exercises says so ("not covered by any rule") and never gets a verdict.

Per row and client, from the ``summary.json`` documents of a run (one per client; several per
client when several broker versions ran):

- the folded verdict of the row's rules over every summary of that client: the worst of
  FAIL > INDETERMINATE > PASS; else NOT_APPLICABLE when every rule is NOT_APPLICABLE there; else
  NOT_EXERCISED (``conformance.runner.fold_rules``'s rule, one level up);
- the matrix's own claim for the client: the Python column for ``python`` (the C++ column is
  recorded beside it: the Python client wraps C++), the Java column for ``java``, the Go column for ``go``; ``unknown``
  for ``mixed`` (the matrix has no cross-client column);
- the known deviations (``known_deviations`` of the summaries) when every FAIL behind a FAIL cell
  is one they excused: such a cell is drawn violet, as the report's banner draws them, not as a
  failure;
- a disagreement where the claim and the verdicts part ways: the matrix claims support but every
  rule behind the row is NOT_APPLICABLE to that client (the registry says the client lacks it, or
  no rule describes that client's behaviour), or it claims no support but a rule PASSed with that
  client (the client did it).

Choices: "unsupported" (NOT_APPLICABLE) is never shown as a failure, and a row without rules is
never a disagreement. Rules behind no row (most broker-side semantics: routing, dedup, TTL, ...)
are listed as such. Bad input raises ``ValueError`` naming the summary and the field.

Not modelled: the matrix's other columns (Node.js, C#, .NET, WebSocket, REST), and "partial"
support beyond calling it supported (the pulsar-site data read here has no partial cell).
"""

from __future__ import annotations

from fixtures.secrets import redact

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from conformance.verdicts import FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, worst_judged
from reports.marks import MARKS, esc

VERDICTS = (PASS, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED)

CLIENT_ORDER = ("python", "java", "go", "mixed")
SUPPORTED, NOT_SUPPORTED, UNKNOWN = "supported", "not supported", "unknown"

SOURCE = {
    "page": "https://pulsar.apache.org/client-feature-matrix/",
    "repository": "apache/pulsar-site",
    "path": "data/matrix.js",
    "commit": "17ba131fdf21e5a1fad2da8df046585e972d4b81",
    "rendered_by": "client-libraries/feature-matrix.mdx (earlier client-feature-matrix/index.mdx)",
    "legend": {"2": "Full Support", "1": "Partial Support", "0": "Not Supported"},
}

NOT_COVERED = "not covered by any rule"

# Disagreement kinds
CLAIMS_SUPPORT_NO_RULE_APPLIES = "claims-supported-but-not-applicable"
CLAIMS_NO_SUPPORT_BUT_PASSED = "claims-unsupported-but-passed"


# --------------------------------------------------------------------------- the feature matrix rows


@dataclass(frozen=True)
class FeatureRow:
    """One row of Pulsar's client feature matrix, with the matrix's values for Java, C++ and
    Python (2 full, 1 partial, 0 none, as in ``data/matrix.js``), and the rules that exercise it."""

    section: str
    feature: str
    sub: str | None
    java: int
    cpp: int
    python: int
    go: int = 0  # the Go column (``_GO_COLUMN``)
    rules: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    note: str = ""

    @property
    def name(self) -> str:
        return " \u203a ".join(p for p in (self.section, self.feature, self.sub) if p)

    @property
    def covered(self) -> bool:
        return bool(self.rules or self.areas)

    def rule_ids(self) -> tuple[str, ...]:
        """The rules behind this row: ``rules`` plus every active rule of ``areas``, in registry order."""
        from reference_model.rules import active_rules

        wanted = set(self.rules)
        return tuple(r.id for r in active_rules() if r.id in wanted or r.area in self.areas)

    def claim(self, client: str) -> str:
        """The matrix's claim for one of our clients: supported / not supported / unknown."""
        value = {"java": self.java, "python": self.python, "go": self.go}.get(client)
        if value is None:
            return UNKNOWN
        return SUPPORTED if value >= 1 else NOT_SUPPORTED

    def claim_source(self, client: str) -> str:
        if client == "java":
            return f"Java column: {_mark(self.java)}"
        if client == "python":
            return f"Python column: {_mark(self.python)} (C++ column: {_mark(self.cpp)})"
        if client == "go":
            return f"Go column: {_mark(self.go)}"
        return "the matrix has no cross-client column"


def _mark(value: int) -> str:
    return {2: "2, full support", 1: "1, partial support", 0: "0, not supported"}.get(value, str(value))


# The rules behind sub-feature rows (the groups below are built from values alone).
_SUB_RULES: dict[tuple[str, str, str], dict[str, Any]] = {
    ("Consumer", "ACK", "Batch-Index ACK"): {"rules": ("PLS-BATCH-005",)},
    ("Consumer", "ACK", "ACK Timeout"): {"areas": ("ACKTIMEOUT",)},
    ("Consumer", "ACK", "NACK"): {"rules": ("PLS-NACK-001", "PLS-NACK-002", "PLS-NACK-003", "PLS-NACK-006", "PLS-BATCH-006")},
    ("Consumer", "ACK", "NACK Backoff"): {"rules": ("PLS-NACK-004", "PLS-NACK-007")},
    ("Consumer", "Seek", "by timestamp"): {"rules": ("PLS-SEEK-002",)},
    ("Consumer", "Seek", "by messageID"): {"rules": ("PLS-SEEK-001", "PLS-SEEK-003"),
                                           "note": "Seek to a message id, and to earliest/latest (MessageId.earliest/latest)."},
    ("Consumer", "Seek", "Inclusive/Non-inclusive"): {"rules": ("PLS-SEEK-001",),
                                                      "note": "start_message_id_inclusive on a seek by message id."},
    ("Reader", "Seek", "Inclusive/Non-inclusive"): {"rules": ("PLS-READER-003", "PLS-READER-004"),
                                                    "note": "A reader's startMessageIdInclusive; no rule seeks a reader after creation."},
    # schemas (PLS-SCHEMA-*): what a producer's or consumer's schema meets in the registry; the payloads stay the
    # harness's label bytes, so these rows speak to registration, compatibility and versions, not to encoding
    ("Producer", "Schema", "Primitive"): {"rules": ("PLS-SCHEMA-009", "PLS-SCHEMA-016", "PLS-SCHEMA-023"),
                                          "note": "STRING, INT32, INT64, DOUBLE (the C++ client sends no INT32/INT64 schema)."},
    ("Producer", "Schema", "Avro"): {"rules": ("PLS-SCHEMA-001", "PLS-SCHEMA-002", "PLS-SCHEMA-003", "PLS-SCHEMA-004",
                                               "PLS-SCHEMA-005", "PLS-SCHEMA-006", "PLS-SCHEMA-007", "PLS-SCHEMA-015",
                                               "PLS-SCHEMA-021", "PLS-SCHEMA-022", "PLS-SCHEMA-023"),
                                     "note": "Versions, the eight strategies, auto-update, deletes, invalid definitions."},
    ("Producer", "Schema", "JSON"): {"rules": ("PLS-SCHEMA-008",),
                                     "note": "A JSON schema after an AVRO one (type change); JSON evolution is generated."},
    ("Producer", "Schema", "KeyValue"): {"rules": ("PLS-SCHEMA-010",)},
    ("Consumer", "Schema", "Primitive"): {"rules": ("PLS-SCHEMA-017",), "note": "A consumer without a schema (BYTES)."},
    ("Consumer", "Schema", "Avro"): {"rules": ("PLS-SCHEMA-018", "PLS-SCHEMA-019", "PLS-SCHEMA-020")},
    # Autoschema stays uncovered: PLS-SCHEMA-017 also speaks for consumers without a schema, so its PASS on Python
    # would read as AUTO_CONSUME support (the schema-key-value case exercises AUTO_CONSUME on Java)
}


# The Go column of data/matrix.js (same commit), row by row: 0 where it says "Not Supported", else 2.
_GO_UNSUPPORTED = {
    ("Client", "Authentication", "Kerberos"), ("Client", "Cluster-level failover", ""), ("Client", "Statistics", ""),
    ("Consumer", "ACK", "Batch-Index ACK"), ("Consumer", "ACK", "ACK Timeout"),
    *((section, "Schema", sub) for section in ("Producer", "Consumer", "Reader", "TableView")
      for sub in ("Native avro", "KeyValue", "Autoschema")),
    *((section, "Schema", "Protobuf-native") for section in ("Consumer", "TableView")),
}


def _row(section: str, feature: str, sub: str | None, java: int, cpp: int, python: int, *,
         rules: Sequence[str] = (), areas: Sequence[str] = (), note: str = "") -> FeatureRow:
    extra = _SUB_RULES.get((section, feature, sub or ""), {})
    go = 0 if (section, feature, sub or "") in _GO_UNSUPPORTED else 2
    return FeatureRow(section, feature, sub, java, cpp, python, go, tuple(rules or extra.get("rules", ())),
                      tuple(areas or extra.get("areas", ())), note or extra.get("note", ""))


_SCHEMA = ("Primitive", "Avro", "JSON", "Protobuf", "Protobuf-native", "Native avro", "KeyValue", "Autoschema")
_COMPRESSION = ("LZ4", "ZLIB", "ZSTD", "SNAPPY")


def _group(section: str, feature: str, subs: Sequence[str], values: Sequence[tuple[int, int, int]]) -> list[FeatureRow]:
    return [_row(section, feature, sub, *v) for sub, v in zip(subs, values, strict=True)]


_ALL2 = (2, 2, 2)

# PLS-TXN-006 (the Python client refuses to begin a transaction) is a rule about the absence of the
# feature: kept out of the rows, so that its PASS is not read as the Python client doing it.
_TXN_PRODUCE = ("PLS-TXN-001", "PLS-TXN-002", "PLS-TXN-003", "PLS-TXN-004", "PLS-TXN-005")
_TXN_ACK = ("PLS-TXN-004", "PLS-TXN-007", "PLS-TXN-008", "PLS-TXN-009", "PLS-TXN-010", "PLS-TXN-011")
_TXN_RULES = tuple(dict.fromkeys(_TXN_PRODUCE + _TXN_ACK))
_TXN_NOTE = "PLS-TXN-006 records that the Python client cannot begin a transaction (kept out of the rows)."

# (Java, C++, Python) as data/matrix.js gives them, row for row, in the page's order (Go: ``_GO_UNSUPPORTED``).
FEATURE_ROWS: tuple[FeatureRow, ...] = (
    # ---- Client
    _row("Client", "TLS encryption", None, 2, 2, 2),
    *_group("Client", "Authentication", ("JWT", "mTLS", "Kerberos", "OAuth2", "Athenz", "HTTP Basic"),
            (_ALL2, _ALL2, (2, 0, 0), _ALL2, (2, 0, 0), _ALL2)),
    _row("Client", "Transaction", None, 2, 0, 0, rules=_TXN_RULES, note="Begin, commit, abort, time out. " + _TXN_NOTE),
    _row("Client", "Cluster-level failover", None, 2, 0, 0),
    _row("Client", "Multi-host service", None, 2, 2, 2),
    _row("Client", "Statistics", None, 2, 0, 0),
    _row("Client", "Proxy", None, 2, 2, 2),
    _row("Client", "Reconnection", None, 2, 2, 2,
         note="PLS-SUB-005 covers a consumer that closes and subscribes again, not the client's automatic reconnection."),
    # ---- Producer
    _row("Producer", "Batching", None, 2, 2, 2, rules=("PLS-BATCH-001", "PLS-BATCH-002", "PLS-BATCH-003", "PLS-BATCH-007"),
         note="Batch ids, the C++ batch container, key-based batching, Python's batching default."),
    _row("Producer", "Chunking", None, 2, 2, 2,
         rules=("PLS-CHUNK-001", "PLS-CHUNK-002", "PLS-CHUNK-003", "PLS-CHUNK-004", "PLS-CHUNK-006", "PLS-CHUNK-007",
                "PLS-CHUNK-008")),
    _row("Producer", "Delayed message delivery", None, 2, 2, 2, areas=("DELAY",), rules=("PLS-NP-004",)),
    *_group("Producer", "Compression", _COMPRESSION, (_ALL2,) * 4),
    *_group("Producer", "Schema", _SCHEMA,
            (_ALL2, _ALL2, _ALL2, (2, 2, 0), (2, 2, 0), (2, 0, 0), (2, 2, 0), (2, 0, 0))),
    _row("Producer", "Transaction", None, 2, 0, 0, rules=_TXN_PRODUCE,
         note="Messages produced in a transaction: visibility, order, abort, timeout. " + _TXN_NOTE),
    _row("Producer", "End-to-end encryption", None, 2, 2, 2),
    _row("Producer", "Sync | Async Send", None, 2, 2, 2, areas=("PROD",), rules=("PLS-MSG-001",),
         note="Sequence ids, publish order and message fields through send; the traces send synchronously."),
    # ---- Consumer
    *_group("Consumer", "ACK", ("Batch-Index ACK", "ACK Timeout", "NACK", "NACK Backoff"),
            ((2, 0, 0), _ALL2, _ALL2, (2, 0, 0))),
    _row("Consumer", "Batching", None, 2, 2, 2, rules=("PLS-BATCH-001", "PLS-BATCH-004"),
         note="Batched messages received with their batch index; a partly acked batch redelivered whole."),
    _row("Consumer", "Chunking", None, 2, 2, 2, rules=("PLS-CHUNK-001", "PLS-CHUNK-005")),
    *_group("Consumer", "Seek", ("by timestamp", "by messageID", "Inclusive/Non-inclusive"), (_ALL2,) * 3),
    _row("Consumer", "Subscription type", None, 2, 2, 2, areas=("EXCL", "SUBTYPE", "FAILOVER", "SHARED", "KEYSHARED")),
    _row("Consumer", "Subscription mode", None, 2, 0, 0,
         note="Durable is every client's default (PLS-SUB-001); no rule selects NonDurable."),
    _row("Consumer", "Retry letter topic", None, 2, 0, 0, areas=("RETRY",)),
    _row("Consumer", "Dead letter topic", None, 2, 0, 0, areas=("DLQ",),
         note="The C++ client (and so Python) has a dead letter policy since pulsar-client-cpp PR #139 (2023)."),
    *_group("Consumer", "Compression", _COMPRESSION, (_ALL2,) * 4),
    _row("Consumer", "Compaction", None, 2, 2, 2, rules=("PLS-COMPACT-005",),
         note="read_compacted on consumers: accepted on Exclusive/Failover, refused on Shared/Key_Shared."),
    *_group("Consumer", "Schema", _SCHEMA,
            (_ALL2, _ALL2, _ALL2, (2, 2, 0), (0, 0, 0), (0, 0, 0), (2, 2, 0), (2, 0, 0))),
    _row("Consumer", "End-to-end encryption", None, 2, 2, 2),
    _row("Consumer", "Transaction", None, 2, 0, 0, rules=_TXN_ACK,
         note="Acks in a transaction: pending, committed, aborted, conflicts. " + _TXN_NOTE),
    # ---- Reader
    _row("Reader", "Batching", None, 2, 2, 2),
    _row("Reader", "Chunking", None, 2, 0, 0),
    *_group("Reader", "Seek", ("by timestamp", "by messageID", "Inclusive/Non-inclusive"), ((2, 2, 0), _ALL2, (2, 0, 0))),
    *_group("Reader", "Compression", _COMPRESSION, (_ALL2,) * 4),
    _row("Reader", "Compaction", None, 2, 2, 2,
         rules=("PLS-COMPACT-001", "PLS-COMPACT-003", "PLS-COMPACT-004", "PLS-COMPACT-006")),
    *_group("Reader", "Schema", _SCHEMA,
            (_ALL2, _ALL2, _ALL2, (2, 0, 0), (2, 0, 0), (2, 0, 0), (2, 2, 0), (2, 0, 0))),
    _row("Reader", "End-to-end encryption", None, 2, 2, 2),
    # ---- TableView
    _row("TableView", "Compaction", None, 2, 2, 0),
    *_group("TableView", "Schema", _SCHEMA,
            ((2, 2, 0), (2, 2, 0), (2, 2, 0), (2, 2, 0), (0, 0, 0), (0, 0, 0), (2, 2, 0), (2, 2, 0))),
    _row("TableView", "Listener", None, 2, 2, 0),
)



def rules_behind_no_row() -> tuple[str, ...]:
    """Active rules no feature-matrix row maps to (broker-side semantics, mostly)."""
    from reference_model.rules import active_rules

    mapped = {rid for row in FEATURE_ROWS for rid in row.rule_ids()}
    return tuple(r.id for r in active_rules() if r.id not in mapped)


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Cell:
    """One row x client: the folded verdict, the rules behind it (each folded over the client's
    summaries), the matrix's claim, and the disagreement, if any."""

    client: str
    verdict: str | None  # None: the row is not covered by any rule
    rules: tuple[tuple[str, str], ...]  # (rule id, verdict)
    claim: str
    claim_source: str
    disagreement: str | None = None  # one of the disagreement kinds
    explanation: str = ""
    deviations: tuple[str, ...] = ()  # a FAIL whose every failing rule is an excused known deviation: their ids

    @property
    def known_deviation(self) -> bool:
        """A FAIL only by known deviations: drawn violet, not as a failure."""
        return self.verdict == FAIL and bool(self.deviations)


@dataclass(frozen=True)
class MatrixRow:
    feature: FeatureRow
    cells: tuple[Cell, ...]

    def cell(self, client: str) -> Cell:
        for c in self.cells:
            if c.client == client:
                return c
        raise KeyError(f"no column for client {client!r}; columns: {[c.client for c in self.cells]}")


@dataclass(frozen=True)
class SummaryInfo:
    source: str
    client: str
    target: str | None
    broker_version: str | None


@dataclass(frozen=True)
class ClientMatrix:
    clients: tuple[str, ...]
    rows: tuple[MatrixRow, ...]
    summaries: tuple[SummaryInfo, ...]
    unmapped_rules: tuple[str, ...]

    def row(self, name: str) -> MatrixRow:
        for r in self.rows:
            if r.feature.name == name:
                return r
        raise KeyError(f"no feature-matrix row {name!r}")

    @property
    def disagreements(self) -> tuple[tuple[MatrixRow, Cell], ...]:
        return tuple((r, c) for r in self.rows for c in r.cells if c.disagreement)


# --------------------------------------------------------------------------- building


def _fold(verdicts: Iterable[str]) -> str:
    vs = list(verdicts)
    judged = worst_judged(vs)
    if judged is not None:
        return judged
    if vs and all(v == NOT_APPLICABLE for v in vs):
        return NOT_APPLICABLE
    return NOT_EXERCISED


def _normalise(summaries: Sequence[Mapping[str, Any]], sources: Sequence[str] | None) -> list[tuple[str, dict[str, Any]]]:
    """Validated (source, summary) pairs; a main-job ``summary.json`` with ``by_client`` becomes
    one summary per client."""
    if isinstance(summaries, Mapping) or not isinstance(summaries, Sequence):
        raise ValueError("build() takes a list of summary.json documents (dicts), one per client run")
    if sources is not None and len(sources) != len(summaries):
        raise ValueError(f"{len(sources)} sources for {len(summaries)} summaries")
    out: list[tuple[str, dict[str, Any]]] = []
    for i, doc in enumerate(summaries):
        source = sources[i] if sources is not None else f"summary #{i + 1}"
        if not isinstance(doc, Mapping):
            raise ValueError(f"{source}: not a summary.json document (a JSON object), got {type(doc).__name__}")
        by_client = doc.get("by_client")
        if isinstance(by_client, Mapping) and by_client:
            for client, sub in by_client.items():
                if not isinstance(sub, Mapping):
                    raise ValueError(f"{source}: field 'by_client.{client}' must be an object")
                merged = {"target": doc.get("target"), "broker_version": doc.get("broker_version"), **sub, "client": client}
                out.append((f"{source} (by_client.{client})", _check(merged, f"{source} (by_client.{client})")))
        else:
            out.append((source, _check(doc, source)))
    if not out:
        raise ValueError("no summaries: pass at least one summary.json document")
    return out


def _check(doc: Mapping[str, Any], source: str) -> dict[str, Any]:
    client = doc.get("client")
    if client is None or "client" not in doc:
        raise ValueError(f"{source}: missing field 'client' (expected one of {', '.join(CLIENT_ORDER)})")
    if client not in CLIENT_ORDER:
        raise ValueError(f"{source}: field 'client' is {client!r}; expected one of {', '.join(CLIENT_ORDER)}")
    rules = doc.get("rules")
    if "rules" not in doc or not isinstance(rules, Mapping):
        raise ValueError(f"{source}: missing field 'rules' (an object rule id -> verdict)")
    for rule_id, verdict in rules.items():
        if verdict not in VERDICTS:
            raise ValueError(f"{source}: field 'rules.{rule_id}' has unknown verdict {verdict!r}; "
                             f"expected one of {', '.join(VERDICTS)}")
    return dict(doc)


def build(summaries: Sequence[Mapping[str, Any]], *, sources: Sequence[str] | None = None) -> ClientMatrix:
    """The client x feature matrix from ``summary.json`` documents (each with ``client`` and
    ``rules``). ``sources`` names each document in errors and in the output (e.g. file paths).

    Raises ``ValueError`` naming the summary and field: no ``client`` (or not python/java/mixed),
    no ``rules``, or a verdict outside PASS, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED.
    """
    docs = _normalise(summaries, sources)
    per_client: dict[str, dict[str, list[str]]] = {}
    # client -> rule -> the known deviations that excused its FAIL; rules with a FAIL none excused
    excused: dict[str, dict[str, set[str]]] = {}
    unexcused: dict[str, set[str]] = {}
    infos = []
    for source, doc in docs:
        client = doc["client"]
        infos.append(SummaryInfo(source, client, doc.get("target"), doc.get("broker_version")))
        seen = per_client.setdefault(client, {})
        devs: dict[str, set[str]] = {}
        for dev in (doc.get("known_deviations") or {}).values():
            if isinstance(dev, Mapping) and dev.get("rule") and dev.get("id"):
                devs.setdefault(str(dev["rule"]), set()).add(str(dev["id"]))
        for rule_id, verdict in doc["rules"].items():
            seen.setdefault(rule_id, []).append(verdict)
            if verdict == FAIL and devs.get(rule_id):
                excused.setdefault(client, {}).setdefault(rule_id, set()).update(devs[rule_id])
            elif verdict == FAIL:
                unexcused.setdefault(client, set()).add(rule_id)
    clients = tuple(c for c in CLIENT_ORDER if c in per_client)
    rows = []
    for feature in FEATURE_ROWS:
        rule_ids = feature.rule_ids()
        cells = []
        for client in clients:
            claim = feature.claim(client)
            if not feature.covered:
                cells.append(Cell(client, None, (), claim, feature.claim_source(client)))
                continue
            folded = tuple((rid, _fold(per_client[client].get(rid, ()))) for rid in rule_ids)
            verdict = _fold(v for _, v in folded)
            kind, why = _disagreement(feature, client, claim, folded)
            failed = [rid for rid, v in folded if v == FAIL]
            mine = excused.get(client, {})
            known = (tuple(sorted({d for rid in failed for d in mine[rid]}))
                     if failed and all(mine.get(rid) for rid in failed) and not set(failed) & unexcused.get(client, set())
                     else ())
            cells.append(Cell(client, verdict, folded, claim, feature.claim_source(client), kind, why, known))
        rows.append(MatrixRow(feature, tuple(cells)))
    return ClientMatrix(clients, tuple(rows), tuple(infos), rules_behind_no_row())


def _disagreement(feature: FeatureRow, client: str, claim: str, folded: tuple[tuple[str, str], ...]) -> tuple[str | None, str]:
    who = {"python": "the Python client", "java": "the Java client"}.get(client, client)
    if claim == SUPPORTED and folded and all(v == NOT_APPLICABLE for _, v in folded):
        return CLAIMS_SUPPORT_NO_RULE_APPLIES, (
            f"The feature matrix says {who} supports {feature.name}, but every rule behind the row "
            f"({', '.join(r for r, _ in folded)}) is NOT_APPLICABLE to it: the registry describes this "
            "feature only for other clients.")
    passed = [r for r, v in folded if v == PASS]
    if claim == NOT_SUPPORTED and passed:
        return CLAIMS_NO_SUPPORT_BUT_PASSED, (
            f"The feature matrix says {who} does not support {feature.name}, yet {', '.join(passed)} "
            f"PASSed with {who}.")
    return None, ""


# --------------------------------------------------------------------------- outputs


def to_json(matrix: ClientMatrix) -> dict[str, Any]:
    rows = []
    for r in matrix.rows:
        f = r.feature
        rows.append({
            "name": f.name, "section": f.section, "feature": f.feature, "sub": f.sub,
            "matrix": {"java": f.java, "cpp": f.cpp, "python": f.python},
            "covered": f.covered,
            "rules": list(f.rule_ids()), "rule_areas": list(f.areas), "note": f.note or None,
            "cells": {c.client: {"verdict": c.verdict if f.covered else NOT_COVERED,
                                 "rules": dict(c.rules), "claim": c.claim, "claim_source": c.claim_source,
                                 "disagreement": c.disagreement, "explanation": c.explanation or None,
                                 "known_deviations": list(c.deviations)}
                      for c in r.cells},
        })
    return {
        "source": dict(SOURCE),
        "clients": list(matrix.clients),
        "summaries": [{"source": s.source, "client": s.client, "target": s.target, "broker_version": s.broker_version}
                      for s in matrix.summaries],
        "rows": rows,
        "disagreements": [{"row": r.feature.name, "client": c.client, "kind": c.disagreement, "claim": c.claim,
                           "verdict": c.verdict, "explanation": c.explanation} for r, c in matrix.disagreements],
        "rules_behind_no_row": list(matrix.unmapped_rules),
    }


_TEXT_MARK = {PASS: "\u2713 PASS", FAIL: "\u2717 FAIL", INDETERMINATE: "? INDETERMINATE",
              NOT_APPLICABLE: "n/a", NOT_EXERCISED: "\u2205 not exercised"}
# The claim as the OpenTelemetry compliance matrix writes it (plain text: no emoji font needed)
_CLAIM_MARK = {SUPPORTED: "matrix +", NOT_SUPPORTED: "matrix \u2212", UNKNOWN: "matrix ?"}


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def _versions(matrix: ClientMatrix, client: str) -> str:
    vs = sorted({s.broker_version for s in matrix.summaries if s.client == client and s.broker_version})
    return ", ".join(vs) or "?"


def to_markdown(matrix: ClientMatrix) -> str:
    lines = [
        "# Client x feature matrix",
        "",
        f"Rows: the Pulsar client feature matrix ({SOURCE['page']}), `{SOURCE['path']}` in {SOURCE['repository']} "
        f"at `{SOURCE['commit'][:12]}`. Each cell: our verdict for the row's rules with that client, then the "
        "matrix's claim (`matrix +` supported, `matrix \u2212` not supported, `matrix ?` no claim). "
        "n/a = the rules do not apply to that client (unsupported there), never a failure; "
        "\u26a0 = the claim and the verdicts disagree.",
        "",
        "Clients: " + ", ".join(f"{c} (broker {_versions(matrix, c)})" for c in matrix.clients),
        "",
    ]
    header = "| row | " + " | ".join(matrix.clients) + " | rules |"
    rule = "|---|" + "---|" * len(matrix.clients) + "---|"
    section = None
    for r in matrix.rows:
        f = r.feature
        if f.section != section:
            section = f.section
            lines += ["", f"## {section}", "", header, rule]
        name = " \u203a ".join(p for p in (f.feature, f.sub) if p)
        cells = []
        for c in r.cells:
            verdict = "not covered" if c.verdict is None else _TEXT_MARK[c.verdict]
            if c.known_deviation:
                verdict += f" (known deviation {', '.join(c.deviations)})"
            cells.append(f"{verdict} \u00b7 {_CLAIM_MARK[c.claim]}" + (" \u26a0" if c.disagreement else ""))
        rules = ", ".join(f.rule_ids()) if f.covered else f"_{NOT_COVERED}_"
        lines.append(f"| {_md(name)} | " + " | ".join(cells) + f" | {_md(rules)} |")
    lines += ["", "## Disagreements", ""]
    if matrix.disagreements:
        for r, c in matrix.disagreements:
            lines.append(f"- **{_md(r.feature.name)}**, {c.client}: {c.explanation}")
    else:
        lines.append("None: where the matrix makes a claim, the verdicts agree with it.")
    lines += ["", "## Rules behind no row", "",
              "Broker-side semantics the client feature matrix has no row for: " + (", ".join(matrix.unmapped_rules) or "none") + ".",
              "", "## Summaries", ""]
    lines += [f"- {s.source}: client {s.client}, target {s.target}, broker {s.broker_version}" for s in matrix.summaries]
    return "\n".join(lines) + "\n"


def to_html(matrix: ClientMatrix, *, caption: str = "") -> str:
    """An HTML fragment (one ``<section id="client-matrix">``) for ``reports/html.py`` to embed;
    it uses the report's CSS classes for verdict marks (``m-pass``, ``m-fail``, ``m-na``, ...).
    A cell carries ``data-row``, ``data-client``, ``data-row-verdict`` (NOT_COVERED for a row
    without rules), ``data-claim`` and ``data-disagreement``; ``data-verdict`` stays the rule
    matrix's."""
    head = "".join(f'<th class="client" data-client="{esc(c)}">{esc(c)}<br><span class="muted">broker {esc(_versions(matrix, c))}</span></th>'
                   for c in matrix.clients)
    body = []
    section = None
    for r in matrix.rows:
        f = r.feature
        if f.section != section:
            section = f.section
            body.append(f'<tr class="cm-section"><th colspan="{len(matrix.clients) + 2}">{esc(section)}</th></tr>')
        cells = []
        for c in r.cells:
            claim = f'<span class="claim" data-claim="{esc(c.claim)}" title="{esc(c.claim_source)}">{_CLAIM_MARK[c.claim]}</span>'
            warn = (f' <span class="disagree" title="{esc(c.explanation)}">\u26a0</span>' if c.disagreement else "")
            if c.verdict is None:
                cells.append(f'<td class="cell m-nc" data-row="{esc(f.name)}" data-client="{esc(c.client)}" data-row-verdict="NOT_COVERED" '
                             f'title="{esc(NOT_COVERED)}; matrix: {esc(c.claim_source)}"><span class="nc">not covered</span> {claim}</td>')
                continue
            glyph, cls, label = MARKS[c.verdict]
            tip = f"{f.name}, {c.client}: {label}; " + ", ".join(f"{rid} {v}" for rid, v in c.rules) + f"; matrix: {c.claim_source}"
            if c.explanation:
                tip += f". {c.explanation}"
            if c.known_deviation:
                tip += f"; only by known deviation {', '.join(c.deviations)}, not a failure"
            kd = f' kd" data-known-deviation="{esc(",".join(c.deviations))}' if c.known_deviation else ""
            cells.append(f'<td class="cell {cls}{" cm-disagree" if c.disagreement else ""}{kd}" data-row="{esc(f.name)}" '
                         f'data-client="{esc(c.client)}" data-row-verdict="{esc(c.verdict)}" data-claim="{esc(c.claim)}"'
                         f'{f" data-disagreement={chr(34)}{esc(c.disagreement)}{chr(34)}" if c.disagreement else ""} '
                         f'title="{esc(tip)}">{esc(glyph)} {claim}{warn}</td>')
        rules = ", ".join(f.rule_ids()) if f.covered else NOT_COVERED
        name = " \u203a ".join(p for p in (f.feature, f.sub) if p)
        body.append(f'<tr><td class="title">{esc(name)}</td>{"".join(cells)}<td class="rules muted">{esc(rules)}</td></tr>')
    if matrix.disagreements:
        items = "".join(f'<li data-row="{esc(r.feature.name)}" data-client="{esc(c.client)}"><b>{esc(r.feature.name)}</b>, '
                        f'{esc(c.client)}: {esc(c.explanation)}</li>' for r, c in matrix.disagreements)
        dis = f'<h3>Where the feature matrix and the verdicts disagree ({len(matrix.disagreements)})</h3><ul id="cm-disagreements">{items}</ul>'
    else:
        dis = "<p>Where the feature matrix makes a claim, the verdicts agree with it.</p>"
    # the address as text, not a link: the report is self-contained and names no URL to fetch
    page = SOURCE["page"].split("://", 1)[-1]
    src = (f'Rows and claims: the Pulsar client feature matrix (<code>{esc(page)}</code>; '
           f'<code>{esc(SOURCE["path"])}</code> in {esc(SOURCE["repository"])} at <code>{esc(SOURCE["commit"][:12])}</code>).')
    return f"""
<section id="client-matrix"><h2>Client x feature matrix</h2>
<p class="muted">{src} Each cell: our verdict for the rules behind the row with that client, then the matrix's claim
(<b>matrix +</b> supported, <b>matrix \u2212</b> not supported, <b>matrix ?</b> no claim); \u26a0 where they disagree. n/a means the rules do not apply
to that client (unsupported), never a failure. {esc(caption)}</p>
<div style="overflow-x:auto"><table class="client-matrix" id="client-feature-matrix"><thead><tr><th>feature</th>{head}<th>rules</th></tr></thead>
<tbody>{"".join(body)}</tbody></table></div>{dis}
<p class="muted">Rules behind no row: {esc(", ".join(matrix.unmapped_rules) or "none")}.</p></section>"""


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(redact(text), encoding="utf-8")  # no secret shows (fixtures/secrets.py)
    tmp.replace(path)
    return path


def write(matrix: ClientMatrix, out_dir: Path) -> list[Path]:
    """Write ``client-matrix.json`` and ``client-matrix.md`` into ``out_dir`` (atomically each)."""
    out_dir = Path(out_dir)
    return [
        _write_text(out_dir / "client-matrix.json", json.dumps(to_json(matrix), indent=2, ensure_ascii=False) + "\n"),
        _write_text(out_dir / "client-matrix.md", to_markdown(matrix)),
    ]


def load_summaries(paths: Sequence[str | Path]) -> tuple[list[dict[str, Any]], list[str]]:
    docs, sources = [], []
    for p in paths:
        path = Path(p)
        try:
            docs.append(json.loads(path.read_text(encoding="utf-8")))
        except OSError as err:
            raise ValueError(f"{path}: cannot read it: {err.strerror or err}") from None
        except ValueError as err:
            raise ValueError(f"{path}: not JSON: {err}") from None
        sources.append(str(path))
    return docs, sources


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reports.client_matrix",
                                     description="The client x feature matrix from summary.json files of pulsar-conformance run")
    parser.add_argument("summaries", nargs="+", metavar="SUMMARY.json",
                        help="summary-<client>.json files (a main summary.json with by_client counts for every client)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where to write client-matrix.json and client-matrix.md")
    args = parser.parse_args(argv)
    try:
        docs, sources = load_summaries(args.summaries)
        written = write(build(docs, sources=sources), Path(args.out))
    except ValueError as err:
        print(f"client matrix: {err}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
