package io.pulsarconformance.driver;

import java.nio.charset.StandardCharsets;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageRouter;
import org.apache.pulsar.client.api.TopicMetadata;
import org.apache.pulsar.client.impl.JavaStringHash;
import org.apache.pulsar.client.util.MathUtils;

/**
 * The {@code router} of create_producer: a keyed message goes to {@code hash(key) mod N} as the
 * named client does with the named hashing scheme (reference_model/routing.py
 * {@code partition_for_key}); a keyless message goes round robin from partition 0.
 *
 * <ul>
 *   <li>{@code murmur3_32}: Pulsar's {@code Murmur3_32Hash} (murmur3_x86_32, seed 0) over the UTF-8
 *       bytes, sign bit cleared; the same in both clients.</li>
 *   <li>{@code java_string_hash}, client {@code java}: {@code String.hashCode() & INT_MAX}
 *       (UTF-16 units), partition {@code signSafeMod(hash, N)}.</li>
 *   <li>{@code java_string_hash}, client {@code cpp}: the C++ {@code JavaStringHash}: the same
 *       recurrence over the UTF-8 bytes read as signed chars, {@code & INT_MAX}, then {@code % N}.</li>
 * </ul>
 * A key counts when it is set and not empty, as in the Python target's router.
 */
final class SchemeRouter implements MessageRouter {
    private static final long serialVersionUID = 1L;

    private final String hashing;
    private final String client;
    private long keyless;

    SchemeRouter(String hashing, String client) {
        this.hashing = hashing;
        this.client = client;
    }

    @Override
    public int choosePartition(Message<?> msg, TopicMetadata metadata) {
        int n = metadata.numPartitions();
        if (msg.hasKey() && msg.getKey() != null && !msg.getKey().isEmpty()) {
            return partitionForKey(msg.getKey(), n, hashing, client);
        }
        synchronized (this) {
            return (int) (keyless++ % n);
        }
    }

    static int partitionForKey(String key, int n, String hashing, String client) {
        int hash = keyHash(key, hashing, client);
        return "java".equals(client) ? MathUtils.signSafeMod(hash, n) : hash % n;
    }

    static int keyHash(String key, String hashing, String client) {
        if ("murmur3_32".equals(hashing)) {
            return ClientCompat.murmur3(key);
        }
        if ("java".equals(client)) {
            return JavaStringHash.getInstance().makeHash(key);
        }
        return cppJavaStringHash(key);
    }

    /** C++ {@code JavaStringHash::makeHash}: {@code 31*h + c} over UTF-8 bytes as signed char. */
    static int cppJavaStringHash(String key) {
        int h = 0;
        for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
            h = 31 * h + b; // a Java byte is signed, as char is on x86-64; int wraps like uint32_t
        }
        return h & Integer.MAX_VALUE;
    }
}
