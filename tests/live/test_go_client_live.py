"""The Go client (pulsar-client-go) through drivers/go against the embedded broker: where it differs from Java.

Each expectation is what the Go client's sources at v0.19.0 say (paths cited per test; notes in
docs/research/go-client.md and docs/go-driver.md), checked against the broker; where Java differs, the Java
driver runs the same steps beside it. These are the first measurements of issue 19: the model does not yet
carry Go rules, so the Go client is driven here op by op rather than through cases.
"""

from __future__ import annotations

import time
import uuid

import pytest

from conformance.targets.go_driver import GoDriverError, start_driver
from reference_model import hashing

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def go(pulsar_broker, tmp_path_factory):
    driver = start_driver(log_path=tmp_path_factory.mktemp("go-driver") / "driver.log")
    args = {"service_url": pulsar_broker.service_url, "operation_timeout_ms": 10000, "connection_timeout_ms": 5000}
    if pulsar_broker.token:
        args["token"] = pulsar_broker.token
    assert driver.request("open", args)["status"] == "ok"
    yield driver
    driver.close()


def _ok(driver, op, **args):
    answer = driver.request(op, args, timeout_s=30)
    assert answer["status"] == "ok", f"{op} {args}: {answer}"
    return answer["value"]


def _topic(namespace: str) -> str:
    return f"persistent://{namespace}/go-{uuid.uuid4().hex[:8]}"


def test_the_driver_reports_its_client_and_refuses_what_the_go_client_lacks(go, pulsar_namespace):
    assert go.client_version == "0.19.0" and go.java_version.startswith("go1.")
    t = _topic(pulsar_namespace)
    _ok(go, "subscribe", consumer="gc", topic=t, subscription="s", type="Shared")
    # pulsar.Consumer has no RedeliverUnackedMessages, no ack timeout, no priority level (pulsar/consumer.go)
    for op, args in [("redeliver_unacked", {"consumer": "gc"}),
                     ("subscribe", {"consumer": "gx", "topic": t, "subscription": "s2", "ack_timeout_ms": 1000}),
                     ("subscribe", {"consumer": "gy", "topic": t, "subscription": "s3", "priority_level": 1}),
                     ("create_producer", {"producer": "gp", "topic": t, "access_mode": "ExclusiveWithFencing"})]:
        answer = go.request(op, args)
        assert (answer["status"], answer.get("error")) == ("rejected", "InvalidArgument"), (op, answer)
        assert "Go client" in answer["detail"]
    with pytest.raises(GoDriverError, match="frobnicate"):
        go.request("frobnicate", {})
    with pytest.raises(GoDriverError, match="unknown argument"):
        go.request("receive", {"consumer": "gc", "timeout_ms": 10, "colour": "red"})
    assert go.alive(), "a bad request must not bring the driver down"
    _ok(go, "close", handle="gc")


def _deliveries(driver, consumer: str, label: str, rounds: int = 6) -> list[int]:
    """Receive and nack until nothing comes: the redelivery counts seen."""
    counts = []
    for _ in range(rounds):
        message = _ok(driver, "receive", consumer=consumer, timeout_ms=2000)["message"]
        if message is None:
            break
        assert message["payload"] == label
        counts.append(message["redelivery_count"])
        _ok(driver, "nack", consumer=consumer, message=label)
    return counts


def test_go_max_deliveries_counts_deliveries_where_java_counts_redeliveries(go, live_target_for, pulsar_namespace):
    """DLQPolicy.MaxDeliveries "specifies the maximum number of times that a message will be delivered before
    being sent to the dead letter queue" (pulsar/consumer.go); Java's maxRedeliverCount N gives N + 1
    deliveries (PLS-DLQ-002). pulsar-client-go issue #501. The copy carries REAL_TOPIC and ORIGIN_MESSAGE_ID
    (pulsar/dlq_router.go)."""
    java = live_target_for("java").java_driver()
    _ok(java, "open", service_url=live_target_for("java").endpoint.service_url, operation_timeout_ms=10000)
    seen = {}
    for name, driver in (("go", go), ("java", java)):
        t = _topic(pulsar_namespace)
        dlq = t + "-dlq"
        _ok(driver, "subscribe", consumer="c", topic=t, subscription="s", type="Shared", nack_delay_ms=100,
            dead_letter={"max_redeliver_count": 2, "topic": dlq})
        _ok(driver, "subscribe", consumer="d", topic=dlq, subscription="sd", type="Shared", initial_position="Earliest")
        _ok(driver, "create_producer", producer="p", topic=t)
        _ok(driver, "send", producer="p", payload="m1")
        seen[name] = _deliveries(driver, "c", "m1")
        copy = _ok(driver, "receive", consumer="d", timeout_ms=5000)["message"]
        assert copy is not None and copy["payload"] == "m1", f"{name}: no dead-letter copy"
        assert copy["properties"]["REAL_TOPIC"] == t
        assert "ORIGIN_MESSAGE_ID" in copy["properties"]
        _ok(driver, "close_run")
        if name == "go":
            _ok(go, "open", service_url=live_target_for("java").endpoint.service_url, operation_timeout_ms=10000)
    assert seen["go"] == [0, 1], f"Go: MaxDeliveries 2 is two deliveries, got counts {seen['go']}"
    assert seen["java"] == [0, 1, 2], f"Java: maxRedeliverCount 2 is three deliveries, got counts {seen['java']}"


