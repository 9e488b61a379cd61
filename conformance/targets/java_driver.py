"""The Java client driver, from the harness's side: build it, start it, talk to it.

The driver is the Java program in ``drivers/java/``; ``docs/java-driver.md`` is the protocol.
This module builds it with Maven against ``org.apache.pulsar:pulsar-client:<version>`` on first
use (cached per version and per digest of the driver's sources), starts one JVM, and exchanges
one JSON line per request.

Everything that goes wrong here (Maven missing or failing, a JVM that dies, an answer that is
not JSON, an op the driver does not know) is a ``JavaDriverError``: a harness problem that the
runner reports as ERROR, never as a conformance FAIL.

Choices:
- The build happens in a copy of ``drivers/java`` under the cache, renamed into place only when
  Maven succeeded, so a failed or interrupted build is never mistaken for a finished one.
- A build holds the build folder's inter-process lock (``fixtures.artifact_lock``): runs started at once
  on an empty cache build once, the others wait and reuse it. A step over 10 s says how far it is.
- Each request waits at most its own budget (the op's timeout plus the client's operation
  timeout plus a margin); a driver silent beyond that is treated as hung and is killed.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import drivers
from fixtures.artifact_lock import elapsed, make_once, maven_downloads, watch
from fixtures.embedded import _die_with_parent, cache_root, tail
from reference_model import releases

DRIVER_SOURCES = drivers.JAVA_SOURCES
MAIN_CLASS = "io.pulsarconformance.driver.Driver"
DEFAULT_CLIENT_VERSION = "4.0.8"
BUILD_TIMEOUT_S = 1800
START_TIMEOUT_S = 60
MARGIN_S = 30


class JavaDriverError(RuntimeError):
    """The Java driver could not be built, started or understood. Never a conformance verdict."""

    label = "Java client driver"

    def __init__(self, problem: str, *, log_path: Path | str | None = None, log_tail: str = ""):
        self.problem = problem
        self.log_path = str(log_path) if log_path else None
        parts = [f"{self.label}: {problem}"]
        if log_path:
            parts.append(f"log: {log_path}")
        if log_tail:
            parts.append("last lines of the log:\n" + log_tail)
        super().__init__("\n".join(parts))


@dataclass(frozen=True)
class DriverBuild:
    """A finished build: where its classes and its runtime classpath are."""

    client_version: str
    folder: Path

    @property
    def classpath(self) -> str:
        deps = (self.folder / "classpath.txt").read_text(encoding="utf-8").strip()
        return os.pathsep.join(p for p in (str(self.folder / "target" / "classes"), deps) if p)


def client_version_for(broker_version: str | None) -> str:
    """The pulsar-client release to build against: the broker's own release when it is one
    (``4.0.8``, also from ``4.0.8-SNAPSHOT`` or a vendor suffix), else the default."""
    return releases.release_number(broker_version) or DEFAULT_CLIENT_VERSION


def sources_digest(sources: Path = DRIVER_SOURCES) -> str:
    """sha256 over the driver's pom and Java sources (paths and bytes), so an edit rebuilds."""
    if not (sources / "pom.xml").exists():
        raise JavaDriverError(f"no driver sources at {sources} (expected pom.xml and src/main/java): {drivers.INCOMPLETE_INSTALL}")
    return digest_files(sources, [sources / "pom.xml", *sorted((sources / "src").rglob("*.java"))])


def digest_files(sources: Path, files: list[Path]) -> str:
    """sha256 over ``files`` (their paths under ``sources`` and their bytes): a driver build's cache key."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(sources)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build_driver(client_version: str = DEFAULT_CLIENT_VERSION, *, cache: Path | None = None,
                 sources: Path = DRIVER_SOURCES, progress: Callable[[str], None] | None = None) -> DriverBuild:
    """The driver built against ``org.apache.pulsar:pulsar-client:<client_version>``; built once."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", client_version):
        raise JavaDriverError(f"Java client version {client_version!r} is not a release like 4.0.8")
    root = (cache or cache_root()) / "java-driver"
    folder = root / f"{client_version}-{sources_digest(sources)}"

    def ready() -> DriverBuild | None:
        done = (folder / "build.json").exists() and (folder / "classpath.txt").exists()
        return DriverBuild(client_version, folder) if done else None

    return make_once(folder, f"the Java driver build for pulsar-client {client_version}", ready=ready, progress=progress,
                     make=lambda: _maven_build(client_version, root, folder, sources, progress))


