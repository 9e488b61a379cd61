"""The bad-input table (docs/bad-input.md), one test per row, through the real command line.

Each row gives a command a missing, empty, truncated, binary, wrong-version or semantically bad
file (trace, history, case YAML, corpus part, config override, token file) and expects exit
code 2 and ONE line on stderr that names the file (or option), the line or field, and what to
do. Below the table: nothing already written is lost when the input is bad, a token never
shows, and a report stopped by SIGTERM leaves no JVM behind.

The corpus rows are refused before Spark starts (footers and columns read with pyarrow); only
the corrupt-page row and the SIGTERM test start Spark, each in a subprocess of its own (~20 s).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.corpus import SCHEMA, VERSION_KEY
from pulsar_conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
TRACE = (ROOT / "tests/data/cumulative-ack-shared.trace.jsonl").read_text(encoding="utf-8")
HISTORY = (ROOT / "conformance/evidence/KD-001-backlog-after-seek-4.0.8.history.jsonl").read_text(encoding="utf-8")
CASE = (ROOT / "conformance/cases/acks/ack-cumulative-failover.yaml").read_text(encoding="utf-8")
BINARY = bytes(range(256)) * 4  # its first byte that is not UTF-8: 128, on line 2


def run_cli(capfd, *argv: str) -> tuple[int, list[str]]:
    """``pulsar-conformance ARGV`` in this process: the exit code and stderr's non-empty lines."""
    code = main(list(argv))
    return code, [line for line in capfd.readouterr().err.splitlines() if line.strip()]


def assert_refused(code: int, lines: list[str], *fragments: str) -> str:
    """Exit 2 and one stderr line holding every fragment (file, line/field, problem, what to do)."""
    assert code == 2, lines
    assert len(lines) == 1, lines
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def _write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _replace_line(text: str, number: int, change) -> str:
    """``text`` with JSON line ``number`` (from 1) changed by ``change(dict)``."""
    lines = text.splitlines()
    data = json.loads(lines[number - 1])
    change(data)
    lines[number - 1] = json.dumps(data)
    return "\n".join(lines) + "\n"


def _cut(text: str, line: int, keep: int) -> str:
    """The first ``line - 1`` lines whole, then ``keep`` characters of line ``line``: a file cut short."""
    lines = text.splitlines()
    return "\n".join(lines[:line - 1] + [lines[line - 1][:keep]])


def _last_lines_dropped(text: str, count: int) -> str:
    """``text`` as this version writes it (with the header's op_count), less its last ``count`` lines."""
    from conformance import trace

    lines = trace.dumps(trace.parse(text)).splitlines()
    return "\n".join(lines[:-count]) + "\n"


# --------------------------------------------------------------------------- trace files (replay)

TRACE_ROWS = {
    # row id: (file content or None for missing, fragments: file:line, problem, what to do)
    "trace-missing": (None, [":", "no such file", "check the path"]),
    "trace-empty": ("", [":1:", "empty file", "give a trace or history file"]),
    "trace-truncated": (_cut(TRACE, 6, 40), [":6:", "not valid JSON", "cut short", "regenerate"]),
    "trace-binary": (BINARY, [":2:", "byte 128", "not UTF-8", "give a JSON-lines trace"]),  # byte 10 is a line break
    "trace-wrong-version": (_replace_line(TRACE, 1, lambda d: d.update(version=7)),
                            [":1:", "version 7 is not supported", "regenerate"]),
    "trace-unknown-op": (_replace_line(TRACE, 4, lambda d: d.update(op="sned")), [":4:", "unknown op 'sned'", "fix the op"]),
    "trace-unknown-field": (_replace_line(TRACE, 4, lambda d: d["args"].update(colour="red")),
                            [":4:", "unknown argument 'colour'", "fix the op"]),
    "trace-wrong-type": (_replace_line(TRACE, 7, lambda d: d["args"].update(timeout_ms="2s")),
                         [":7:", "'timeout_ms' must be integer", "fix the op"]),
    "trace-unknown-handle": (_replace_line(TRACE, 10, lambda d: d["args"].update(consumer="c9")),
                             [":10:", "'c9'", "not live", "create a handle"]),
    "trace-bad-profile": (_replace_line(TRACE, 1, lambda d: d.update(profile={"no_such_field": 1})),
                          [":1:", "header profile", "no_such_field", "fix the header field"]),
}



# --------------------------------------------------------------------------- history files (check)

