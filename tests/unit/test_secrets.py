"""A token never shows (fixtures/secrets.py): not on the terminal, not in any file under --out.

The cluster here is real HTTP on loopback: an admin endpoint that answers 401 and echoes the
request's Authorization header in its body, as some gateways do; the broker port is closed. The
command is the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fixtures import secrets

ROOT = Path(__file__).resolve().parents[2]


class _EchoAuth401(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        body = json.dumps({"reason": f"Unauthorized; you sent Authorization: {self.headers.get('Authorization', '')}"}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def echoing_admin():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoAuth401)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_echoing_server_does_echo_the_token(echoing_admin):
    """The premise: without redaction the token would be in the answer the suite reads."""
    import requests

    answer = requests.get(echoing_admin + "/admin/v2/brokers/version", headers={"Authorization": "Bearer abcdefgh12"},
                          timeout=10)
    assert answer.status_code == 401 and "Bearer abcdefgh12" in answer.text


def test_a_refused_token_is_said_to_be_refused_and_shows_nowhere(tmp_path, echoing_admin):
    token = "eyJhbGciOiJIUzI1NiJ9." + os.urandom(16).hex()
    (tmp_path / "token.jwt").write_text(token + "\n")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "pulsar_conformance", "run", "--target", f"pulsar://127.0.0.1:{_closed_port()}",
                           "--pulsar-admin-url", echoing_admin, "--token-file", str(tmp_path / "token.jwt"),
                           "--only", "ack-individual", "--client", "python", "--fuzz-examples", "0", "--out", str(out)],
                          cwd=ROOT, capture_output=True, timeout=300)
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 2, stderr
    assert f"the cluster's admin API at {echoing_admin} refused the token given: HTTP 401" in stderr
    assert "does not answer" not in stderr
    assert token.encode() not in done.stdout + done.stderr
    written = [p for p in out.rglob("*") if p.is_file()]
    assert out / "summary.json" in written  # the run got as far as writing its outputs
    assert "refused the token given" in (out / "summary.json").read_text()
    assert [p for p in written if token.encode() in p.read_bytes()] == []


def test_redact_blanks_every_registered_secret_longest_first():
    secrets.forget_all()
    try:
        secrets.register("short")  # shorter than MIN_LENGTH: never a real token, not blanked
        secrets.register("token-abcdef")
        secrets.register("token-abcdef-and-more")
        assert secrets.redact("a token-abcdef-and-more b token-abcdef c short") == "a <token> b <token> c short"
        assert secrets.redact_bytes(b"x token-abcdef y") == b"x <token> y"
    finally:
        secrets.forget_all()


def test_every_output_writer_redacts(tmp_path):
    """summary.json (write_json), harness-errors.log, JUnit XML, the client matrix, a copied broker log."""
    from conformance.runner import log_harness_error, write_json
    from reports.junit import write_junit

    secret = "tok-" + os.urandom(8).hex()
    secrets.forget_all()
    secrets.register(secret)
    try:
        write_json(tmp_path / "summary.json", {"errors": [f"HTTP 401: Bearer {secret}"]})
        try:
            raise RuntimeError(f"answer echoed Bearer {secret}")
        except RuntimeError as err:
            log_harness_error(tmp_path / "harness-errors.log", "case-x", "external", err)
        write_junit(tmp_path / "junit.xml", [])
        (tmp_path / "broker.log").write_text(f"auth header Bearer {secret}\n")
        secrets.copy_redacted(tmp_path / "broker.log", tmp_path / "broker-copy.log")
        for name in ("summary.json", "harness-errors.log", "broker-copy.log"):
            text = (tmp_path / name).read_text()
            assert secret not in text and "Bearer <token>" in text, name
    finally:
        secrets.forget_all()


def test_histories_and_corpus_parts_are_written_without_the_token(tmp_path):
    """A client's error text that carried the token (a rejected step's detail) is kept in the history
    and in the outcome corpus as ``<token>``: the evidence stays, the secret does not."""
    import pyarrow.parquet as pq

    from conformance.checker import check
    from conformance.corpus import CorpusWriter
    from conformance.trace import parse, save

    secret = "tok-" + os.urandom(8).hex()
    history = parse("\n".join([
        '{"kind": "header", "format": "pulsar-conformance-trace", "version": 1, "trace_id": "t-secret", "op_count": 1}',
        '{"kind": "op", "step": 1, "op": "create_producer", "args": {"producer": "p", "topic": "t"}, '
        f'"outcome": {{"status": "rejected", "error": "OtherError", "detail": "401 for Bearer {secret}"}}, '
        '"t_start_ms": 0.0, "t_end_ms": 1.0}']) + "\n")
    secrets.forget_all()
    secrets.register(secret)
    try:
        save(history, tmp_path / "h.history.jsonl")
        writer = CorpusWriter(tmp_path / "corpus")
        writer.add(history, check(history).verdicts)
        writer.close()
        text = (tmp_path / "h.history.jsonl").read_text()
        assert secret not in text and "Bearer <token>" in text
        parts = list((tmp_path / "corpus").glob("part-*.parquet"))
        assert parts and all(secret.encode() not in p.read_bytes() for p in parts)
        cells = [str(v) for p in parts for column in pq.read_table(p).to_pylist() for v in column.values()]
        assert any("Bearer <token>" in c for c in cells), "the rejected step's detail is in the corpus, redacted"
    finally:
        secrets.forget_all()
