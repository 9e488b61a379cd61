package io.pulsarconformance.driver;

import java.lang.reflect.Method;
import java.util.Map;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.DeadLetterPolicy;
import org.apache.pulsar.client.api.ProducerBuilder;

/**
 * Client APIs newer than the oldest pulsar-client the driver builds against (2.7.4), reached by name so one
 * driver source compiles against every release: {@code ProducerAccessMode} (PIP-68, 2.8), redelivery backoffs
 * ({@code RedeliveryBackoff}, 2.10), the dead-letter policy's {@code initialSubscriptionName} (2.10), consumer subscription properties (2.10), the
 * murmur3 key hash class ({@code Murmur3Hash32}; 2.7 calls it {@code Murmur3_32Hash}) and the transaction id
 * getter. An op that needs an API the client lacks is refused with {@code InvalidArgument}, naming it.
 */
final class ClientCompat {
    private ClientCompat() {
    }

    private static Class<?> type(String... names) {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // try the next name
            }
        }
        return null;
    }

    private static Errors.Rejected missing(String what) {
        return new Errors.Rejected("InvalidArgument", "this pulsar-client release has no " + what);
    }

    private static Object call(Object target, String method, Class<?>[] types, Object... args) {
        try {
            Method m = target.getClass().getMethod(method, types);
            m.setAccessible(true);
            return m.invoke(target, args);
        } catch (NoSuchMethodException e) {
            throw missing(target.getClass().getSimpleName() + "." + method);
        } catch (ReflectiveOperationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new IllegalStateException(cause);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static void accessMode(ProducerBuilder<?> builder, String mode) {
        Class<?> modes = type("org.apache.pulsar.client.api.ProducerAccessMode");
        if (modes == null) {
            throw missing("producer access mode (ProducerAccessMode came with 2.8)");
        }
        Object value = Enum.valueOf((Class<Enum>) modes, mode);
        call(builder, "accessMode", new Class<?>[] {modes}, value);
    }

    /** A multiplier backoff ({@code MultiplierRedeliveryBackoff}) set with {@code setter} on the consumer builder. */
    static void backoff(ConsumerBuilder<?> builder, String setter, Long minDelayMs, Long maxDelayMs, double multiplier) {
        Class<?> iface = type("org.apache.pulsar.client.api.RedeliveryBackoff");
        Class<?> impl = type("org.apache.pulsar.client.impl.MultiplierRedeliveryBackoff");
        if (iface == null || impl == null) {
            throw missing("redelivery backoff (RedeliveryBackoff came with 2.10)");
        }
        try {
            Object b = impl.getMethod("builder").invoke(null);
            if (minDelayMs != null) {
                call(b, "minDelayMs", new Class<?>[] {long.class}, minDelayMs);
            }
            if (maxDelayMs != null) {
                call(b, "maxDelayMs", new Class<?>[] {long.class}, maxDelayMs);
            }
            call(b, "multiplier", new Class<?>[] {double.class}, multiplier);
            Object backoff = call(b, "build", new Class<?>[] {});
            call(builder, setter, new Class<?>[] {iface}, backoff);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** PIP-105 subscription properties (2.10): the broker keeps them only on the subscription this consumer creates. */
    static void subscriptionProperties(ConsumerBuilder<?> builder, Map<String, String> properties) {
        call(builder, "subscriptionProperties", new Class<?>[] {Map.class}, properties);
    }

    static void initialSubscriptionName(DeadLetterPolicy.DeadLetterPolicyBuilder policy, String name) {
        call(policy, "initialSubscriptionName", new Class<?>[] {String.class}, name);
    }

    static int murmur3(String key) {
        Class<?> hash = type("org.apache.pulsar.client.impl.Murmur3Hash32", "org.apache.pulsar.client.impl.Murmur3_32Hash");
        if (hash == null) {
            throw missing("murmur3 key hash");
        }
        try {
            Object instance = hash.getMethod("getInstance").invoke(null);
            return (Integer) call(instance, "makeHash", new Class<?>[] {String.class}, key);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static String txnId(Object transaction) {
        return String.valueOf(call(transaction, "getTxnID", new Class<?>[] {}));
    }
}
