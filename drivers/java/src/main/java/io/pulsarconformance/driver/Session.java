package io.pulsarconformance.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.BatcherBuilder;
import org.apache.pulsar.client.api.ClientBuilder;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.DeadLetterPolicy;
import org.apache.pulsar.client.api.HashingScheme;
import org.apache.pulsar.client.api.KeySharedPolicy;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageRoutingMode;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Range;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.ReaderBuilder;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionMode;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.impl.BatchMessageIdImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MultiTopicsConsumerImpl;

/**
 * One trace run on the Java client: the {@code PulsarClient}, the live handles, and what was sent
 * and received. Every op method returns the ok value or throws (see {@link Errors}).
 *
 * <p>Message references (ack, ack_cumulative, nack, reconsume_later): the {@code Message} the
 * consumer last received with that label; else the id this driver got when it sent the label;
 * else the harness's {@code message_id}; else {@code rejected OtherError}. A multi-topic consumer
 * (several topics, a pattern, or a partitioned topic) only takes a {@code TopicMessageId}: a bare
 * id is tagged with its partition's topic when the driver can tell it (its own send, or a
 * consumer of one topic), else passed as is and the client decides.
 */
final class Session {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final String PAD = "|";
    private static final long SEEK_DISCONNECT_GRACE_MS = 500;

    private PulsarClient client;
    private long operationTimeoutMs = 30_000;
    private final Map<String, ProducerHandle> producers = new HashMap<>();
    private final Map<String, ConsumerHandle> consumers = new HashMap<>();
    private final Map<String, Reader<byte[]>> readers = new HashMap<>();
    private final Map<String, Sent> sent = new LinkedHashMap<>();
    private final Map<String, Transaction> transactions = new HashMap<>();

    private record Sent(MessageId id, String ownerTopic) {
    }

    private record AsyncSend(String label, CompletableFuture<MessageId> future) {
    }

    private final class ProducerHandle {
        final String topic;
        CompletableFuture<Producer<byte[]>> creating; // set while a wait_ms creation is pending
        Producer<byte[]> producer;
        final List<AsyncSend> pending = new ArrayList<>();

        ProducerHandle(String topic) {
            this.topic = topic;
        }

        /** The producer, waiting (up to the operation timeout) for a pending creation. */
        Producer<byte[]> resolve() throws Exception {
            if (producer == null) {
                try {
                    producer = creating.get(operationTimeoutMs, TimeUnit.MILLISECONDS);
                    creating = null;
                } catch (TimeoutException e) {
                    // PLS-ACCESS-005: the op on it is never issued, so it did not act: rejected, not indeterminate
                    throw new Errors.Rejected("Timeout", "the producer creation did not complete in " + operationTimeoutMs + " ms");
                }
            }
            return producer;
        }
    }

    private record ConsumerHandle(Consumer<byte[]> consumer, List<String> topics, Map<String, Message<byte[]>> received) {
    }

    // ------------------------------------------------------------------ dispatch

    private static final Set<String> NONE = Set.of();
    private static final Set<String> OPEN = Set.of("service_url", "token", "operation_timeout_ms", "connection_timeout_ms",
            "enable_transaction");
    private static final Set<String> CREATE_PRODUCER = Set.of("producer", "topic", "name", "batching",
            "initial_sequence_id", "access_mode", "chunking", "send_timeout_ms", "router", "routing_mode",
            "batching_max_messages", "batching_max_bytes", "batching_max_delay_ms", "batching_type", "wait_ms",
            "hashing_scheme", "client", "schema");
    private static final Set<String> SEND = Set.of("producer", "payload", "data", "key", "key_bytes", "ordering_key",
            "properties", "event_time", "sequence_id", "deliver_after_ms", "deliver_at_epoch_ms", "async", "txn");
    private static final Set<String> SUBSCRIBE = Set.of("consumer", "topic", "topics", "topics_pattern",
            "subscription", "type", "initial_position", "consumer_name", "receiver_queue_size", "nack_delay_ms",
            "ack_timeout_ms", "ack_timeout_tick_ms", "ack_timeout_backoff", "start_message_id_inclusive",
            "batch_index_ack", "dead_letter", "nack_backoff", "key_shared", "enable_retry", "read_compacted",
            "subscription_mode", "priority_level", "subscription_properties", "client", "schema");
    private static final Set<String> MESSAGE_REF = Set.of("consumer", "message", "message_id", "txn");
    private static final Set<String> RECONSUME = Set.of("consumer", "message", "message_id", "delay_ms");
    private static final Set<String> SEEK = Set.of("consumer", "position", "message_id", "timestamp", "message");
    private static final Set<String> CREATE_READER = Set.of("reader", "topic", "start", "inclusive", "read_compacted", "client",
            "schema");
    private static final Set<String> BACKOFF = Set.of("min_delay_ms", "max_delay_ms", "multiplier");

