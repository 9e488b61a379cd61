"""Conformance cases: YAML files under ``conformance/cases/`` that read like the docs.

A case is a trace written for people plus ``expect`` entries that pin what the spec says
(docs/trace-format.md#cases). The same file runs against every target; the checker judges the
history, and the expectations are checked on top, so a case both tests a target and documents
the rule.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from reference_model.names import PARTITION_SUFFIX

from conformance.trace import (
    ERROR_NAMES,
    OUTCOME_STATUSES,
    History,
    Op,
    Trace,
    TraceFormatError,
    TraceHeader,
    check_handles,
    received_message,
    validate_op,
)

CASES_DIR = Path(__file__).parent / "cases"
# The production-shaped workload family (docs/workloads.md): cases of the same format, too long for the default
# run, run with ``run --workloads``.
WORKLOADS_DIR = Path(__file__).parent / "workloads"

_CASE_KEYS = {"id", "title", "rules", "ops", "expect", "clients", "profile", "brokers", "java_clients", "note", "not_live"}
_EXPECT_KEYS = {"step", "status", "error", "payload", "redelivery_count", "value", "topic", "properties"}
# A case runs with these clients (docs/java-driver.md); "mixed" = each handle names its client.
CASE_CLIENTS = ("python", "cpp", "java", "go", "mixed")  # cpp: C++-core behaviour, run through the Python client
# The clients a run drives when none is named: ``run``, ``matrix`` and the installed pytest suite all
# read this one default. Go runs on request only (``--client go``), and with it the cross-client cases
# that have a Go handle (``Case.runs_in``), so the default needs no Go toolchain.
DEFAULT_CLIENTS = ("python", "java", "mixed")


@dataclass(frozen=True)
class Expectation:
    step: int
    status: str
    error: str | None = None
    payload: Any = ...  # ... = not pinned; None = "nothing received"
    redelivery_count: int | None = None
    value: Mapping[str, Any] | None = None
    topic: str | None = None  # the received message's topic, short form
    # the received message's properties: each listed key with this value, or matching the regular
    # expression after "re:" (message ids in properties differ from run to run)
    properties: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    rules: tuple[str, ...]
    trace: Trace
    expectations: tuple[Expectation, ...]
    clients: tuple[str, ...] = ("python", "java")
    path: Path | None = None
    note: str = ""
    profile: Mapping[str, Any] = field(default_factory=dict)
    # Why a live target cannot reach this case's rules ("" = it can): docs/trace-format.md#cases.
    not_live: str = ""
    # The vendor profile the case is written for (its YAML ``profile: {vendor: ...}``; "" = any): under
    # another profile it is NOT_APPLICABLE (a 10-day delay limit is TDMQ's, not Apache's default).
    written_for: str = ""
    # The broker releases and Java client releases the case is written for (version specs like ">=3.3",
    # ``reference_model.rules.version_in``; "*" = any): a live target outside them reports it NOT_APPLICABLE.
    brokers: str = "*"
    java_clients: str = "*"

    def with_vendor(self, vendor: str) -> "Case":
        """This case as run under the vendor profile ``vendor`` (``reference_model.vendors``): its
        trace header's ``profile`` names it, so the model, the checker and the history follow it."""
        from dataclasses import replace

        if vendor == "apache" and "vendor" not in self.trace.header.profile:
            return self
        profile = {**dict(self.trace.header.profile), "vendor": vendor}
        return replace(self, trace=replace(self.trace, header=replace(self.trace.header, profile=profile)),
                       profile=profile)

    def runs_on(self, client: str) -> bool:
        """Whether ``client`` runs this case; C++-core cases (``cpp``) run through the Python client."""
        return client in self.clients or (client == "python" and "cpp" in self.clients)

    @property
    def handle_clients(self) -> frozenset[str]:
        """The clients this case's handles name (``client:`` on create_producer, subscribe, ...)."""
        return frozenset(op.args["client"] for op in self.trace.ops if isinstance(op.args.get("client"), str))

    def runs_in(self, client: str, chosen: "tuple[str, ...] | list[str]") -> bool:
        """Whether a run whose clients are ``chosen`` runs this case as ``client``.

        ``runs_on``, except that a cross-client case (``mixed``) with a Go handle runs only when
        ``go`` is among ``chosen``: the Go client runs on request only, so the default job
        (python, java, mixed) needs neither the Go toolchain nor its driver build."""
        if not self.runs_on(client):
            return False
        return client != "mixed" or "go" not in self.handle_clients or "go" in chosen


@dataclass(frozen=True)
class ExpectationResult:
    expectation: Expectation
    passed: bool
    observed: str
    message: str


CASE_DOC = "docs/trace-format.md#cases"


