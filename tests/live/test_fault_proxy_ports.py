"""The fault proxy's start when its API port was taken between being picked and being bound.

Seen in CI (4 Dec 2026, the run of 9804bf8): Toxiproxy logged "bind: address already in use" and
exited, and the fault-regression test errored at set-up. The real Toxiproxy server is started here
on a port this test holds, as another process would: it must start again on a fresh port and carry
bytes to its upstream. Live tier: it needs the Go-built Toxiproxy (fixtures.faults.toxiproxy_binary).
"""

from __future__ import annotations

import socket
import threading

import pytest

from fixtures.embedded import cache_root
from fixtures.errors import BrokerStartError
from fixtures.faults import API_PORT_ATTEMPTS, Toxiproxy, toxiproxy_binary
from fixtures.ports import free_port

pytestmark = pytest.mark.live


def _echo_server() -> tuple[socket.socket, int]:
    """A loopback server that echoes one message per connection: the proxy's upstream."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(conn.recv(64))

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def _held_port() -> socket.socket:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder


def test_a_taken_api_port_starts_the_proxy_on_a_fresh_one(tmp_path):
    binary = toxiproxy_binary(cache_root())
    upstream, upstream_port = _echo_server()
    holder = _held_port()
    taken = holder.getsockname()[1]
    proxy = Toxiproxy(f"127.0.0.1:{upstream_port}", free_port(), taken, binary, tmp_path / "toxiproxy.log")
    try:
        proxy.start()
        assert proxy.api_port != taken
        assert "address already in use" in (tmp_path / "toxiproxy.log").read_text()
        with socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=5) as conn:
            conn.sendall(b"through the proxy")
            assert conn.recv(64) == b"through the proxy"
    finally:
        proxy.stop()
        holder.close()
        upstream.close()


def test_an_api_port_taken_every_time_is_a_clear_error(tmp_path, monkeypatch):
    """Every fresh port is taken too: the start gives up after API_PORT_ATTEMPTS and says so."""
    binary = toxiproxy_binary(cache_root())
    holders = [_held_port() for _ in range(API_PORT_ATTEMPTS)]
    ports = iter(h.getsockname()[1] for h in holders[1:])
    monkeypatch.setattr("fixtures.faults.free_port", lambda: next(ports))
    proxy = Toxiproxy("127.0.0.1:1", 0, holders[0].getsockname()[1], binary, tmp_path / "toxiproxy.log")
    try:
        with pytest.raises(BrokerStartError, match=f"taken {API_PORT_ATTEMPTS} times"):
            proxy.start()
        assert not proxy.alive()
    finally:
        proxy.stop()
        for h in holders:
            h.close()
