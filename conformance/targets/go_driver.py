"""The Go client driver, from the harness's side: build it, start it, talk to it.

The driver is the Go program in ``drivers/go/`` (``github.com/apache/pulsar-client-go``); it speaks the line
protocol of the Java driver (``docs/java-driver.md``), so the process handling is ``java_driver.JavaDriver``'s,
with this module's build and error class. ``docs/go-driver.md`` says what the Go driver does differently.

The build runs ``go build`` once per client version and per digest of the driver's sources and of the build's
settings (``BUILD_ENV``), into ``<cache>/go-driver/<version>-<digest>/driver``, under that folder's inter-process
lock (``fixtures.artifact_lock``: runs started at once build once); the modules come from the Go module proxy into the user's Go
module cache (``$PULSAR_CONFORMANCE_GO_MODCACHE`` isolates it, as ``$PULSAR_CONFORMANCE_MAVEN_REPO`` does for
Maven). Everything that goes wrong here is a ``GoDriverError``: a harness ERROR, never a conformance FAIL.

Choices:
- A client version other than the one ``drivers/go/go.mod`` pins is built by ``go mod edit -require`` and
  ``go mod tidy`` in the staging copy: the sources in the repository are never touched.
- ``CGO_ENABLED=0``: pulsar-client-go 0.19.0 selects its zstd codec by build tag
  (``pulsar/internal/compression/zstd_cgo.go`` is ``//go:build cgo`` and wraps DataDog/zstd's C sources;
  ``zstd.go`` is ``//go:build !cgo`` and uses klauspost/compress, pure Go). With empty Go caches on 2 cores
  (2026-12-02, beside a CI run) the first build took 128 s and 222 s with cgo, 100 s and 121 s without (up to
  ~18 minutes with cgo was seen on a busier fresh machine); without cgo the driver is one static binary and
  needs no C compiler. The same wire format either way (zstd frames).
- ``GOTOOLCHAIN=local``: the machine's own Go builds it (go.mod asks for 1.24, as pulsar-client-go 0.19.0
  does); a Go too old is reported, not silently replaced by a download.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from conformance.targets.java_driver import DriverBuild, JavaDriver, JavaDriverError, digest_files, staged_build
import drivers
from fixtures.artifact_lock import make_once
from fixtures.embedded import cache_root

DRIVER_SOURCES = drivers.GO_SOURCES
CLIENT_MODULE = "github.com/apache/pulsar-client-go"
DEFAULT_CLIENT_VERSION = "0.19.0"
BUILD_TIMEOUT_S = 1200
# Part of the build's identity: in the folder's digest and in build.json, so a build made with other
# settings (the cgo builds before 2026-12) is never taken for this one.
BUILD_ENV = {"CGO_ENABLED": "0"}


class GoDriverError(JavaDriverError):
    """The Go driver could not be built, started or understood. Never a conformance verdict."""

    label = "Go client driver"


@dataclass(frozen=True)
class GoDriverBuild(DriverBuild):
    """A finished build: the driver binary (no classpath: ``binary`` is the whole program)."""

    @property
    def binary(self) -> Path:
        return self.folder / "driver"


def sources_digest(sources: Path = DRIVER_SOURCES) -> str:
    """sha256 over go.mod, go.sum and the Go sources (paths and bytes), so an edit rebuilds."""
    if not (sources / "go.mod").exists():
        raise GoDriverError(f"no driver sources at {sources} (expected go.mod and *.go): {drivers.INCOMPLETE_INSTALL}")
    return digest_files(sources, _source_files(sources))


def build_digest(sources: Path = DRIVER_SOURCES) -> str:
    """The build folder's key: the sources' digest and ``BUILD_ENV``."""
    settings = " ".join(f"{k}={v}" for k, v in sorted(BUILD_ENV.items()))
    return hashlib.sha256(f"{sources_digest(sources)} {settings}".encode()).hexdigest()[:16]


def _source_files(sources: Path) -> list[Path]:
    return [p for p in (sources / "go.mod", sources / "go.sum") if p.exists()] + sorted(sources.glob("*.go"))


def pinned_version(sources: Path = DRIVER_SOURCES) -> str:
    """The pulsar-client-go release ``go.mod`` requires ("0.19.0")."""
    text = (sources / "go.mod").read_text(encoding="utf-8")
    m = re.search(rf"^\s*(?:require\s+)?{re.escape(CLIENT_MODULE)}\s+v(\S+)", text, re.MULTILINE)
    if not m:
        raise GoDriverError(f"{sources / 'go.mod'} does not require {CLIENT_MODULE}")
    return m.group(1)


def _go_env() -> dict[str, str]:
    env = dict(os.environ, **BUILD_ENV, GOTOOLCHAIN="local", GOFLAGS=" ".join(f for f in (os.environ.get("GOFLAGS", ""), "-mod=mod") if f))
    modcache = os.environ.get("PULSAR_CONFORMANCE_GO_MODCACHE")
    if modcache:
        env["GOMODCACHE"] = str(Path(modcache).expanduser())
    return env


def build_driver(client_version: str = DEFAULT_CLIENT_VERSION, *, cache: Path | None = None,
                 sources: Path = DRIVER_SOURCES, progress: Callable[[str], None] | None = None) -> GoDriverBuild:
    """The driver built against ``github.com/apache/pulsar-client-go@v<client_version>``; built once."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", client_version):
        raise GoDriverError(f"Go client version {client_version!r} is not a release like 0.19.0")
    root = (cache or cache_root()) / "go-driver"
    folder = root / f"{client_version}-{build_digest(sources)}"

    def ready() -> GoDriverBuild | None:
        done = (folder / "build.json").exists() and (folder / "driver").exists()
        return GoDriverBuild(client_version, folder) if done else None

    return make_once(folder, f"the Go driver build for pulsar-client-go {client_version}", ready=ready, progress=progress,
                     make=lambda: _go_build(client_version, root, folder, sources, progress))