def _fail(problem: str, path: Path, todo: str = f"fix the case ({CASE_DOC})") -> TraceFormatError:
    """A refusal naming the case file, the field (in ``problem``) and what to do."""
    return TraceFormatError(f"{problem}; {todo}", source=str(path))


def _parse_yaml(text: str) -> Any:
    """``text`` read as YAML with the safe loader: libyaml's when PyYAML was built with it (about 9x
    faster over the 420 case files, the same data), the pure-Python one otherwise. A malformed text is
    read again with the pure-Python loader, whose messages name the offending character."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is None:
        return yaml.safe_load(text)
    try:
        return yaml.load(text, Loader=fast)  # noqa: S506 - CSafeLoader is the safe loader
    except yaml.YAMLError:
        return yaml.safe_load(text)


def load_case(path: str | Path) -> Case:
    """Read one YAML case; a malformed one is refused naming the file and what is wrong."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise _fail("no such case file", path, "check the path") from None
    except OSError as err:
        raise _fail(f"cannot be read ({err.strerror})", path, "give a readable YAML case file") from None
    try:
        data = _parse_yaml(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise TraceFormatError(f"not UTF-8 text (byte {err.start}: a binary file?); give a YAML case file ({CASE_DOC})",
                               source=str(path), line=raw.count(b"\n", 0, err.start) + 1) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(str(getattr(err, "problem", None) or err).split())
        raise TraceFormatError(f"not valid YAML: {problem}; fix the YAML (cut short? a tab? an unclosed bracket?)",
                               source=str(path), line=line) from None
    if not isinstance(data, dict):
        raise _fail("a case must be a YAML mapping with id, title, rules, ops", path)
    unknown = set(data) - _CASE_KEYS
    if unknown:
        raise _fail(f"unknown case keys {sorted(unknown)}; allowed: {sorted(_CASE_KEYS)}", path)
    for key in ("id", "title", "rules", "ops"):
        if key not in data:
            raise _fail(f"case lacks {key!r}", path)
    rules = data["rules"]
    if not isinstance(rules, list) or not rules or not all(isinstance(r, str) for r in rules):
        raise _fail("rules must be a non-empty list of rule ids", path)
    _check_rule_ids(rules, path)
    ops: list[Op] = []
    if not isinstance(data["ops"], list) or not data["ops"]:
        raise _fail("ops must be a non-empty list", path)
    for step, item in enumerate(data["ops"], start=1):
        if not (isinstance(item, dict) and len(item) == 1):
            raise _fail(f"op {step} must be a one-key mapping like '- receive: {{consumer: c1, timeout_ms: 1000}}'", path)
        (name, args), = item.items()
        args = {} if args is None else args
        try:
            validate_op(name, args)
        except TraceFormatError as err:
            raise _fail(f"op {step}: {err.problem}", path) from None
        ops.append(Op(step, name, dict(args)))
    try:
        check_handles(ops, source=str(path))
    except TraceFormatError as err:
        raise _fail(err.problem, path, "create a handle (create_producer, subscribe, create_reader) before using it, "
                    "and close it once") from None
    expectations = tuple(_expectation(e, len(ops), path) for e in data.get("expect") or [])
    raw_clients = data.get("clients") or ("python", "java")
    if not isinstance(raw_clients, (list, tuple)):
        raise _fail(f"clients is {raw_clients!r}; allowed: a list of {', '.join(CASE_CLIENTS)}", path)
    clients = tuple(raw_clients)
    if not clients or any(not isinstance(c, str) or c not in CASE_CLIENTS for c in clients):
        raise _fail(f"clients is {list(clients)}; allowed: a list of {', '.join(CASE_CLIENTS)}", path)
    pinned = sorted({op.args["client"] for op in ops if "client" in op.args})
    if pinned and clients != ("mixed",):
        raise _fail(f"ops name their client ({', '.join(pinned)}): a cross-client case must say 'clients: [mixed]'", path)
    if clients == ("mixed",) and not pinned:
        raise _fail("a 'clients: [mixed]' case must name the client of its handles ('client: java' / 'client: python' on create_producer, subscribe, create_reader)", path)
    profile = _profile(data.get("profile"), path)
    not_live = data.get("not_live") or ""
    if not isinstance(not_live, str):
        raise _fail("not_live must be a sentence saying why a live target cannot run the case", path)
    brokers = _version_spec(data, "brokers", path)
    java_clients = _version_spec(data, "java_clients", path)
    header = TraceHeader(trace_id=str(data["id"]), title=str(data["title"]), rules=tuple(rules), profile=profile)
    return Case(
        id=str(data["id"]),
        title=str(data["title"]),
        rules=tuple(rules),
        trace=Trace(header, tuple(ops)),
        expectations=expectations,
        clients=clients,
        path=path,
        note=str(data.get("note", "")),
        profile=profile,
        not_live=not_live.strip(),
        written_for=str(profile.get("vendor", "")),
        brokers=brokers,
        java_clients=java_clients,
    )


def _check_rule_ids(rules: list[str], path: Path) -> None:
    """Every id a case names is a registered rule that a detector judges: a typo would otherwise be
    reported as a verdict of a rule nobody checked."""
    from conformance.detector_registry import DETECTORS
    from reference_model.rules import RULES

    status = {r.id: r.status for r in RULES}
    unknown = [r for r in rules if r not in status]
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], list(status), n=3)
        raise _fail(f"rules names {', '.join(unknown)}, which {'is' if len(unknown) == 1 else 'are'} not in the rule registry "
                    f"(reference_model/rules.py{'; close: ' + ', '.join(near) if near else ''})", path,
                    "fix the id, or list the registered ones with 'pulsar-conformance rules'")
    unjudged = [r for r in rules if r not in DETECTORS]
    if unjudged:
        raise _fail(f"rules names {', '.join(unjudged)}, which no detector judges (status "
                    f"{', '.join(sorted({status[r] for r in unjudged}))})", path,
                    "name an active rule the case exercises")


