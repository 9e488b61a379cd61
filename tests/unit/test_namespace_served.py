"""A new namespace is handed to a run only once the broker serves it (fixtures.admin.wait_until_served).

A loopback HTTP server plays the admin endpoint: it answers the probe lookup with what a broker
that is still settling answers (503, then 200 with a broker URL), with what a gateway that does
not serve lookups answers (404), or never with a broker URL.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator

import pytest

from fixtures.admin import AdminClient
from fixtures.errors import AdminError


class _Script:
    """The answers the server gives to lookups, in order (the last one repeats), and what it saw."""

    def __init__(self, answers: list[tuple[int, dict | None]]):
        self.answers = answers
        self.lookups: list[str] = []
        self.created: list[str] = []

    def next_answer(self) -> tuple[int, dict | None]:
        return self.answers[min(len(self.lookups) - 1, len(self.answers) - 1)]


def _serve(script: _Script) -> tuple[http.server.HTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, status: int, body: dict | None) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_PUT(self) -> None:  # create_namespace
            script.created.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._answer(204, None)

        def do_GET(self) -> None:
            if not self.path.startswith("/lookup/v2/topic/persistent/"):
                self._answer(404, {"reason": "not served here"})
                return
            script.lookups.append(self.path)
            self._answer(*script.next_answer())

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def endpoint() -> Iterator:
    servers = []

    def _start(answers: list[tuple[int, dict | None]]) -> tuple[_Script, AdminClient]:
        script = _Script(answers)
        server, url = _serve(script)
        servers.append(server)
        return script, AdminClient(url, timeout_s=5.0)

    yield _start
    for server in servers:
        server.shutdown()
        server.server_close()


SERVED = (200, {"brokerUrl": "pulsar://127.0.0.1:6650", "httpUrl": "http://127.0.0.1:8080"})
SETTLING = (503, {"reason": "Namespace bundle is being loaded"})


def test_a_settling_broker_is_waited_for_until_it_serves_the_namespace(endpoint):
    script, admin = endpoint([SETTLING, SETTLING, SETTLING, SERVED])
    namespace = admin.fresh_namespace()
    assert script.created == [f"/admin/v2/namespaces/{namespace}"]
    assert len(script.lookups) == 4  # three refusals, then the answer naming a broker
    tenant, ns = namespace.split("/")
    assert all(path.startswith(f"/lookup/v2/topic/persistent/{tenant}/{ns}/") for path in script.lookups)


def test_a_served_namespace_costs_one_lookup(endpoint):
    script, admin = endpoint([SERVED])
    admin.fresh_namespace()
    assert len(script.lookups) == 1


def test_an_endpoint_that_does_not_serve_lookups_is_not_waited_for(endpoint):
    script, admin = endpoint([(404, {"reason": "Not Found"})])
    started = time.monotonic()
    admin.wait_until_served("public/x", timeout_s=30)
    assert time.monotonic() - started < 5 and len(script.lookups) == 1


def test_a_namespace_never_served_is_an_error_naming_it_after_the_deadline(endpoint):
    script, admin = endpoint([(200, {"nativeUrl": None})])
    with pytest.raises(AdminError) as err:
        admin.wait_until_served("public/never", timeout_s=1.0, poll_s=0.1)
    assert "public/never was not served within 1 s" in str(err.value)
    assert "without a broker URL" in str(err.value)
    assert len(script.lookups) >= 3
