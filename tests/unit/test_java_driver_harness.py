"""The harness side of the Java driver: its build cache and how it treats a misbehaving driver.

A misbehaving driver is played by small Python programs speaking (or breaking) the line
protocol of docs/java-driver.md; the real driver is exercised in tests/live/test_java_client.py.
Every failure must surface as ``JavaDriverError`` (reported ERROR by the runner), never as an
outcome the checker would judge.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from conformance.targets.java_driver import (
    DriverBuild,
    JavaDriver,
    JavaDriverError,
    build_driver,
    client_version_for,
    sources_digest,
)

READY = '{"ready": true, "client_version": "9.9.9", "java_version": "17"}'


def fake_driver(tmp_path: Path, body: str) -> JavaDriver:
    script = tmp_path / "fake_driver.py"
    script.write_text("import json, sys\n" + textwrap.dedent(body), encoding="utf-8")
    build = DriverBuild("9.9.9", tmp_path)
    return JavaDriver(build, log_path=tmp_path / "driver.log", command=[sys.executable, str(script)])


def test_a_well_behaved_driver_answers_in_order(tmp_path):
    driver = fake_driver(tmp_path, f"""
        print({READY!r}, flush=True)
        for line in sys.stdin:
            req = json.loads(line)
            if req["op"] == "shutdown":
                break
            print(json.dumps({{"id": req["id"], "status": "ok", "value": {{"echo": req["args"]}}}}), flush=True)
    """)
    with driver:
        assert driver.client_version == "9.9.9"
        assert driver.request("send", {"payload": "m1"})["value"] == {"echo": {"payload": "m1"}}
        assert driver.request("flush", {"producer": "p"})["value"] == {"echo": {"producer": "p"}}
    assert not driver.alive()


def test_unknown_op_is_a_driver_error_not_an_outcome(tmp_path):
    driver = fake_driver(tmp_path, f"""
        print({READY!r}, flush=True)
        for line in sys.stdin:
            req = json.loads(line)
            print(json.dumps({{"id": req["id"], "status": "driver_error", "detail": "unknown op " + req["op"]}}), flush=True)
    """)
    with driver, pytest.raises(JavaDriverError, match="unknown op frobnicate"):
        driver.request("frobnicate", {})


def test_a_driver_that_dies_mid_request_is_named(tmp_path):
    driver = fake_driver(tmp_path, f"""
        print({READY!r}, flush=True)
        sys.stdin.readline()
        sys.stderr.write("Exception in thread main: boom\\n")
        sys.exit(3)
    """)
    with driver, pytest.raises(JavaDriverError) as err:
        driver.request("receive", {"consumer": "c1", "timeout_ms": 10})
    assert "exited (code 3)" in str(err.value) and "boom" in str(err.value)


def test_a_garbled_answer_is_refused(tmp_path):
    driver = fake_driver(tmp_path, f"""
        print({READY!r}, flush=True)
        sys.stdin.readline()
        print("SLF4J: something printed on stdout", flush=True)
    """)
    with driver, pytest.raises(JavaDriverError, match="not a JSON line"):
        driver.request("send", {})


def test_an_answer_with_the_wrong_id_is_refused(tmp_path):
    driver = fake_driver(tmp_path, f"""
        print({READY!r}, flush=True)
        sys.stdin.readline()
        print(json.dumps({{"id": 99, "status": "ok", "value": {{}}}}), flush=True)
    """)
    with driver, pytest.raises(JavaDriverError, match="out of order"):
        driver.request("send", {})


def test_a_driver_that_never_says_ready_is_named(tmp_path):
    driver = fake_driver(tmp_path, "print('hello', flush=True)\n")
    with pytest.raises(JavaDriverError, match="not a JSON line|ready line"):
        driver.start()
    driver.close()


def test_client_version_follows_the_broker_release():
    assert client_version_for("4.0.8") == "4.0.8"
    assert client_version_for("3.3.6-SNAPSHOT") == "3.3.6"
    assert client_version_for(None) == "4.0.8"
    assert client_version_for("unknown") == "4.0.8"


def test_the_digest_changes_with_the_sources(tmp_path):
    src = tmp_path / "java"
    (src / "src" / "main" / "java").mkdir(parents=True)
    (src / "pom.xml").write_text("<project/>")
    (src / "src" / "main" / "java" / "A.java").write_text("class A {}")
    before = sources_digest(src)
    (src / "src" / "main" / "java" / "A.java").write_text("class A { int x; }")
    assert sources_digest(src) != before


def test_a_failing_build_names_maven_and_keeps_no_half_build(tmp_path):
    src = tmp_path / "java"
    (src / "src" / "main" / "java").mkdir(parents=True)
    (src / "pom.xml").write_text("<project>this is not a pom</project>")
    (src / "src" / "main" / "java" / "A.java").write_text("class A {}")
    cache = tmp_path / "cache"
    with pytest.raises(JavaDriverError) as err:
        build_driver("4.0.8", cache=cache, sources=src)
    assert "Maven build failed" in str(err.value) and "log:" in str(err.value)
    assert not [p for p in (cache / "java-driver").iterdir() if p.is_dir()]


def test_a_bad_client_version_is_refused_before_maven(tmp_path):
    with pytest.raises(JavaDriverError, match="not a release like 4.0.8"):
        build_driver("latest", cache=tmp_path)


def test_a_driver_that_died_between_requests_says_it_exited(tmp_path):
    driver = fake_driver(tmp_path, f"""
        print({READY!r}, flush=True)
        sys.exit(7)
    """)
    with driver:
        driver._proc.wait(10)
        with pytest.raises(JavaDriverError, match=r"exited \(code 7\) before op 'receive'"):
            driver.request("receive", {"consumer": "c1", "timeout_ms": 10})