def _version_spec(data: Mapping[str, Any], key: str, path: Path) -> str:
    """The case's ``brokers`` / ``java_clients``: a release spec such as ">=3.3" or ">=2.10,<4.1" ("*": any)."""
    from reference_model.rules import RuleRegistryError, _parse_spec

    raw = data.get(key, "*")
    if not isinstance(raw, str):
        raise _fail(f"{key} is {raw!r}; give a release spec in quotes, like \">=3.3\" or \">=2.10,<4.1\"", path)
    try:
        _parse_spec(raw)
    except (RuleRegistryError, ValueError) as err:
        raise _fail(f"{key}: {' '.join(str(err).split())}", path) from None
    return raw.strip() or "*"


def _profile(raw: Any, path: Path) -> dict[str, Any]:
    """The case's ``profile``: model profile fields (and ``broker_config``) the model can apply."""
    from reference_model.broker import split_profile
    from reference_model.profiles import profile_for

    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(f"profile must be a mapping of model profile fields, got {raw!r}", path)
    try:
        overrides, _ = split_profile(raw)
        profile_for(None, None, overrides or None)
    except (ValueError, TypeError) as err:
        raise _fail(f"profile: {' '.join(str(err).split())}", path) from None
    return dict(raw)


def _expectation(raw: Any, n_ops: int, path: Path) -> Expectation:
    if not isinstance(raw, dict):
        raise _fail(f"expect entries must be mappings, got {raw!r}", path)
    unknown = set(raw) - _EXPECT_KEYS
    if unknown:
        raise _fail(f"expect entry has unknown keys {sorted(unknown)}; allowed: {sorted(_EXPECT_KEYS)}", path)
    step = raw.get("step")
    if not isinstance(step, int) or not 1 <= step <= n_ops:
        raise _fail(f"expect step {step!r} is not a step of this case (1..{n_ops})", path)
    status = raw.get("status", "ok")
    if status not in OUTCOME_STATUSES:
        raise _fail(f"expect status {status!r}; allowed: {', '.join(OUTCOME_STATUSES)}", path)
    error = raw.get("error")
    if error is not None and error not in ERROR_NAMES:
        raise _fail(f"expect error {error!r} is not a known error name", path)
    properties = raw.get("properties")
    if properties is not None:
        if not isinstance(properties, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in properties.items()):
            raise _fail("expect properties must map property names to strings (or 're:<regex>')", path)
        for key, want in properties.items():
            if want.startswith("re:"):
                try:
                    re.compile(want[3:])
                except re.error as err:
                    raise _fail(f"expect properties {key!r}: bad regular expression {want[3:]!r}: {err}", path) from None
    return Expectation(
        step=step,
        status=status,
        error=error,
        payload=raw["payload"] if "payload" in raw else ...,
        redelivery_count=raw.get("redelivery_count"),
        value=raw.get("value"),
        topic=raw.get("topic"),
        properties=properties,
    )


def is_upstream(case: Case) -> bool:
    """A case translated from Pulsar's own tests (conformance/cases/upstream/, docs/upstream-tests.md): live, such
    cases run on their own (``pytest -m "live and upstream"``), not in CI's live tier (docs/ci.md)."""
    return case.path is not None and "upstream" in Path(case.path).parts


# The cases already read, by path and by the file's (mtime, size, inode): one process reads the same
# case files many times (pytest's collection asked for all of them 17 times, about 14 s per process
# collecting), and a file changed since is read again. Cases are frozen; nothing changes their ops.
_READ: dict[Path, tuple[tuple[int, int, int], Case]] = {}


def _load_case_once(path: Path) -> Case:
    st = path.stat()
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    known = _READ.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    case = load_case(path)
    _READ[path] = (stamp, case)
    return case