def _bad_message_id(d: dict) -> None:
    d["outcome"]["value"]["message"]["message_id"] = [1, 2, 3]


HISTORY_RECEIVE_LINE = next(n for n, line in enumerate(HISTORY.splitlines(), 1) if '"message": {' in line)

HISTORY_ROWS = {
    "history-missing": (None, [":", "no such file", "check the path"]),
    "history-empty": ("", [":1:", "empty file", "give a trace or history file"]),
    "history-truncated": (_cut(HISTORY, 12, 60), [":12:", "not valid JSON", "regenerate"]),
    "history-binary": (HISTORY.encode()[:300] + b"\xff\xfe" + BINARY, [":", "not UTF-8", "give a JSON-lines"]),
    "history-wrong-version": (_replace_line(HISTORY, 1, lambda d: d.update(version=2)),
                              [":1:", "version 2 is not supported", "regenerate"]),
    "history-bad-outcome": (_replace_line(HISTORY, 3, lambda d: d["outcome"].update(status="fine")),
                            [":3:", "outcome status is 'fine'", "fix the outcome or regenerate"]),
    "history-bad-message-id": (_replace_line(HISTORY, HISTORY_RECEIVE_LINE, _bad_message_id),
                               [f":{HISTORY_RECEIVE_LINE}:", "message_id must be [ledger, entry, partition, batch_index]",
                                "regenerate"]),
    "history-bad-timing": (_replace_line(HISTORY, 1, lambda d: d.update(timing={"version": 1, "early_ms": "soon"})),
                           [":1:", "header timing", "delete the header's timing"]),
    "history-is-a-trace": (TRACE, [":1:", "a trace without outcomes", "run it with 'replay' first"]),
    # cut at a line boundary: every line is whole JSON, the last five steps are gone (one of them the FAIL)
    "history-cut-at-a-line-end": (_last_lines_dropped(HISTORY, 5),
                                  [":1:", "the header says 28 ops and the file has 23 (cut short)", "copy it again whole"]),
}


@pytest.mark.parametrize("row", sorted(TRACE_ROWS) + sorted(HISTORY_ROWS))
def test_trace_and_history_file_row(row, tmp_path, capfd):
    """A trace given to ``replay``, a history given to ``check``."""
    content, fragments = TRACE_ROWS.get(row) or HISTORY_ROWS[row]
    path = tmp_path / f"{row}.jsonl"
    if content is not None:
        _write(path, content)
    code, lines = run_cli(capfd, "replay" if row in TRACE_ROWS else "check", str(path))
    assert_refused(code, lines, str(path), *fragments)


# --------------------------------------------------------------------------- case YAML (run --cases DIR)

CASE_ROWS = {
    "case-empty": ("", ["must be a YAML mapping", "fix the case"]),
    "case-truncated": (CASE[:CASE.index("expect:") - 30], [":", "not valid YAML", "fix the YAML"]),
    "case-binary": (BINARY, [":2:", "byte 128", "not UTF-8", "give a YAML case file"]),
    "case-unknown-key": (CASE + "colour: red\n", ["unknown case keys ['colour']", "fix the case"]),
    "case-clients-not-a-list": (CASE + "clients: 1\n", ["clients is 1", "allowed: a list of", "fix the case"]),
    "case-unknown-op": (CASE.replace("- send:", "- sned:", 1), ["op 3", "unknown op 'sned'", "fix the case"]),
    "case-wrong-type": (CASE.replace("timeout_ms: 2000", "timeout_ms: soon"), ["op 5", "'timeout_ms' must be integer", "fix the case"]),
    "case-unknown-handle": (CASE.replace("ack_cumulative: {consumer: c1", "ack_cumulative: {consumer: c9"),
                            ["step 7", "'c9'", "not live", "create a handle"]),
    "case-bad-profile": (CASE + "profile: {no_such_field: 1}\n", ["profile", "no_such_field", "fix the case"]),
    "case-bad-brokers": (CASE + 'brokers: "newer than 3"\n', ["brokers", "bad broker version clause", "fix the case"]),
    "case-unregistered-rule": (re.sub(r"(?m)^rules: .*$", "rules: [PLS-NOPE-999]", CASE),
                               ["rules names PLS-NOPE-999", "not in the rule registry", "fix the id"]),
    "case-java-clients-not-a-string": (CASE + "java_clients: 2.11\n", ["java_clients is 2.11", "release spec", "fix the case"]),
}