def _maven_build(client_version: str, root: Path, folder: Path, sources: Path,
                 progress: Callable[[str], None] | None) -> DriverBuild:
    """``mvn package`` of the driver into ``folder`` (under its lock: ``build_driver``)."""
    if shutil.which("mvn") is None:
        raise JavaDriverError("Maven (mvn) is not installed; it builds the Java driver (apt-get install maven)")
    if shutil.which("java") is None:
        raise JavaDriverError("java is not installed; the Java driver needs a JDK 17 (apt-get install openjdk-17-jdk-headless)")
    if progress:
        progress(f"building the Java driver against pulsar-client {client_version} with Maven (once)")

    def prepare(staging: Path) -> list[list[str]]:
        shutil.copy2(sources / "pom.xml", staging / "pom.xml")
        shutil.copytree(sources / "src", staging / "src")
        # no -q/-ntp: the log's "Downloaded from" lines are what the progress lines count
        cmd = ["mvn", "-B", "-Dstyle.color=never", "package", "dependency:build-classpath",
               "-Dmdep.outputFile=classpath.txt", f"-Dpulsar.client.version={client_version}"]
        repo = os.environ.get("PULSAR_CONFORMANCE_MAVEN_REPO")
        if repo:
            cmd.append(f"-Dmaven.repo.local={Path(repo).expanduser()}")
        return [cmd]

    def explain(text: str) -> str | None:
        if "Could not find artifact" in text or "was not found in" in text:
            return (f"org.apache.pulsar:pulsar-client:{client_version} (or a dependency) is not on the Maven "
                    "repository this machine reaches; pass --java-client-version with a release it has (e.g. 4.0.8)")
        return None

    def missing(staging: Path) -> str | None:
        if not (staging / "classpath.txt").exists() or not (staging / "target" / "classes").is_dir():
            return "Maven finished but left no target/classes or classpath.txt"
        return None

    staged_build(root, folder, client_version, prepare=prepare, name=lambda cmd: "the Maven build", explain=explain,
                 missing=missing, error_class=JavaDriverError, timeout_s=BUILD_TIMEOUT_S, progress=progress)
    return DriverBuild(client_version, folder)