def discover_cases(root: str | Path = CASES_DIR) -> list[Case]:
    """Every case below ``root``, sorted by path; duplicate ids are refused."""
    cases = [_load_case_once(p) for p in sorted(Path(root).rglob("*.yaml"))]
    seen: dict[str, Path | None] = {}
    for case in cases:
        if case.id in seen:
            raise TraceFormatError(f"case id {case.id!r} is also used by {seen[case.id]}", source=str(case.path))
        seen[case.id] = case.path
    return cases


GLOB_CHARS = "*?["


class CaseSelectionError(ValueError):
    """An ``--only`` pattern that selects no case: bad usage (exit 2), one line naming the pattern,
    a close id, and what to give instead."""


def select_cases(cases: list[Case], patterns: "tuple[str, ...] | list[str]") -> list[Case]:
    """The cases ``--only`` selects, in their order: each pattern is an exact case id, an exact rule
    id (every case that names it), or an explicit glob over both (``fault-*``, ``PLS-FAULT-*``;
    ``fnmatch`` syntax). A plain word never matches by substring: ``fault-`` selects nothing, so
    ``dlq-default-name`` is not picked up by accident. No patterns: every case. A pattern that
    matches no case raises ``CaseSelectionError`` naming it and the closest ids."""
    import difflib
    from fnmatch import fnmatchcase

    if not patterns:
        return list(cases)
    chosen: set[str] = set()
    for pattern in patterns:
        if any(ch in pattern for ch in GLOB_CHARS):
            hits = {c.id for c in cases if fnmatchcase(c.id, pattern) or any(fnmatchcase(r, pattern) for r in c.rules)}
        else:
            hits = {c.id for c in cases if c.id == pattern or pattern in c.rules}
        if not hits:
            ids = sorted({c.id for c in cases} | {r for c in cases for r in c.rules})
            stem = pattern.rstrip("*?[")
            prefixed = [i for i in ids if stem and i.startswith(stem)]
            near = prefixed[:1] or difflib.get_close_matches(pattern, ids, n=1, cutoff=0.5)
            glob = f"{stem}*" if prefixed else "fault-*"
            raise CaseSelectionError(
                f"--only {pattern}: matches no case id and no rule id of a case" + (f" (close: {near[0]})" if near else "")
                + f"; give an exact case id, a rule id, or a glob such as '{glob}'")
        chosen |= hits
    return [c for c in cases if c.id in chosen]


def check_expectations(case: Case, history: History) -> list[ExpectationResult]:
    """Compare a history with the case's pinned outcomes."""
    by_step = {e.step: e for e in history.events}
    results = []
    for exp in case.expectations:
        event = by_step.get(exp.step)
        if event is None:
            results.append(ExpectationResult(exp, False, "step not run", f"step {exp.step} is missing from the history"))
            continue
        out = event.outcome
        problems = []
        if out.status != exp.status:
            problems.append(f"status {out.status}" + (f" ({out.error}: {out.detail})" if out.error else "") + f", expected {exp.status}")
        if exp.error is not None and out.error != exp.error:
            problems.append(f"error {out.error}, expected {exp.error}")
        msg = received_message(out)
        if exp.payload is not ...:
            got = msg.payload if msg else None
            if got != exp.payload:
                problems.append(f"received {got!r}, expected {exp.payload!r}")
        if exp.redelivery_count is not None:
            got_count = msg.redelivery_count if msg else None
            if got_count != exp.redelivery_count:
                problems.append(f"redelivery_count {got_count}, expected {exp.redelivery_count}")
        if exp.topic is not None:
            got_topic = msg.topic if msg else None
            # a partitioned topic's name stands for its partitions (docs/trace-format.md#cases)
            head, suffix, index = (got_topic or "").rpartition(PARTITION_SUFFIX)
            if got_topic != exp.topic and not (suffix and head == exp.topic and index.isdigit()):
                problems.append(f"topic {got_topic!r}, expected {exp.topic!r}")
        if exp.properties is not None:
            got_props = dict(msg.properties) if msg else {}
            for key, want in exp.properties.items():
                have = got_props.get(key)
                ok = have is not None and (re.fullmatch(want[3:], have) is not None if want.startswith("re:") else have == want)
                if not ok:
                    problems.append(f"property {key} = {have!r}, expected {want!r}")
        if exp.value is not None:
            actual = dict(out.value or {})
            for key, want in exp.value.items():
                if actual.get(key) != want:
                    problems.append(f"value[{key!r}] = {actual.get(key)!r}, expected {want!r}")
        observed = out.status if msg is None else f"{out.status} {msg.payload} (count {msg.redelivery_count})"
        results.append(
            ExpectationResult(
                exp,
                not problems,
                observed,
                f"step {exp.step} ({event.op.op}): " + ("; ".join(problems) if problems else "as expected"),
            )
        )
    return results