def _run_cases(capfd, cases: Path, out: Path) -> tuple[int, list[str]]:
    return run_cli(capfd, "run", "--target", "model", "--cases", str(cases), "--out", str(out), "--client", "python",
                   "--no-report", "--fuzz-examples", "0")


@pytest.mark.parametrize("row", sorted(CASE_ROWS))
def test_case_file_row(row, tmp_path, capfd):
    content, fragments = CASE_ROWS[row]
    cases = tmp_path / "cases"
    cases.mkdir()
    path = _write(cases / f"{row}.yaml", content)
    code, lines = _run_cases(capfd, cases, tmp_path / "out")
    assert_refused(code, lines, str(path), *fragments)


CASE_FOLDER_ROWS = ("cases-folder-missing", "cases-folder-empty")


@pytest.mark.parametrize("row", CASE_FOLDER_ROWS)
def test_case_folder_row(row, tmp_path, capfd):
    cases = tmp_path / "cases"
    if row == "cases-folder-empty":
        cases.mkdir()
    code, lines = _run_cases(capfd, cases, tmp_path / "out")
    assert_refused(code, lines, str(cases), "no such case folder" if row.endswith("missing") else "no case files",
                   "give --cases" if row.endswith("missing") else "put case files in it")


def test_a_bad_case_leaves_the_previous_run_outputs_whole(tmp_path, capfd):
    out = tmp_path / "out"
    (out / "corpus").mkdir(parents=True)
    before = {"summary.json": '{"rules": {"PLS-ACK-001": "PASS"}}\n', "junit.xml": "<testsuites/>\n",
              "corpus/part-old-000000.parquet": "old part\n"}
    for name, text in before.items():
        (out / name).write_text(text)
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "ok.yaml").write_text(CASE)
    (cases / "zz-bad.yaml").write_text(CASE.replace("id: ack-cumulative-failover", "id: bad").replace("- send:", "- sned:", 1))
    code, lines = _run_cases(capfd, cases, out)
    assert_refused(code, lines, "zz-bad.yaml", "unknown op 'sned'")
    assert {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()} == before


# --------------------------------------------------------------------------- config override, token

OVERRIDE_ROWS = {
    "override-no-equals": ("bad", ["not of the form key=value"]),
    "override-bad-key": ("1x=2", ["not a valid config key"]),
    "override-harness-key": ("brokerServicePort=6650", ["set by the harness"]),
}


@pytest.mark.parametrize("row", sorted(OVERRIDE_ROWS))
def test_config_override_row(row, tmp_path, capfd):
    item, fragments = OVERRIDE_ROWS[row]
    code, lines = run_cli(capfd, "run", "--target", "embedded", "--config-override", item, "--out", str(tmp_path / "out"),
                          "--no-report")
    assert_refused(code, lines, f"--config-override {item!r}", *fragments, "give KEY=VALUE")
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written


# options the target cannot use, and an --out that is not a folder: refused before anything runs or is written
OPTION_ROWS = {
    "option-version-with-model": (["--target", "model", "--broker-version", "4.0.8"],
                                  ["--broker-version", "does not apply to --target model", "choose a broker target"]),
    "option-token-file-with-model": (["--target", "model", "--token-file", "token"],
                                     ["--token-file", "does not apply to --target model", "choose a broker target"]),
    "option-version-with-url": (["--target", "pulsar://127.0.0.1:1", "--broker-version", "4.0.8"],
                                ["--broker-version", "does not apply to a cluster given by URL", "use --target embedded"]),
    "option-version-not-a-release": (["--target", "embedded", "--broker-version", "9.x"],
                                     ["--broker-version 9.x", "neither a release", "broker versions' lists"]),
    "option-out-is-a-file": (["--target", "model", "--out", "a-file"], ["--out", "is a file, not a folder", "give a folder"]),
    # a release-shaped version no line covers: the same wording as one that is no version at all
    "option-version-unknown-release": (["--target", "embedded", "--broker-version", "9.9.9"],
                                       ["--broker-version 9.9.9", "broker version '9.9.9' is neither a release like 3.0.7 "
                                        "nor a line among 2.10,", "broker versions' lists"]),
    # --only takes exact case ids, rule ids and explicit globs; a plain prefix is no longer a substring match
    "option-only-no-match": (["--target", "model", "--only", "fault-"],
                             ["--only fault-", "matches no case id and no rule id", "close: fault-", "'fault-*'"]),
    "option-workloads-and-cases": (["--target", "model", "--workloads", "--cases", "."],
                                   ["give either --cases or --workloads, not both"]),
    "option-only-not-for-client": (["--target", "model", "--only", "ack-cumulative-shared-java"],
                                   ["--client python", "no selected case runs with client python",
                                    "they run with java", "choose --client java"]),
}