def _go_build(client_version: str, root: Path, folder: Path, sources: Path,
              progress: Callable[[str], None] | None) -> GoDriverBuild:
    """``go mod download`` then ``go build`` of the driver into ``folder`` (under its lock: ``build_driver``)."""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if go is None:
        raise GoDriverError("the Go toolchain (go) is not installed; it builds the Go driver (https://go.dev/dl, 1.24 or later)")
    if progress:
        progress(f"building the Go driver against pulsar-client-go {client_version} without cgo (once, about 2 minutes)")

    def prepare(staging: Path) -> list[list[str]]:
        for path in _source_files(sources):
            shutil.copy2(path, staging / path.name)
        steps = []
        if client_version != pinned_version(sources):
            steps += [[go, "mod", "edit", f"-require={CLIENT_MODULE}@v{client_version}"], [go, "mod", "tidy"]]
        # two steps, so the progress lines tell the download of the modules from the compilation
        return steps + [[go, "mod", "download"], [go, "build", "-trimpath", "-o", "driver", "."]]

    def name(cmd: list[str]) -> str:
        if cmd[1:3] == ["mod", "download"]:
            return "go: downloading modules"
        return "go build" if cmd[1] == "build" else "go " + " ".join(cmd[1:3])

    def explain(text: str) -> str | None:
        if "unknown revision" in text or "invalid version" in text or "no matching versions" in text \
                or f"{CLIENT_MODULE}@v{client_version}: reading" in text:  # the proxy refused that version
            return (f"{CLIENT_MODULE}@v{client_version} is not on the Go module proxy this machine reaches; "
                    f"build against a release it has (e.g. {DEFAULT_CLIENT_VERSION})")
        if "requires go >=" in text or "go.mod requires go" in text:
            return "the installed Go is older than the driver or the client needs (go.mod says 1.24)"
        return None

    staged_build(root, folder, client_version, prepare=prepare, name=name, explain=explain, error_class=GoDriverError,
                 timeout_s=BUILD_TIMEOUT_S, env=_go_env(), identity=BUILD_ENV, progress=progress,
                 missing=lambda staging: None if (staging / "driver").exists() else "go build finished but left no driver binary")
    return GoDriverBuild(client_version, folder)


class GoDriver(JavaDriver):
    """One running Go driver process: ``JavaDriver``'s protocol handling, the Go binary, ``GoDriverError``."""

    error_class = GoDriverError
    program = "the Go driver"

    def __init__(self, build: GoDriverBuild, *, log_path: Path | None = None, command: list[str] | None = None):
        super().__init__(build, log_path=log_path, command=command or [str(build.binary)])  # type: ignore[arg-type]


def start_driver(client_version: str = DEFAULT_CLIENT_VERSION, *, log_path: Path | None = None,
                 progress: Callable[[str], None] | None = None) -> GoDriver:
    """Build (once) and start a Go driver for ``client_version``."""
    return GoDriver(build_driver(client_version, progress=progress), log_path=log_path).start()
