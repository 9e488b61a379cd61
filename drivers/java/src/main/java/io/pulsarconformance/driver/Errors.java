package io.pulsarconformance.driver;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * Outcomes other than ok, and how a Java exception becomes one (docs/java-driver.md, Errors).
 *
 * <p>An exception is classified by the simple names of its class and its superclasses, most
 * specific first, so {@code ServiceNotReadyException} (a {@code LookupException}) and both
 * {@code PulsarClientException.TimeoutException} and {@code java.util.concurrent.TimeoutException}
 * are found. An {@code IllegalArgumentException} or {@code NullPointerException} thrown by the
 * driver's own code is a driver bug ({@code driver_error}), not the client's refusal.
 */
final class Errors {
    private Errors() {
    }

    /** A request the driver cannot run as given: unknown op, malformed args, no open run. */
    static final class BadRequest extends RuntimeException {
        BadRequest(String detail) {
            super(detail);
        }
    }

    /** A {@code rejected} outcome decided by the driver itself (an unknown handle, an unknown label). */
    static final class Rejected extends RuntimeException {
        final String error;

        Rejected(String error, String detail) {
            super(detail);
            this.error = error;
        }
    }

    /** An {@code indeterminate} outcome decided by the driver itself. */
    static final class Indeterminate extends RuntimeException {
        Indeterminate(String detail) {
            super(detail);
        }
    }

    private static final Map<String, String> REJECTIONS = Map.ofEntries(
            Map.entry("ConsumerBusyException", "ConsumerBusy"),
            Map.entry("ProducerBusyException", "ProducerBusy"),
            Map.entry("ProducerFencedException", "ProducerFenced"),
            Map.entry("ConsumerAssignException", "ConsumerAssignError"),
            Map.entry("InvalidConfigurationException", "InvalidConfiguration"),
            Map.entry("InvalidTopicNameException", "InvalidTopicName"),
            Map.entry("NotAllowedException", "NotAllowedError"),
            Map.entry("TopicDoesNotExistException", "TopicNotFound"),
            Map.entry("SubscriptionNotFoundException", "SubscriptionNotFound"),
            Map.entry("InvalidMessageException", "MessageTooBig"),
            Map.entry("AlreadyClosedException", "AlreadyClosed"),
            Map.entry("TransactionConflictException", "TransactionConflict"),
            Map.entry("InvalidTxnStatusException", "InvalidTxnStatus"),
            Map.entry("TransactionNotFoundException", "TransactionNotFound"),
            Map.entry("CoordinatorNotFoundException", "TransactionCoordinatorNotFound"),
            Map.entry("TransactionHasOperationFailedException", "TransactionHasOperationFailed"),
            Map.entry("IncompatibleSchemaException", "IncompatibleSchema"),
            Map.entry("IllegalArgumentException", "InvalidArgument"),
            Map.entry("NullPointerException", "InvalidArgument"));

    private static final Set<String> INDETERMINATE = Set.of(
            "TimeoutException", "ConnectException", "LookupException", "BrokerMetadataException",
            "BrokerPersistenceException", "ServiceNotReadyException");

    /** What a failed op answers: {status, error?, detail} (without the id). */
    record Outcome(String status, String error, String detail) {
    }

    static Outcome classify(Throwable thrown) {
        Throwable t = unwrap(thrown);
        if (t instanceof BadRequest) {
            return new Outcome("driver_error", null, t.getMessage());
        }
        if (t instanceof Rejected r) {
            return new Outcome("rejected", r.error, r.getMessage());
        }
        if (t instanceof Indeterminate) {
            return new Outcome("indeterminate", null, t.getMessage());
        }
        String text = describe(t);
        if ((t instanceof IllegalArgumentException || t instanceof NullPointerException
                || !(t instanceof Exception)) && thrownByDriver(t)) {
            return new Outcome("driver_error", null, "bug in the driver: " + text);
        }
        if (!(t instanceof Exception)) { // an Error (NoClassDefFoundError ...): never a verdict
            return new Outcome("driver_error", null, text);
        }
        for (Class<?> c = t.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            String name = c.getSimpleName();
            String error = REJECTIONS.get(name);
            if (error != null) {
                return new Outcome("rejected", error, message(t));
            }
            if (INDETERMINATE.contains(name)) {
                return new Outcome("indeterminate", null, text);
            }
        }
        if (t instanceof RuntimeException && thrownByDriver(t)) {
            return new Outcome("driver_error", null, "bug in the driver: " + text);
        }
        return new Outcome("rejected", "OtherError", text);
    }

    /** The exception that says what happened: futures and plain wrappers peeled off. */
    static Throwable unwrap(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            boolean wrapper = t instanceof CompletionException || t instanceof ExecutionException
                    || (t.getClass() == PulsarClientException.class
                        && (t.getCause() instanceof PulsarClientException
                            || t.getCause() instanceof IllegalArgumentException
                            || t.getCause() instanceof java.util.concurrent.TimeoutException
                            // a transactional send on an ended transaction: the client wraps the
                            // future's failure (an InvalidTxnStatusException) in a bare exception
                            || t.getCause() instanceof ExecutionException
                            || t.getCause() instanceof CompletionException));
            if (!wrapper) {
                break;
            }
            t = t.getCause();
        }
        return t;
    }

    static String describe(Throwable t) {
        return t.getClass().getSimpleName() + ": " + message(t);
    }

    private static String message(Throwable t) {
        String m = t.getMessage();
        return m == null ? t.getClass().getName() : m;
    }

    private static boolean thrownByDriver(Throwable t) {
        StackTraceElement[] trace = t.getStackTrace();
        return trace.length > 0 && trace[0].getClassName().startsWith(Errors.class.getPackageName() + ".");
    }
}
