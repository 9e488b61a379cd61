"""Mutated traces, histories and case files thrown at the loaders and the checker (Hypothesis).

Whatever the mutation (cut short, a byte flipped, a field dropped, renamed or given another
type, another format version), the loaders either read the file or refuse it with a
``TraceFormatError`` whose one-line message names the file; a history they read is judged by
the checker (``conformance.checker.check``, through ``check``'s own path) without crashing. A ``KeyError``, ``TypeError``, ``AttributeError`` or
``IndexError`` anywhere is a bug: a bad file would surface as a harness error (exit 4) instead
of bad input (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.case_files import load_case
from conformance.trace import History, TraceFormatError, load
from pulsar_conformance.commands import HarnessError, check_file

ROOT = Path(__file__).resolve().parents[2]
TRACES = [ROOT / "tests/data/cumulative-ack-shared.trace.jsonl",
          *sorted((ROOT / "conformance/regressions").glob("*.trace.jsonl"))[:3]]
HISTORIES = [*sorted((ROOT / "conformance/evidence").glob("KD-*.history.jsonl")),
             *sorted((ROOT / "tests/conformance/live_histories").glob("*.jsonl"))[:4],
             *sorted((ROOT / "conformance/regressions").glob("*.history.jsonl"))[:3]]
CASES = sorted((ROOT / "conformance/cases").rglob("*.yaml"))[::12]

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# JSON values of every type, small: what a wrong-typed field gets
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats(allow_nan=False)
                           | st.text(max_size=6),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=6)


def _paths(value, prefix=()):
    """Every key/index path inside a JSON value (the places a mutation can hit)."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _mutate_json(data, path, how, new_value):
    """``data`` with the value at ``path`` replaced by ``new_value``, deleted or its key renamed."""
    if not path:
        return new_value
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "replace":
        parent[last] = new_value
    elif how == "delete":
        del parent[last]
    elif isinstance(parent, dict):  # rename
        parent[str(last) + "_x"] = parent.pop(last)
    return data


@st.composite
def mutated_lines(draw, files):
    """The text of one of ``files`` with one structured mutation of one JSON line."""
    text = draw(st.sampled_from(files)).read_text(encoding="utf-8")
    lines = text.splitlines()
    index = draw(st.integers(0, len(lines) - 1))
    data = json.loads(lines[index])
    path = draw(st.sampled_from(list(_paths(data))))
    how = draw(st.sampled_from(["replace", "delete", "rename"] if path else ["replace"]))
    data = _mutate_json(data, path, how, draw(JSON_VALUES))
    lines[index] = json.dumps(data)
    return "\n".join(lines) + "\n"


@st.composite
def mutated_bytes(draw, files):
    """The bytes of one of ``files``, cut short, with bytes flipped, or with a wrong version."""
    raw = draw(st.sampled_from(files)).read_bytes()
    how = draw(st.sampled_from(["truncate", "flip", "version"]))
    if how == "truncate":
        return raw[:draw(st.integers(0, len(raw)))]
    if how == "version":
        return raw.replace(b'"version": 1', b'"version": ' + str(draw(st.integers(-2, 9).filter(lambda v: v != 1))).encode(), 1)
    out = bytearray(raw)
    for _ in range(draw(st.integers(1, 4))):
        out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
    return bytes(out)


def _load_and_check(path: Path) -> None:
    """Load ``path``; a history that loads is judged, as ``check`` does it (the checker inside:
    ``HarnessError`` is its crash). Only a ``TraceFormatError`` naming the file may escape."""
    try:
        item = load(path)
        if isinstance(item, History):
            check_file(str(path))
    except HarnessError:
        raise
    except ValueError as err:
        _assert_clear(err, path)


def _assert_clear(err: ValueError, path: Path) -> None:
    message = str(err)
    assert str(path) in message, message
    assert "\n" not in message, message
    assert isinstance(err, TraceFormatError), f"{type(err).__name__}: {message}"


@SETTINGS
@given(text=mutated_lines(TRACES + HISTORIES))
def test_mutated_fields_are_read_or_refused_clearly(tmp_path, text):
    path = tmp_path / "mutated.jsonl"
    path.write_text(text, encoding="utf-8")
    _load_and_check(path)


@SETTINGS
@given(raw=mutated_bytes(TRACES + HISTORIES))
def test_mutated_bytes_are_read_or_refused_clearly(tmp_path, raw):
    path = tmp_path / "mutated.jsonl"
    path.write_bytes(raw)
    _load_and_check(path)


@st.composite
def mutated_case(draw):
    """A case file's text, with one field of its YAML replaced, dropped or renamed, or its bytes cut short."""
    source = draw(st.sampled_from(CASES))
    if draw(st.booleans()):
        raw = source.read_bytes()
        return raw[:draw(st.integers(0, len(raw)))]
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    path = draw(st.sampled_from(list(_paths(data))))
    how = draw(st.sampled_from(["replace", "delete", "rename"] if path else ["replace"]))
    return yaml.safe_dump(_mutate_json(data, path, how, draw(JSON_VALUES))).encode()


@SETTINGS
@given(raw=mutated_case())
def test_mutated_cases_are_read_or_refused_clearly(tmp_path, raw):
    path = tmp_path / "mutated.yaml"
    path.write_bytes(raw)
    try:
        load_case(path)
    except ValueError as err:
        _assert_clear(err, path)