    /** Runs one op; returns its ok value. */
    ObjectNode apply(String op, JsonNode raw) throws Exception {
        switch (op) {
            case "open":
                return open(Args.of(op, raw, OPEN));
            case "close_run":
                Args.of(op, raw, NONE);
                closeRun();
                return JSON.objectNode();
            case "create_producer":
                return createProducer(Args.of(op, raw, CREATE_PRODUCER));
            case "send":
                return send(Args.of(op, raw, SEND));
            case "flush":
                return flush(Args.of(op, raw, Set.of("producer")));
            case "subscribe":
                return subscribe(Args.of(op, raw, SUBSCRIBE));
            case "receive": {
                Args a = Args.of(op, raw, Set.of("consumer", "timeout_ms"));
                return receive(a);
            }
            case "send_many":
                return sendMany(Args.of(op, raw, Set.of("producer", "count", "prefix", "keys", "payload_size", "pad")));
            case "consume":
                return consume(Args.of(op, raw, Set.of("consumer", "max", "idle_ms", "ack")));
            case "ack":
            case "ack_cumulative":
            case "nack":
                return acknowledge(op, Args.of(op, raw, MESSAGE_REF));
            case "reconsume_later":
                return reconsumeLater(Args.of(op, raw, RECONSUME));
            case "redeliver_unacked": {
                Args a = Args.of(op, raw, Set.of("consumer"));
                consumer(a.str("consumer")).consumer().redeliverUnacknowledgedMessages();
                return JSON.objectNode();
            }
            case "seek":
                return seek(Args.of(op, raw, SEEK));
            case "close":
                return close(Args.of(op, raw, Set.of("handle")));
            case "unsubscribe":
                return unsubscribe(Args.of(op, raw, Set.of("consumer")));
            case "create_reader":
                return createReader(Args.of(op, raw, CREATE_READER));
            case "read_next":
                return readNext(Args.of(op, raw, Set.of("reader", "timeout_ms")));
            case "new_txn":
                return newTransaction(Args.of(op, raw, Set.of("txn", "timeout_ms")));
            case "commit_txn":
                transaction(Args.of(op, raw, Set.of("txn")).str("txn")).commit().get();
                return JSON.objectNode();
            case "abort_txn":
                transaction(Args.of(op, raw, Set.of("txn")).str("txn")).abort().get();
                return JSON.objectNode();
            default:
                throw new Errors.BadRequest("unknown op '" + op + "'");
        }
    }

    // ------------------------------------------------------------------ session ops

    private ObjectNode open(Args a) throws Exception {
        closeRun();
        ClientBuilder builder = PulsarClient.builder().serviceUrl(a.str("service_url"));
        Integer opTimeout = a.optInt("operation_timeout_ms");
        if (opTimeout != null) {
            builder.operationTimeout(opTimeout, TimeUnit.MILLISECONDS);
            operationTimeoutMs = opTimeout;
        } else {
            operationTimeoutMs = 30_000; // the client's default
        }
        Integer connectTimeout = a.optInt("connection_timeout_ms");
        if (connectTimeout != null) {
            builder.connectionTimeout(connectTimeout, TimeUnit.MILLISECONDS);
        }
        String token = a.optStr("token");
        if (token != null) {
            builder.authentication(AuthenticationFactory.token(token));
        }
        // Only when the trace uses transactions: a client with transactions enabled connects to the
        // transaction coordinator when it is built, and fails where the broker runs none.
        builder.enableTransaction(a.bool("enable_transaction", false));
        client = builder.build();
        return JSON.objectNode();
    }

