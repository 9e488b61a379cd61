package io.pulsarconformance.driver;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;

/**
 * A watchdog thread: it sleeps {@link #PERIOD_MS} at a time and records every wake-up at least
 * {@link #MIN_STALL_MS} past its due time as a stall of this JVM (its CPU share, a GC pause, a
 * safepoint), on {@code System.nanoTime}, which reads CLOCK_MONOTONIC on Linux as the harness's
 * clock does. The op {@code stalls} hands the recorded ones to the harness and forgets them
 * (docs/java-driver.md; how verdicts use them: conformance/host_stalls.py).
 */
final class StallWatch {
    static final long PERIOD_MS = 10;
    static final long MIN_STALL_MS = 15;
    private static final int MAX_KEPT = 20_000;

    private final ArrayDeque<long[]> stalls = new ArrayDeque<>();

    void start() {
        Thread thread = new Thread(this::loop, "stall-watch");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        long before = System.nanoTime();
        while (true) {
            try {
                Thread.sleep(PERIOD_MS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long due = before + PERIOD_MS * 1_000_000L;
            if (now - due >= MIN_STALL_MS * 1_000_000L) {
                record(due, now);
            }
            before = now;
        }
    }

    private synchronized void record(long from, long to) {
        if (stalls.size() == MAX_KEPT) {
            stalls.removeFirst();
        }
        stalls.addLast(new long[] {from, to});
    }

    /** {@code {"now_ns": ..., "stalls": [[from_ns, to_ns], ...]}}, and the list is emptied. */
    synchronized ObjectNode drain(ObjectMapper mapper) {
        ObjectNode value = mapper.createObjectNode();
        value.put("now_ns", System.nanoTime());
        ArrayNode list = value.putArray("stalls");
        for (long[] stall : stalls) {
            list.addArray().add(stall[0]).add(stall[1]);
        }
        stalls.clear();
        return value;
    }
}
