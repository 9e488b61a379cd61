package io.pulsarconformance.driver;

import java.lang.reflect.Method;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.TopicMessageIdImpl;

/**
 * Message ids across client releases. {@code MessageIdAdv} and {@code TopicMessageId} came with the
 * 3.x clients (PIP-229; apache/pulsar PR #19414); a 2.x client has only the impl classes, and its
 * {@code TopicMessageIdImpl} wraps the id it names. Reading the parts by method name keeps one driver
 * source for clients 2.10 to 4.x (a 2.10.5 build failed on exactly those two types, 27 Nov 2026).
 */
final class MessageIds {
    private static final Class<?> TOPIC_MESSAGE_ID = load("org.apache.pulsar.client.api.TopicMessageId");

    private MessageIds() {
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            return null;  // a 2.x client
        }
    }

    /** Whether {@code id} already names its topic (what a multi-topic consumer's ack takes). */
    static boolean namesTopic(MessageId id) {
        return TOPIC_MESSAGE_ID != null ? TOPIC_MESSAGE_ID.isInstance(id) : id instanceof TopicMessageIdImpl;
    }

    /** {@code id} tagged with the topic (or partition) {@code owner} it belongs to. */
    static MessageId withTopic(String owner, MessageId id) {
        try {
            if (TOPIC_MESSAGE_ID != null) {
                return (MessageId) TOPIC_MESSAGE_ID.getMethod("create", String.class, MessageId.class).invoke(null, owner, id);
            }
            String topic = owner.replaceFirst("-partition-\\d+$", "");
            return TopicMessageIdImpl.class.getConstructor(String.class, String.class, MessageId.class)
                    .newInstance(owner, topic, id);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot tag message id " + id + " with topic " + owner + ": " + e, e);
        }
    }

    /** {@code [ledger, entry, partition, batch_index]}, batch_index -1 when the message was not batched. */
    static long[] parts(MessageId id) {
        Object inner = id;
        if (method(inner, "getLedgerId") == null && method(inner, "getInnerMessageId") != null) {
            inner = call(inner, "getInnerMessageId");  // a 2.x TopicMessageIdImpl
        }
        if (method(inner, "getLedgerId") == null) {
            throw new IllegalStateException("message id of unexpected class " + id.getClass().getName() + ": " + id);
        }
        long batch = method(inner, "getBatchIndex") == null ? -1 : ((Number) call(inner, "getBatchIndex")).longValue();
        return new long[] {((Number) call(inner, "getLedgerId")).longValue(), ((Number) call(inner, "getEntryId")).longValue(),
            ((Number) call(inner, "getPartitionIndex")).longValue(), batch};
    }

    private static Method method(Object target, String name) {
        try {
            return target.getClass().getMethod(name);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static Object call(Object target, String name) {
        try {
            return target.getClass().getMethod(name).invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + name + " of message id " + target + ": " + e, e);
        }
    }
}