    /**
     * Closes every handle (waited for: a consumer's close sends its pending grouped acks, so the next
     * run sees this one's acks done) and then the client, without waiting for the client's own shutdown:
     * PulsarClientImpl.closeAsync ends with its event loops and timers winding down, a fixed ~2 s after
     * the last handle closed (measured: 2.0 s on every run, 126 Java cases = 4 min of CI), and nothing of
     * a run depends on it. Errors are ignored; the run is forgotten.
     */
    void closeRun() {
        PulsarClient old = client;
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (ProducerHandle h : producers.values()) {
            if (h.producer != null) {
                closing.add(h.producer.closeAsync());
            }
        }
        for (ConsumerHandle h : consumers.values()) {
            closing.add(h.consumer().closeAsync());
        }
        for (Reader<byte[]> r : readers.values()) {
            closing.add(r.closeAsync());
        }
        client = null;
        producers.clear();
        consumers.clear();
        readers.clear();
        sent.clear();
        transactions.clear();
        if (old == null) {
            return;
        }
        try {
            CompletableFuture.allOf(closing.toArray(new CompletableFuture[0]))
                    .get(operationTimeoutMs + 5_000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // a handle that cannot close (a broker gone) is closed with its client below
        }
        old.closeAsync().whenComplete((ignored, error) -> {
            if (error != null) {
                try {
                    old.shutdown();
                } catch (Exception ignoredToo) {
                    // nothing more to do: the run is over
                }
            }
        });
    }

    private PulsarClient client() {
        if (client == null) {
            throw new Errors.BadRequest("no open run: send 'open' first");
        }
        return client;
    }

    // ------------------------------------------------------------------ producers

    private ObjectNode createProducer(Args a) throws Exception {
        String handle = a.str("producer");
        String topic = a.str("topic");
        ProducerBuilder<byte[]> b = client().newProducer(RawSchema.of(a, false)).topic(topic)
                .enableBatching(a.bool("batching", false))
                .enableChunking(a.bool("chunking", false));
        if (a.has("name")) {
            b.producerName(a.str("name"));
        }
        if (a.has("initial_sequence_id")) {
            b.initialSequenceId(a.lng("initial_sequence_id"));
        }
        String access = a.choice("access_mode", null, "Shared", "Exclusive", "ExclusiveWithFencing", "WaitForExclusive");
        if (access != null) {
            ClientCompat.accessMode(b, access);
        }
        if (a.has("send_timeout_ms")) {
            b.sendTimeout(a.optInt("send_timeout_ms"), TimeUnit.MILLISECONDS);
        }
        Args router = a.object("router", Set.of("hashing", "client"));
        String routingMode = a.choice("routing_mode", null, "RoundRobin", "SinglePartition");
        if (router != null) {
            // PLS-ROUTE-001: a custom router reproducing a client's scheme; keyless round robin from 0
            b.messageRoutingMode(MessageRoutingMode.CustomPartition).messageRouter(new SchemeRouter(
                    router.choice("hashing", "murmur3_32", "murmur3_32", "java_string_hash"),
                    router.choice("client", "java", "java", "cpp")));
        } else if (routingMode != null) {
            b.messageRoutingMode("SinglePartition".equals(routingMode)
                    ? MessageRoutingMode.SinglePartition : MessageRoutingMode.RoundRobinPartition);
        }
        String hashing = a.choice("hashing_scheme", null, "java_string_hash", "murmur3_32");
        if (hashing != null) {
            b.hashingScheme("murmur3_32".equals(hashing) ? HashingScheme.Murmur3_32Hash : HashingScheme.JavaStringHash);
        }
        if (a.has("batching_max_messages")) {
            b.batchingMaxMessages(a.optInt("batching_max_messages"));
        }
        if (a.has("batching_max_bytes")) {
            b.batchingMaxBytes(a.optInt("batching_max_bytes"));
        }
        if (a.has("batching_max_delay_ms")) {
            b.batchingMaxPublishDelay(a.lng("batching_max_delay_ms"), TimeUnit.MILLISECONDS);
        }
        if ("KeyBased".equals(a.choice("batching_type", "Default", "Default", "KeyBased"))) {
            b.batcherBuilder(BatcherBuilder.KEY_BASED);
        }
        ProducerHandle h = new ProducerHandle(topic);
        Long waitMs = a.optLong("wait_ms");
        if (waitMs == null) {
            h.producer = b.create();
        } else {
            CompletableFuture<Producer<byte[]>> creating = b.createAsync();
            try {
                h.producer = creating.get(Math.max(0, waitMs), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // PLS-ACCESS-005: still queued (WaitForExclusive); the next op on the handle waits
                h.creating = creating;
                producers.put(handle, h);
                return JSON.objectNode().put("pending", true);
            }
        }
        producers.put(handle, h);
        ObjectNode value = JSON.objectNode()
                .put("producer_name", h.producer.getProducerName())
                .put("last_sequence_id", h.producer.getLastSequenceId());
        if (waitMs != null) {
            value.put("pending", false);
        }
        return value;
    }

    private ObjectNode send(Args a) throws Exception {
        ProducerHandle h = producer(a.str("producer"));
        Producer<byte[]> producer = h.resolve();
        String label = a.str("payload");
        byte[] data;
        if (a.present("data")) {
            String text = a.optStr("data"); // JSON null: a null value (tombstone "null")
            data = text == null ? null : text.getBytes(StandardCharsets.UTF_8);
        } else {
            data = label.getBytes(StandardCharsets.UTF_8);
        }
        TypedMessageBuilder<byte[]> m = (a.has("txn") ? producer.newMessage(transaction(a.str("txn"))) : producer.newMessage())
                .value(data);
        if (a.has("key")) {
            m.key(a.str("key"));
        }
        if (a.has("key_bytes")) {
            // PLS-MSG-002: sent as its Base64 text, flagged partition_key_b64_encoded
            m.keyBytes(java.util.HexFormat.of().parseHex(a.str("key_bytes")));
        }
        if (a.has("ordering_key")) {
            m.orderingKey(a.str("ordering_key").getBytes(StandardCharsets.UTF_8));
        }
        Map<String, String> properties = a.optStringMap("properties");
        if (properties != null) {
            m.properties(properties);
        }
        if (a.has("event_time")) {
            m.eventTime(a.lng("event_time"));
        }
        if (a.has("sequence_id")) {
            m.sequenceId(a.lng("sequence_id"));
        }
        if (a.has("deliver_after_ms")) {
            m.deliverAfter(a.lng("deliver_after_ms"), TimeUnit.MILLISECONDS);
        }
        if (a.has("deliver_at_epoch_ms")) {
            m.deliverAt(a.lng("deliver_at_epoch_ms"));
        }
        if (a.bool("async", false)) {
            h.pending.add(new AsyncSend(label, m.sendAsync()));
            return JSON.objectNode();
        }
        MessageId id = m.send();
        sent.put(label, new Sent(id, ownerTopic(h.topic, id)));
        ObjectNode value = JSON.objectNode();
        value.set("message_id", idJson(id));
        value.put("sequence_id", producer.getLastSequenceId());
        value.put("id_text", id.toString());
        return value;
    }

    /**
     * send_many (docs/trace-format.md#bulk-ops): count async sends labelled prefix1..prefixN, keyed
     * k(i mod keys) when keys > 0, each padded as the harness pads a send's payload_size; their ids come
     * with the next flush, as an async send's do.
     */
    private ObjectNode sendMany(Args a) throws Exception {
        ProducerHandle h = producer(a.str("producer"));
        Producer<byte[]> producer = h.resolve();
        long count = a.lng("count");
        long keys = a.has("keys") ? a.lng("keys") : 0;
        long size = a.has("payload_size") ? a.lng("payload_size") : 0;
        String pad = a.has("pad") ? a.str("pad") : "|";
        String prefix = a.str("prefix");
        for (long i = 1; i <= count; i++) {
            String label = prefix + i;
            String text = label;
            int length = label.getBytes(StandardCharsets.UTF_8).length;
            if (size > length) {
                text = label + pad + ".".repeat((int) (size - length - 1));
            }
            TypedMessageBuilder<byte[]> m = producer.newMessage().value(text.getBytes(StandardCharsets.UTF_8));
            if (keys > 0) {
                m.key("k" + (i % keys));
            }
            h.pending.add(new AsyncSend(label, m.sendAsync()));
        }
        return JSON.objectNode();
    }

    /**
     * consume (docs/trace-format.md#bulk-ops): receive until max came or none came for idle_ms, acking
     * each as it comes unless ack is false; at_ms says when each came, in ms after the op began.
     */
    private ObjectNode consume(Args a) throws Exception {
        ConsumerHandle h = consumer(a.str("consumer"));
        long max = a.lng("max");
        int idle = (int) Math.min(Integer.MAX_VALUE, Math.max(1, a.lng("idle_ms")));
        boolean ack = a.bool("ack", true);
        long start = System.nanoTime();
        ArrayNode messages = JSON.arrayNode();
        ArrayNode at = JSON.arrayNode();
        String ended = "max";
        while (messages.size() < max) {
            boolean connectedBefore = h.consumer().isConnected();
            Message<byte[]> msg = h.consumer().receive(idle, TimeUnit.MILLISECONDS);
            if (msg == null) {
                ended = connectedBefore && h.consumer().isConnected() ? "idle" : "disconnected";
                break;
            }
            at.add(Math.round((System.nanoTime() - start) / 1000.0) / 1000.0);
            messages.add(take(h, msg));
            if (ack) {
                h.consumer().acknowledge(msg);
            }
        }
        ObjectNode value = JSON.objectNode();
        value.set("messages", messages);
        value.set("at_ms", at);
        value.put("ended", ended);
        return value;
    }

    private ObjectNode flush(Args a) throws Exception {
        ProducerHandle h = producer(a.str("producer"));
        Producer<byte[]> producer = h.resolve();
        Exception flushError = null;
        try {
            producer.flush();
        } catch (Exception e) { // a failed earlier send; the per-message results below say which
            flushError = e;
        }
        List<AsyncSend> slots = new ArrayList<>(h.pending);
        h.pending.clear();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(operationTimeoutMs);
        ObjectNode ids = JSON.objectNode();
        ObjectNode texts = JSON.objectNode();
        List<String> failed = new ArrayList<>();
        for (AsyncSend slot : slots) {
            try {
                long left = Math.max(0, deadline - System.nanoTime());
                MessageId id = slot.future().get(left, TimeUnit.NANOSECONDS);
                ids.set(slot.label(), idJson(id));
                texts.put(slot.label(), id.toString());
                sent.put(slot.label(), new Sent(id, ownerTopic(h.topic, id)));
            } catch (TimeoutException e) {
                throw new Errors.Indeterminate("flush: no answer for " + slot.label() + " in " + operationTimeoutMs + " ms");
            } catch (ExecutionException e) {
                failed.add(slot.label() + ": " + Errors.describe(Errors.unwrap(e)));
            }
        }
        if (!failed.isEmpty()) {
            throw new Errors.Rejected("OtherError", "async sends failed: " + String.join("; ", failed));
        }
        if (flushError != null) {
            throw flushError;
        }
        ObjectNode value = JSON.objectNode();
        value.set("message_ids", ids);
        value.set("id_texts", texts);
        return value;
    }

    // ------------------------------------------------------------------ consumers

    private ObjectNode subscribe(Args a) throws Exception {
        String handle = a.str("consumer");
        ConsumerBuilder<byte[]> b = client().newConsumer(RawSchema.of(a, true)).subscriptionName(a.str("subscription"));
        List<String> topics;
        switch (a.exactlyOne("topic", "topics", "topics_pattern")) {
            case "topic":
                topics = List.of(a.str("topic"));
                b.topic(topics.get(0));
                break;
            case "topics":
                topics = a.optStringList("topics");
                b.topics(topics);
                break;
            default:
                topics = List.of();
                b.topicsPattern(Pattern.compile(a.str("topics_pattern")));
        }
        String type = a.choice("type", "Exclusive", "Exclusive", "Shared", "Failover", "Key_Shared");
        b.subscriptionType(SubscriptionType.valueOf(type));
        b.subscriptionInitialPosition(SubscriptionInitialPosition.valueOf(
                a.choice("initial_position", "Latest", "Latest", "Earliest")));
        if (a.has("consumer_name")) {
            b.consumerName(a.str("consumer_name"));
        }
        if (a.has("receiver_queue_size")) {
            b.receiverQueueSize(a.optInt("receiver_queue_size"));
        }
        if (a.has("nack_delay_ms")) {
            b.negativeAckRedeliveryDelay(a.lng("nack_delay_ms"), TimeUnit.MILLISECONDS);
        }
        if (a.has("ack_timeout_ms")) {
            b.ackTimeout(a.lng("ack_timeout_ms"), TimeUnit.MILLISECONDS); // < 1000 ms: IllegalArgumentException
        }
        if (a.has("ack_timeout_tick_ms")) {
            b.ackTimeoutTickTime(a.lng("ack_timeout_tick_ms"), TimeUnit.MILLISECONDS);
        }
        if (a.has("ack_timeout_backoff")) {
            backoff(b, "ackTimeoutRedeliveryBackoff", a.object("ack_timeout_backoff", BACKOFF));
        }
        if (a.has("nack_backoff")) {
            backoff(b, "negativeAckRedeliveryBackoff", a.object("nack_backoff", BACKOFF));
        }
        if (a.bool("start_message_id_inclusive", false)) {
            b.startMessageIdInclusive();
        }
        if (a.has("batch_index_ack")) {
            b.enableBatchIndexAcknowledgment(a.bool("batch_index_ack", false));
        }
        Args dead = a.object("dead_letter", Set.of("max_redeliver_count", "topic", "initial_subscription", "retry_topic"));
        if (dead != null) {
            DeadLetterPolicy.DeadLetterPolicyBuilder policy = DeadLetterPolicy.builder();
            if (dead.has("max_redeliver_count")) {
                policy.maxRedeliverCount(dead.optInt("max_redeliver_count"));
            }
            if (dead.has("topic")) {
                policy.deadLetterTopic(dead.str("topic"));
            }
            if (dead.has("retry_topic")) {
                policy.retryLetterTopic(dead.str("retry_topic"));
            }
            if (dead.has("initial_subscription")) {
                ClientCompat.initialSubscriptionName(policy, dead.str("initial_subscription"));
            }
            b.deadLetterPolicy(policy.build());
        }
        Args keyShared = a.object("key_shared", Set.of("mode", "allow_out_of_order", "ranges"));
        if (keyShared != null && "Key_Shared".equals(type)) { // as the Python target: ignored on other types
            KeySharedPolicy policy;
            if ("Sticky".equals(keyShared.choice("mode", "AutoSplit", "AutoSplit", "Sticky"))) {
                List<Range> ranges = new ArrayList<>();
                List<int[]> given = keyShared.optRanges("ranges");
                for (int[] r : given == null ? List.<int[]>of() : given) {
                    ranges.add(Range.of(r[0], r[1]));
                }
                policy = KeySharedPolicy.stickyHashRange().ranges(ranges);
            } else {
                policy = KeySharedPolicy.autoSplitHashRange();
            }
            policy.setAllowOutOfOrderDelivery(keyShared.bool("allow_out_of_order", false));
            b.keySharedPolicy(policy);
        }
        if (a.has("enable_retry")) {
            b.enableRetry(a.bool("enable_retry", false));
        }
        if (a.has("read_compacted")) {
            b.readCompacted(a.bool("read_compacted", false));
        }
        String mode = a.choice("subscription_mode", null, "Durable", "NonDurable");
        if (mode != null) {
            b.subscriptionMode(SubscriptionMode.valueOf(mode));
        }
        if (a.has("priority_level")) {
            b.priorityLevel(a.optInt("priority_level"));
        }
        Map<String, String> subscriptionProperties = a.optStringMap("subscription_properties");
        if (subscriptionProperties != null) {
            ClientCompat.subscriptionProperties(b, subscriptionProperties);
        }
        Consumer<byte[]> consumer = b.subscribe();
        consumers.put(handle, new ConsumerHandle(consumer, topics, new HashMap<>()));
        return JSON.objectNode();
    }

    private static void backoff(ConsumerBuilder<?> builder, String setter, Args a) {
        Double multiplier = a.optDouble("multiplier");
        ClientCompat.backoff(builder, setter, a.has("min_delay_ms") ? a.lng("min_delay_ms") : null,
                a.has("max_delay_ms") ? a.lng("max_delay_ms") : null, multiplier == null ? 2.0 : multiplier);
    }

    private ObjectNode receive(Args a) throws Exception {
        ConsumerHandle h = consumer(a.str("consumer"));
        int timeout = timeoutMs(a);
        boolean connectedBefore = h.consumer().isConnected();
        Message<byte[]> msg = h.consumer().receive(timeout, TimeUnit.MILLISECONDS);
        if (msg == null) {
            return nothingOrUnknown(connectedBefore && h.consumer().isConnected());
        }
        ObjectNode value = JSON.objectNode();
        value.set("message", take(h, msg));
        return value;
    }

    /** What a receive or consume took, observed, and kept under its label for a later ack or nack of it. */
    private ObjectNode take(ConsumerHandle h, Message<byte[]> msg) throws Exception {
        ObjectNode observed = observe(msg);
        String label = observed.get("payload").asText();
        h.received().put(label, msg);
        if (label.isEmpty()) { // a tombstone: also reachable by the label its send had here
            String sentLabel = labelById(msg.getMessageId());
            if (sentLabel != null) {
                h.received().put(sentLabel, msg);
            }
        }
        return observed;
    }

    private ObjectNode acknowledge(String op, Args a) throws Exception {
        ConsumerHandle h = consumer(a.str("consumer"));
        Object ref = reference(h, a);
        Consumer<byte[]> c = h.consumer();
        if (a.has("txn")) {
            Transaction txn = transaction(a.str("txn"));
            MessageId id = ref instanceof Message<?> m ? m.getMessageId() : (MessageId) ref;
            switch (op) {
                case "ack":
                    c.acknowledgeAsync(id, txn).get();
                    break;
                case "ack_cumulative":
                    c.acknowledgeCumulativeAsync(id, txn).get();
                    break;
                default:
                    throw new Errors.BadRequest(op + " takes no txn: only ack and ack_cumulative are transactional");
            }
            return JSON.objectNode();
        }
        switch (op) {
            case "ack":
                if (ref instanceof Message<?> m) {
                    c.acknowledge(m);
                } else {
                    c.acknowledge((MessageId) ref);
                }
                break;
            case "ack_cumulative":
                if (ref instanceof Message<?> m) {
                    c.acknowledgeCumulative(m);
                } else {
                    c.acknowledgeCumulative((MessageId) ref);
                }
                break;
            default:
                if (ref instanceof Message<?> m) {
                    c.negativeAcknowledge(m);
                } else {
                    c.negativeAcknowledge((MessageId) ref);
                }
        }
        return JSON.objectNode();
    }

    private ObjectNode reconsumeLater(Args a) throws Exception {
        ConsumerHandle h = consumer(a.str("consumer"));
        long delay = a.lng("delay_ms");
        Object ref = reference(h, a);
        if (!(ref instanceof Message<?> m)) {
            throw new Errors.Rejected("OtherError", "reconsume_later: consumer '" + a.str("consumer") + "' has not received '"
                    + a.str("message") + "'; the Java client's reconsumeLater takes a received Message, not an id");
        }
        h.consumer().reconsumeLater(m, delay, TimeUnit.MILLISECONDS);
        return JSON.objectNode();
    }

    private ObjectNode seek(Args a) throws Exception {
        ConsumerHandle h = consumer(a.str("consumer"));
        Consumer<byte[]> c = h.consumer();
        long disconnectedBefore = c.getLastDisconnectedTimestamp();
        switch (a.exactlyOne("position", "message_id", "timestamp", "message")) {
            case "position":
                c.seek("earliest".equals(a.choice("position", null, "earliest", "latest")) ? MessageId.earliest : MessageId.latest);
                break;
            case "timestamp":
                c.seek(a.lng("timestamp"));
                break;
            case "message_id":
                c.seek(forConsumer(h, buildId(a.optMessageId("message_id")), null));
                break;
            default: {
                Sent s = sent.get(a.str("message"));
                if (s == null) {
                    throw new Errors.Rejected("OtherError", "message '" + a.str("message") + "' was not sent in this run");
                }
                c.seek(forConsumer(h, s.id(), s.ownerTopic()));
            }
        }
        awaitReconnection(c, disconnectedBefore);
        return JSON.objectNode();
    }

    /**
     * After a seek the broker disconnects the consumer and the Java client reconnects, but its
     * {@code seek()} may return before that (the C++ client's returns after): wait, up to the
     * operation timeout, until the disconnection was seen and the consumer is connected again, so
     * that the next receive's "nothing arrived" is not spoilt by the reconnection. A disconnection
     * not seen within {@link #SEEK_DISCONNECT_GRACE_MS} is taken as none coming.
     */
    private void awaitReconnection(Consumer<byte[]> c, long disconnectedBefore) throws InterruptedException {
        long start = System.nanoTime();
        long graceEnd = start + TimeUnit.MILLISECONDS.toNanos(SEEK_DISCONNECT_GRACE_MS);
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(operationTimeoutMs);
        while (System.nanoTime() < deadline) {
            boolean disconnected = c.getLastDisconnectedTimestamp() != disconnectedBefore;
            if (c.isConnected() && (disconnected || System.nanoTime() >= graceEnd)) {
                return;
            }
            Thread.sleep(2);
        }
    }

    private ObjectNode unsubscribe(Args a) throws Exception {
        String name = a.str("consumer");
        ConsumerHandle h = consumer(name);
        h.consumer().unsubscribe();
        consumers.remove(name);
        try {
            h.consumer().close();
        } catch (Exception ignored) {
            // already closed by unsubscribe
        }
        return JSON.objectNode();
    }

    // ------------------------------------------------------------------ readers

    private ObjectNode createReader(Args a) throws Exception {
        String handle = a.str("reader");
        MessageId start;
        JsonNode given = a.get("start");
        if (given == null) {
            throw new Errors.BadRequest("op 'create_reader': missing required argument 'start'");
        }
        if (given.isTextual()) {
            start = "earliest".equals(a.choice("start", null, "earliest", "latest")) ? MessageId.earliest : MessageId.latest;
        } else {
            Args s = a.object("start", Set.of("message_id", "message"));
            if (s.exactlyOne("message_id", "message").equals("message_id")) {
                start = buildId(s.optMessageId("message_id"));
            } else {
                Sent known = sent.get(s.str("message"));
                if (known == null) {
                    throw new Errors.Rejected("OtherError", "message '" + s.str("message") + "' was not sent in this run");
                }
                start = known.id();
            }
        }
        ReaderBuilder<byte[]> b = client().newReader(RawSchema.of(a, true)).topic(a.str("topic")).startMessageId(start);
        if (a.bool("inclusive", false)) {
            b.startMessageIdInclusive();
        }
        if (a.bool("read_compacted", false)) {
            b.readCompacted(true);
        }
        readers.put(handle, b.create());
        return JSON.objectNode();
    }

    private ObjectNode readNext(Args a) throws Exception {
        Reader<byte[]> reader = readers.get(a.str("reader"));
        if (reader == null) {
            throw unknownHandle("reader", a.str("reader"));
        }
        int timeout = timeoutMs(a);
        boolean connectedBefore = reader.isConnected();
        Message<byte[]> msg = reader.readNext(timeout, TimeUnit.MILLISECONDS);
        if (msg == null) {
            return nothingOrUnknown(connectedBefore && reader.isConnected());
        }
        ObjectNode value = JSON.objectNode();
        value.set("message", observe(msg));
        return value;
    }

    // ------------------------------------------------------------------ any handle

    private ObjectNode close(Args a) throws Exception {
        String name = a.str("handle");
        ProducerHandle p = producers.get(name);
        if (p != null) {
            Producer<byte[]> producer = p.resolve();
            producers.remove(name);
            producer.close();
            return JSON.objectNode();
        }
        Reader<byte[]> reader = readers.remove(name);
        if (reader != null) {
            reader.close();
            return JSON.objectNode();
        }
        ConsumerHandle c = consumers.remove(name);
        if (c != null) {
            c.consumer().close();
            return JSON.objectNode();
        }
        throw unknownHandle("handle", name);
    }

    // ------------------------------------------------------------------ transactions

    private ObjectNode newTransaction(Args a) throws Exception {
        String name = a.str("txn");
        if (transactions.containsKey(name)) {
            throw new Errors.BadRequest("transaction '" + name + "' is already open in this run; name each new_txn anew");
        }
        var b = client().newTransaction();
        if (a.has("timeout_ms")) {
            b.withTransactionTimeout(a.lng("timeout_ms"), TimeUnit.MILLISECONDS);
        }
        Transaction txn = b.build().get();
        transactions.put(name, txn);
        ObjectNode value = JSON.objectNode();
        value.put("txn_id", ClientCompat.txnId(txn));
        return value;
    }

    private Transaction transaction(String name) {
        Transaction txn = transactions.get(name);
        if (txn == null) {
            throw unknownHandle("txn", name);
        }
        return txn;
    }

    // ------------------------------------------------------------------ helpers

    private ProducerHandle producer(String name) {
        ProducerHandle h = producers.get(name);
        if (h == null) {
            throw unknownHandle("producer", name);
        }
        return h;
    }

    private ConsumerHandle consumer(String name) {
        ConsumerHandle h = consumers.get(name);
        if (h == null) {
            throw unknownHandle("consumer", name);
        }
        return h;
    }

    private RuntimeException unknownHandle(String kind, String name) {
        if (client == null) {
            return new Errors.BadRequest("no open run: send 'open' first");
        }
        return new Errors.Rejected("UnknownHandle", "no live " + kind + " named '" + name + "': a bug in the trace");
    }

    private static int timeoutMs(Args a) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1, a.lng("timeout_ms")));
    }

    /** An empty receive proves nothing was deliverable only if the handle stayed connected. */
    private static ObjectNode nothingOrUnknown(boolean stayedConnected) {
        if (!stayedConnected) {
            throw new Errors.Indeterminate("nothing received while the consumer was disconnected from the broker: "
                    + "a message may have been withheld by the outage, not by the broker's rules");
        }
        ObjectNode value = JSON.objectNode();
        value.putNull("message");
        return value;
    }

    /** The received Message, else the sent id, else the harness's id (docs/java-driver.md). */
    private Object reference(ConsumerHandle h, Args a) {
        String label = a.str("message");
        Message<byte[]> received = h.received().get(label);
        if (received != null) {
            return received;
        }
        Sent s = sent.get(label);
        if (s != null) {
            return forConsumer(h, s.id(), s.ownerTopic());
        }
        long[] given = a.optMessageId("message_id");
        if (given != null) {
            return forConsumer(h, buildId(given), null);
        }
        throw new Errors.Rejected("OtherError", "message '" + label + "' was neither received by this consumer nor sent in this run, "
                + "and the harness gave no message_id");
    }

    /** A bare id as a multi-topic consumer takes it: tagged with its topic when that is known. */
    private MessageId forConsumer(ConsumerHandle h, MessageId id, String owner) {
        if (!(h.consumer() instanceof MultiTopicsConsumerImpl) || MessageIds.namesTopic(id)) {
            return id;
        }
        if (owner == null) {
            Sent same = sent.get(labelById(id));
            owner = same == null ? null : same.ownerTopic();
        }
        if (owner == null && h.topics().size() == 1) {
            owner = ownerTopic(h.topics().get(0), id);
        }
        return owner == null ? id : MessageIds.withTopic(owner, id);
    }

    private String labelById(MessageId id) {
        if (id == null) {
            return null;
        }
        ArrayNode wanted = idJson(id);
        for (Map.Entry<String, Sent> e : sent.entrySet()) {
            if (idJson(e.getValue().id()).equals(wanted)) {
                return e.getKey();
            }
        }
        return null;
    }

    /** The topic a message id belongs to: the partition's own name for a partition. */
    private static String ownerTopic(String topic, MessageId id) {
        int partition = (int) MessageIds.parts(id)[2];
        return partition >= 0 && !topic.contains("-partition-") ? topic + "-partition-" + partition : topic;
    }

    /** {@code [ledger, entry, partition, batch_index]}; batch_index -1 when not batched. */
    static ArrayNode idJson(MessageId id) {
        ArrayNode out = JSON.arrayNode();
        for (long part : MessageIds.parts(id)) {
            out.add(part);
        }
        return out;
    }

    /** A message id from the harness: a batch message id when batch_index >= 0. */
    static MessageId buildId(long[] id) {
        if (id[3] >= 0) {
            return new BatchMessageIdImpl(id[0], id[1], (int) id[2], (int) id[3]);
        }
        return new MessageIdImpl(id[0], id[1], (int) id[2]);
    }

    /** The {@code <message>} observation of docs/java-driver.md. */
    static ObjectNode observe(Message<byte[]> msg) {
        byte[] data = msg.getData(); // null for a null value
        String text = data == null ? "" : new String(data, StandardCharsets.UTF_8);
        int bar = text.indexOf(PAD);
        ObjectNode o = JSON.objectNode();
        o.put("payload", bar >= 0 ? text.substring(0, bar) : text);
        o.set("message_id", idJson(msg.getMessageId()));
        o.put("topic", msg.getTopicName());
        // as the Python target: an empty key reads as no key
        o.put("key", msg.hasKey() && msg.getKey() != null && !msg.getKey().isEmpty() ? msg.getKey() : null);
        if (msg.hasBase64EncodedKey()) {
            // PLS-MSG-002: a key given as bytes: getKey() is its Base64 text, getKeyBytes() the bytes
            o.put("key_bytes", java.util.HexFormat.of().formatHex(msg.getKeyBytes()));
        }
        byte[] orderingKey = msg.hasOrderingKey() ? msg.getOrderingKey() : null;
        o.put("ordering_key", orderingKey == null || orderingKey.length == 0 ? null : new String(orderingKey, StandardCharsets.UTF_8));
        ObjectNode properties = o.putObject("properties");
        msg.getProperties().forEach(properties::put);
        o.put("event_time", msg.getEventTime());
        o.put("publish_time", msg.getPublishTime());
        o.put("redelivery_count", msg.getRedeliveryCount());
        o.put("producer_name", msg.getProducerName());
        // the broker's version of the schema the message was sent with (an 8-byte big-endian long);
        // null when it carries none (a producer without a schema). Never getValue(): no decoding.
        byte[] version = msg.getSchemaVersion();
        if (version == null || version.length == 0) {
            o.putNull("schema_version");
        } else if (version.length == Long.BYTES) {
            o.put("schema_version", ByteBuffer.wrap(version).getLong());
        } else {
            throw new IllegalStateException("schema version of " + version.length + " bytes (expected 8): "
                    + java.util.HexFormat.of().formatHex(version));
        }
        return o;
    }
}