@pytest.mark.parametrize("row", sorted(OPTION_ROWS))
def test_option_row(row, tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "token").write_text("secret\n")
    (tmp_path / "a-file").write_text("mine\n")
    option, fragments = OPTION_ROWS[row]
    out = [] if "--out" in option else ["--out", str(tmp_path / "out")]
    code, lines = run_cli(capfd, "run", *option, *out, "--client", "python", "--no-report")
    assert_refused(code, lines, *fragments)
    assert not (tmp_path / "out").exists() and (tmp_path / "a-file").read_text() == "mine\n"


def test_fuzz_generator_fast_on_a_broker_row(tmp_path, capfd):
    """``fuzz --generator fast`` with a broker target: the seeded generator runs on the model only. It was taken
    silently and Hypothesis ran instead; now exit 2, one line, before a broker starts or a folder is made."""
    code, lines = run_cli(capfd, "fuzz", "--target", "embedded", "--generator", "fast", "--examples", "1",
                          "--out", str(tmp_path / "out"))
    assert_refused(code, lines, "--generator fast", "runs on --target model only", "drop --generator")
    assert not (tmp_path / "out").exists()


def _read_only_place(tmp_path: Path) -> Path:
    """A folder no one may write in: a chmod 555 folder, or for root (whom modes do not stop) /proc."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    return Path("/proc")


def test_out_read_only_row(tmp_path, capfd):
    """``run --out`` in a folder that cannot be written: exit 2, one line, nothing made (it was exit 4
    with a traceback, from the first write)."""
    out = _read_only_place(tmp_path) / "pulsar-conformance-out"
    try:
        code, lines = run_cli(capfd, "run", "--target", "model", "--out", str(out), "--client", "python", "--no-report",
                              "--fuzz-examples", "0", "--only", "ack-individual")
    finally:
        if out.parent != Path("/proc"):
            out.parent.chmod(0o755)
    assert_refused(code, lines, f"--out {out}", "is not writable", "give a folder you can write to")
    assert not out.exists()


def test_fuzz_into_another_runs_corpus_row(tmp_path, capfd):
    """A new fuzz run (no --resume) into an --out whose corpus holds an earlier run's traces: refused,
    the corpus left as it was; --resume RUN_ID continues the earlier run."""
    out = tmp_path / "fz"
    first = ["fuzz", "--target", "model", "--examples", "20", "--seed", "7", "--out", str(out), "--no-progress"]
    assert main(first) == 0
    capfd.readouterr()
    run_id = json.loads((out / "summary.json").read_text())["run_id"]
    parts = sorted(p.name for p in (out / "corpus").glob("part-*.parquet"))
    assert parts
    code, lines = run_cli(capfd, *first[:4], "40", *first[5:])
    assert_refused(code, lines, f"--out {out}", f"already holds {len(parts)} part(s) of fuzz run {run_id}",
                   f"--resume {run_id}", "another --out")
    assert sorted(p.name for p in (out / "corpus").glob("part-*.parquet")) == parts
    assert main([*first, "--resume", run_id]) == 0  # the earlier run, continued: nothing judged twice
    assert json.loads((out / "summary.json").read_text())["examples"] == 20


TOKEN_ROWS = ("token-file-missing", "token-file-empty", "token-env-empty")


@pytest.mark.parametrize("row", TOKEN_ROWS)
def test_token_row(row, tmp_path, capfd, monkeypatch):
    token = tmp_path / "token"
    if row == "token-file-empty":
        token.write_text("\n")
    option = ["--token-env", "PC_TEST_NO_SUCH_TOKEN"] if row == "token-env-empty" else ["--token-file", str(token)]
    monkeypatch.delenv("PC_TEST_NO_SUCH_TOKEN", raising=False)
    code, lines = run_cli(capfd, "run", "--target", "pulsar://127.0.0.1:1", "--pulsar-admin-url", "http://127.0.0.1:1",
                          *option, "--out", str(tmp_path / "out"), "--no-report")
    where = "PC_TEST_NO_SUCH_TOKEN" if row == "token-env-empty" else str(token)
    problem = {"token-file-missing": "No such file", "token-file-empty": "is empty", "token-env-empty": "holds no token"}[row]
    assert_refused(code, lines, where, problem, "put the cluster's auth token in it")
    assert not (tmp_path / "out").exists()


def test_a_token_never_shows_when_the_command_fails(tmp_path):
    """The token of --token-file and of --token-env, with a broker that cannot be reached
    (loopback port 1): in no output and in no file written."""
    secret = "tok-" + os.urandom(12).hex()
    (tmp_path / "token").write_text(secret + "\n")
    out = tmp_path / "out"
    common = ["--target", "pulsar://127.0.0.1:1", "--pulsar-admin-url", "http://127.0.0.1:1", "--no-report",
              "--only", "ack-cumulative-failover", "--client", "python", "--fuzz-examples", "0", "--out", str(out)]
    env = {**os.environ, "PC_TEST_TOKEN": secret}
    for option in (["--token-file", str(tmp_path / "token")], ["--token-env", "PC_TEST_TOKEN"]):
        done = subprocess.run([sys.executable, "-m", "pulsar_conformance", "run", *common, *option], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr  # no broker
        assert "127.0.0.1:1" in done.stderr  # it did try the broker, with the token read
        assert secret not in done.stdout + done.stderr
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written  # the model's half of the run wrote its files
    assert not [p for p in written if secret.encode() in p.read_bytes()]


# --------------------------------------------------------------------------- corpus parts (report)

def _good_part(path: Path) -> Path:
    from spark_reports.samples import write_sample_corpus

    folder = write_sample_corpus(path.parent / f".sample-{path.stem}")
    shutil.move(str(next(folder.glob("part-*.parquet"))), path)
    shutil.rmtree(folder)
    return path


def _part_with(path: Path, table: pa.Table, version: bytes | None = b"2") -> Path:
    pq.write_table(table.replace_schema_metadata({VERSION_KEY: version} if version is not None else {}), path)
    return path


def _corpus_row(row: str, corpus: Path) -> Path:
    """Build the bad corpus of ``row`` in ``corpus``; the file (or folder) the message must name."""
    if row == "corpus-folder-missing":
        return corpus
    corpus.mkdir()
    if row == "corpus-folder-empty":
        return corpus
    _good_part(corpus / "part-good-000000.parquet")
    part = corpus / "part-bad-000000.parquet"
    if row == "corpus-part-empty":
        part.write_bytes(b"")
    elif row == "corpus-part-truncated":
        data = _good_part(part).read_bytes()
        part.write_bytes(data[:len(data) // 2])
    elif row == "corpus-part-binary":
        part.write_bytes(BINARY)
    elif row == "corpus-part-wrong-version":
        _part_with(part, SCHEMA.empty_table(), b"1")
    elif row == "corpus-part-no-version":
        _part_with(part, SCHEMA.empty_table(), None)
    elif row == "corpus-part-other-columns":
        _part_with(part, pa.table({"run_id": ["r"], "trace": ["t"], "step": [1]}))
    return part


CORPUS_ROWS = {
    "corpus-folder-missing": ["no such corpus folder", "give --outcomes the corpus folder"],
    "corpus-folder-empty": ["no part-*.parquet files", "give --outcomes the corpus folder"],
    "corpus-part-empty": ["not a readable Parquet file", "0 bytes", "regenerate the corpus"],
    "corpus-part-truncated": ["not a readable Parquet file", "regenerate the corpus"],
    "corpus-part-binary": ["not a readable Parquet file", "regenerate the corpus"],
    "corpus-part-wrong-version": ["corpus schema version 1", "regenerate the corpus"],
    "corpus-part-no-version": ["no pulsar_conformance_corpus_version", "regenerate the corpus"],
    "corpus-part-other-columns": ["tagged corpus schema version 2", "unexpected columns ['trace']", "'trace_id'",
                                  "regenerate the corpus"],
}


@pytest.mark.parametrize("row", sorted(CORPUS_ROWS))
def test_corpus_row(row, tmp_path, capfd):
    """Refused before Spark starts; the previous report in --out stays whole."""
    named = _corpus_row(row, tmp_path / "corpus")
    out = tmp_path / "report"
    out.mkdir()
    (out / "summary.json").write_text('{"previous": true}\n')
    code, lines = run_cli(capfd, "report", "--outcomes", str(named.parent if named.suffix else named), "--out", str(out))
    assert_refused(code, lines, str(named), *CORPUS_ROWS[row])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []
    assert (out / "summary.json").read_text() == '{"previous": true}\n'


def _report(corpus: Path, out: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pulsar_conformance", "report", "--outcomes", str(corpus), "--out", str(out),
                             *kwargs.pop("extra", ())], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)


def test_corpus_part_corrupt_page_row(tmp_path):
    """A part whose footer is fine but whose data pages are not: Spark finds it mid-job. One line
    naming the part (no Spark stack trace, no JVM chatter); the previous report stays whole."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _good_part(corpus / "part-good-000000.parquet")
    part = _good_part(corpus / "part-bad-000000.parquet")
    chunk = pq.ParquetFile(part).metadata.row_group(0).column(SCHEMA.get_field_index("observation"))
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(part.read_bytes())
    for i in range(start + 24, start + chunk.total_compressed_size - 8):  # the column's pages; the footer stays whole
        data[i] ^= 0x5A
    part.write_bytes(bytes(data))
    out = tmp_path / "report"
    out.mkdir()
    (out / "summary.json").write_text('{"previous": true}\n')
    proc = _report(corpus, out, extra=["--quiet"])
    stdout, stderr = proc.communicate(timeout=300)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert_refused(proc.returncode, lines, str(part), "Spark could not read this part", "regenerate the corpus")
    assert (out / "summary.json").read_text() == '{"previous": true}\n'
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_during_report_leaves_no_jvm(tmp_path):
    """SIGTERM once Spark's JVM runs: exit 143, the previous report whole, and no JVM left."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _good_part(corpus / "part-good-000000.parquet")
    out = tmp_path / "report"
    out.mkdir()
    (out / "summary.json").write_text('{"previous": true}\n')
    proc = _report(corpus, out)
    jvms: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        jvms |= {p for p in _descendants(proc.pid) if "java" in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")}
        if jvms:
            break
        time.sleep(0.2)
    assert jvms, "Spark's JVM never started"
    time.sleep(3)  # let the session get going
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr  # 128 + SIGTERM, as conformance.interruption has it
    assert re.search(r"interrupted \(SIGTERM\); .* is unchanged", stderr), stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in jvms):
        time.sleep(0.5)
    assert not [p for p in jvms if _alive(p)]
    assert (out / "summary.json").read_text() == '{"previous": true}\n'


def test_the_doc_table_has_a_row_for_each_test_row_and_no_other():
    """docs/bad-input.md lists exactly the rows tested here, each with exit code 2."""
    doc = (ROOT / "docs/bad-input.md").read_text(encoding="utf-8")
    table = [line for line in doc.splitlines() if line.startswith("| ") and "test_bad_input.py" in line]
    named = {m.group(1) for line in table for m in [re.search(r"\[`\w+\[([\w-]+)\]`\]", line)] if m}
    tested = {*TRACE_ROWS, *HISTORY_ROWS, *CASE_ROWS, *CASE_FOLDER_ROWS, *CORPUS_ROWS, *OVERRIDE_ROWS, *TOKEN_ROWS,
              *OPTION_ROWS}
    assert named == tested
    assert all(line.split(" | ")[2] == "2" for line in table)
    assert any("test_corpus_part_corrupt_page_row" in line for line in table)


@pytest.mark.parametrize("text, fragments", [
    (b"- {id: KD-X, case: c\n", [":2:", "not valid YAML", "fix the YAML"]),  # cut short: found at the end of the file
    (BINARY, ["not UTF-8", "give a YAML list"]),
    (b"- KD-X\n", ["deviation 1 is 'KD-X'", "a mapping of id, case"]),
    (b"- {id: KD-X, case: c, rule: PLS-ACK-001, anomaly: lost-message, brokers: '4.0', reason: r, evidence: e}\n",
     ["brokers '4.0'", "give a list of releases"]),
], ids=["truncated", "binary", "entry-not-mapping", "brokers-not-list"])
def test_a_bad_deviations_file_is_refused_in_one_line(text, fragments, tmp_path):
    """The known-deviations YAML (``conformance/deviations.yaml``, the suite's own, read by every
    run): refused as a ValueError naming the file, never a crash."""
    from conformance.deviations import load_deviations

    path = _write(tmp_path / "deviations.yaml", text)
    with pytest.raises(ValueError) as refused:
        load_deviations(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)
    for fragment in fragments:
        assert fragment in str(refused.value)