def _go_java_string_hash_partition(key: str, n: int) -> int:
    """pulsar/internal/hash.go JavaStringHash: h = 31*h + byte over the UTF-8 bytes as uint32, the sign bit
    kept; pulsar/default_router.go: hash % n."""
    h = 0
    for b in key.encode("utf-8"):
        h = (31 * h + b) & 0xFFFFFFFF
    return h % n


def _java_partition(key: str, n: int) -> int:
    """The Java client: JavaStringHash (String.hashCode & INT_MAX), signSafeMod (PLS-ROUTE-004)."""
    return hashing.java_string_hash(key) % n


def test_go_routes_keys_by_an_unsigned_hash_and_ordering_key_first(go, pulsar_admin, pulsar_namespace):
    """On 3 partitions, a key whose 32-bit hash has the top bit set goes elsewhere than from Java (the Go
    hash keeps the sign bit: pulsar/internal/hash.go); an ordering key routes before the key
    (pulsar/default_router.go)."""
    n = 3
    keys = [f"k{i}" for i in range(50)] + [f"key-{i:03d}" for i in range(300)]
    differing = [k for k in keys if _go_java_string_hash_partition(k, n) != _java_partition(k, n)][:3]
    agreeing = [k for k in keys if _go_java_string_hash_partition(k, n) == _java_partition(k, n)][:2]
    assert len(differing) == 3 and len(agreeing) == 2
    t = _topic(pulsar_namespace)
    pulsar_admin.create_partitioned_topic(t, n)
    _ok(go, "subscribe", consumer="c", topic=t, subscription="s", type="Shared", initial_position="Earliest")
    _ok(go, "create_producer", producer="p", topic=t)
    sent = {}
    for i, key in enumerate(differing + agreeing):
        sent[f"m{i}"] = _go_java_string_hash_partition(key, n)
        _ok(go, "send", producer="p", payload=f"m{i}", key=key)
    ordering = differing[0]
    sent["mo"] = _go_java_string_hash_partition(ordering, n)
    _ok(go, "send", producer="p", payload="mo", key=agreeing[0], ordering_key=ordering)
    got = {}
    for _ in sent:
        message = _ok(go, "receive", consumer="c", timeout_ms=3000)["message"]
        assert message is not None
        got[message["payload"]] = message["message_id"][2]
    assert got == sent, f"partitions: Go formula {sent}, broker {got}"
    assert any(_java_partition(k, n) != sent[f"m{i}"] for i, k in enumerate(differing))


def test_go_nack_redelivery_comes_on_the_tracker_tick(go, pulsar_namespace):
    """pulsar/negative_acks_tracker.go: a nack is due at now + delay with the low 8 bits of its millisecond
    time cleared (NackPrecisionBit 8: up to 255 ms early), and is asked back at the first tick (every
    delay / 3) at or after that; so it comes between delay - 255 ms and delay + delay / 3 (+ dispatch)."""
    delay = 600
    t = _topic(pulsar_namespace)
    _ok(go, "subscribe", consumer="c", topic=t, subscription="s", type="Shared", nack_delay_ms=delay)
    _ok(go, "create_producer", producer="p", topic=t)
    _ok(go, "send", producer="p", payload="m1")
    assert _ok(go, "receive", consumer="c", timeout_ms=3000)["message"]["payload"] == "m1"
    waits = []
    for count in (1, 2, 3):
        _ok(go, "nack", consumer="c", message="m1")
        t0 = time.monotonic()
        message = _ok(go, "receive", consumer="c", timeout_ms=3 * delay)["message"]
        waits.append((time.monotonic() - t0) * 1000)
        assert message is not None and message["redelivery_count"] == count
    for waited in waits:
        assert delay - 256 <= waited <= delay + delay / 3 + 150, f"redelivered after {waits} ms"
