"""The client drivers' sources, shipped inside the package so an installed wheel can build them.

``drivers/java`` (a Maven project, docs/java-driver.md) and ``drivers/go`` (a Go module,
docs/go-driver.md) are compiled on first use into the user's cache folder, never here: this folder
may be a read-only site-packages. A build whose sources are missing fails naming
``INCOMPLETE_INSTALL``.
"""

from __future__ import annotations

from pathlib import Path

JAVA_SOURCES = Path(__file__).resolve().parent / "java"
GO_SOURCES = Path(__file__).resolve().parent / "go"

INCOMPLETE_INSTALL = ("the installed pulsar-conformance package lacks the driver sources it ships; reinstall it from "
                      "a wheel built by the project (python3 -m pip wheel .) or from a checkout (pip install -e .)")