def staged_build(root: Path, folder: Path, client_version: str, *, prepare: Callable[[Path], list[list[str]]],
                 name: Callable[[list[str]], str], explain: Callable[[str], str | None],
                 missing: Callable[[Path], str | None], error_class: type[JavaDriverError], timeout_s: float,
                 env: dict[str, str] | None = None, identity: dict[str, str] | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
    """Build a driver in a staging copy under ``root`` and rename it into ``folder`` when it succeeded (the Java
    and the Go driver's builds). ``prepare`` copies the sources into the staging folder and gives the commands;
    each runs there with its output in ``root/build-<version>.log``; ``name`` says a command in an error,
    ``explain`` a failure the log's last lines account for, ``missing`` what a finished build lacks,
    ``identity`` what else makes this build what it is (recorded in ``build.json``: the Go driver's
    ``CGO_ENABLED``). Every problem raises ``error_class`` with the log; a failed or interrupted build is never
    taken for a finished one (``build.json`` is written last). A step over 10 s tells ``progress`` its name,
    its time and, for Maven, what it downloaded so far. The caller holds the folder's lock."""
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"build-{client_version}-", dir=root))
    log_path = root / f"build-{client_version}.log"
    try:
        steps = prepare(staging)
        t0 = time.monotonic()
        with log_path.open("wb") as log:
            for cmd in steps:
                log.write(("$ " + " ".join(cmd) + "\n").encode())
                log.flush()
                started, offset = time.monotonic(), log.tell()
                describe = lambda: f"{name(cmd)}: {elapsed(started)}{maven_downloads(log_path, offset)}"  # noqa: E731
                try:
                    with watch(progress, describe):
                        proc = subprocess.run(cmd, cwd=staging, stdout=log, stderr=subprocess.STDOUT, env=env,
                                              timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    raise error_class(f"{name(cmd)} did not finish within {timeout_s:g} s", log_path=log_path,
                                      log_tail=tail(log_path)) from None
                if proc.returncode != 0:
                    log.flush()
                    problem = explain(tail(log_path, 80)) or f"{name(cmd)} failed (exit {proc.returncode})"
                    raise error_class(problem, log_path=log_path, log_tail=tail(log_path, 40))
        lacking = missing(staging)
        if lacking:
            raise error_class(lacking, log_path=log_path)
        (staging / "build.json").write_text(json.dumps({
            "client_version": client_version, **(identity or {}), "built_s": round(time.monotonic() - t0, 1),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n", encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class JavaDriver:
    """One running driver JVM. ``request(op, args)`` -> the answer dict (``status`` ok, rejected
    or indeterminate); a ``driver_error`` answer, a dead JVM or a garbled line raise
    ``JavaDriverError``. The Go driver (``go_driver.GoDriver``) speaks the same protocol and reuses this
    class with its own program and error class."""

    error_class: type[JavaDriverError] = JavaDriverError
    program = "java"

    def __init__(self, build: DriverBuild, *, log_path: Path | None = None, command: list[str] | None = None):
        self.build = build
        self.command = command  # None: the JVM; tests of the harness's error handling pass another program
        self.log_path = log_path or (build.folder / "driver.log")
        self.client_version = build.client_version
        self.java_version = "unknown"
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: "queue.Queue[bytes | None]" = queue.Queue()
        self._next_id = 0

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> "JavaDriver":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        jvm_tmp = self.log_path.parent / "tmp"  # native libraries the client unpacks: not into /tmp
        jvm_tmp.mkdir(exist_ok=True)
        cmd = self.command or ["java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", f"-Djava.io.tmpdir={jvm_tmp}",
                               "-cp", self.build.classpath, MAIN_CLASS]
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                          preexec_fn=_die_with_parent)
        except OSError as err:
            raise self.error_class(f"cannot start {self.program}: {err}") from None
        finally:
            log.close()
        threading.Thread(target=self._pump, args=(self._proc.stdout,), daemon=True).start()
        hello = self._read(START_TIMEOUT_S, "the ready line")
        if not hello.get("ready"):
            raise self._fail(f"the first line was not the ready line: {hello!r}")
        self.client_version = str(hello.get("client_version") or self.client_version)
        self.java_version = str(hello.get("java_version") or hello.get("go_version") or "unknown")
        return self

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None and proc.stdin:
                proc.stdin.write(b'{"id": 0, "op": "shutdown", "args": {}}\n')
                proc.stdin.flush()
                proc.stdin.close()
            proc.wait(10)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            proc.kill()
            proc.wait(10)

    def __enter__(self) -> "JavaDriver":
        return self.start() if self._proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- requests

    def request(self, op: str, args: dict[str, Any] | None = None, *, timeout_s: float = 60.0) -> dict[str, Any]:
        if not self.alive():
            code = self._proc.poll() if self._proc is not None else None
            raise self._fail(f"the driver exited (code {code}) before op {op!r}" if code is not None
                             else f"the driver is not running (needed for op {op!r})")
        self._next_id += 1
        rid = self._next_id
        line = json.dumps({"id": rid, "op": op, "args": args or {}}, separators=(",", ":")) + "\n"
        try:
            assert self._proc is not None and self._proc.stdin is not None
            self._proc.stdin.write(line.encode("utf-8"))
            self._proc.stdin.flush()
        except (OSError, ValueError) as err:
            raise self._fail(f"cannot send op {op!r}: {err}") from None
        answer = self._read(timeout_s + MARGIN_S, f"the answer to op {op!r}")
        if answer.get("id") != rid:
            raise self._fail(f"answer out of order: expected id {rid}, got {answer!r}")
        status = answer.get("status")
        if status == "driver_error":
            raise self.error_class(f"op {op!r} failed inside the driver: {answer.get('detail')}", log_path=self.log_path)
        if status not in ("ok", "rejected", "indeterminate"):
            raise self._fail(f"answer to op {op!r} has unknown status {status!r}")
        return answer

    def _pump(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            self._lines.put(raw)
        self._lines.put(None)

    def _read(self, timeout_s: float, what: str) -> dict[str, Any]:
        try:
            raw = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            proc = self._proc
            if proc is not None:
                proc.kill()
            raise self._fail(f"no {what} within {timeout_s:.0f} s; the driver was killed as hung") from None
        if raw is None:
            code = self._proc.wait(10) if self._proc is not None else None
            raise self._fail(f"the driver exited (code {code}) before {what}")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise self._fail(f"{what} is not a JSON line: {raw[:200]!r}") from None
        if not isinstance(data, dict):
            raise self._fail(f"{what} is not a JSON object: {raw[:200]!r}")
        return data

    def _fail(self, problem: str) -> JavaDriverError:
        return self.error_class(problem, log_path=self.log_path, log_tail=tail(self.log_path, 20))


def start_driver(client_version: str, *, log_path: Path | None = None, progress: Callable[[str], None] | None = None) -> JavaDriver:
    """Build (once) and start a driver for ``client_version``."""
    return JavaDriver(build_driver(client_version, progress=progress), log_path=log_path).start()
