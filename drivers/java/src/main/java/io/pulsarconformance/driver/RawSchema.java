package io.pulsarconformance.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Set;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.schema.KeyValueEncodingType;
import org.apache.pulsar.common.schema.SchemaInfo;
import org.apache.pulsar.common.schema.SchemaType;

/**
 * A schema that registers a chosen {@link SchemaInfo} with the broker but leaves the payload as
 * the harness's raw bytes (encode and decode are the identity). The broker never decodes a
 * payload, so what a trace judges (registration, compatibility, schema versions) is the
 * SchemaInfo alone; the payload stays the label the harness matches messages by.
 *
 * <p>{@link #of} turns a trace op's {@code schema} argument into the {@code Schema<byte[]>} the
 * producer, consumer or reader is built with (docs/java-driver.md, Schemas).
 */
final class RawSchema implements Schema<byte[]> {
    private static final Set<String> FIELDS = Set.of("type", "definition", "key", "value");

    private final SchemaInfo info;

    RawSchema(SchemaInfo info) {
        this.info = info;
    }

    @Override
    public byte[] encode(byte[] message) {
        return message;
    }

    @Override
    public byte[] decode(byte[] bytes) {
        return bytes;
    }

    @Override
    public byte[] decode(byte[] bytes, byte[] schemaVersion) {
        return bytes;
    }

    @Override
    public SchemaInfo getSchemaInfo() {
        return info;
    }

    @Override
    public Schema<byte[]> clone() {
        return this; // immutable
    }

    @Override
    public String toString() {
        return "RawSchema(" + info + ")";
    }

    /**
     * The schema a {@code create_producer} ({@code consumer} false) or a {@code subscribe} /
     * {@code create_reader} ({@code consumer} true) is built with: {@code Schema.BYTES} when the
     * argument is absent or BYTES. AUTO_CONSUME gives the client's own
     * {@code Schema.AUTO_CONSUME()}, typed {@code Schema<byte[]>} here: the driver reads a message
     * only through {@code getData()}, never {@code getValue()}, so the raw bytes are what it sees.
     */
    @SuppressWarnings("unchecked")
    static Schema<byte[]> of(Args op, boolean consumer) {
        Args s = op.object("schema", FIELDS);
        if (s == null) {
            return Schema.BYTES;
        }
        if ("AUTO_CONSUME".equals(s.optStr("type"))) {
            if (!consumer) {
                throw new Errors.BadRequest(s.where() + ": AUTO_CONSUME is a consumer's schema "
                        + "(subscribe, create_reader), not a producer's");
            }
            onlyFields(s, "AUTO_CONSUME");
            return (Schema<byte[]>) (Schema<?>) Schema.AUTO_CONSUME();
        }
        return build(s, true);
    }

    private static Schema<byte[]> build(Args s, boolean whole) {
        String where = s.where();
        String type = s.optStr("type");
        if (type == null) {
            throw new Errors.BadRequest(where + ": missing 'type'");
        }
        switch (type) {
            case "BYTES":
                onlyFields(s, type);
                return Schema.BYTES; // no schema sent, as the client does for Schema.BYTES
            case "STRING":
                onlyFields(s, type);
                return new RawSchema(Schema.STRING.getSchemaInfo());
            case "INT32":
                onlyFields(s, type);
                return new RawSchema(Schema.INT32.getSchemaInfo());
            case "INT64":
                onlyFields(s, type);
                return new RawSchema(Schema.INT64.getSchemaInfo());
            case "BOOLEAN":
                onlyFields(s, type);
                return new RawSchema(Schema.BOOL.getSchemaInfo());
            case "DOUBLE":
                onlyFields(s, type);
                return new RawSchema(Schema.DOUBLE.getSchemaInfo());
            case "AVRO":
            case "JSON": {
                onlyFields(s, type, "definition");
                JsonNode definition = s.get("definition");
                if (definition == null) {
                    throw new Errors.BadRequest(where + ": " + type + " needs 'definition' (the Avro schema as JSON text)");
                }
                if (!definition.isTextual()) {
                    throw new Errors.BadRequest(where + ": " + type + " 'definition' must be a string (the Avro schema "
                            + "as JSON text, passed verbatim), got " + definition);
                }
                return new RawSchema(SchemaInfo.builder()
                        .name("")
                        .type(SchemaType.valueOf(type))
                        .schema(definition.asText().getBytes(StandardCharsets.UTF_8))
                        .properties(new HashMap<>())
                        .build());
            }
            case "KEY_VALUE": {
                if (!whole) {
                    throw new Errors.BadRequest(where + ": a KEY_VALUE half cannot be KEY_VALUE");
                }
                onlyFields(s, type, "key", "value");
                Schema<byte[]> key = half(s, "key");
                Schema<byte[]> value = half(s, "value");
                // the SchemaInfo the client sends for Schema.KeyValue(key, value, INLINE)
                return new RawSchema(Schema.KeyValue(key, value, KeyValueEncodingType.INLINE).getSchemaInfo());
            }
            case "AUTO_CONSUME":
                throw new Errors.BadRequest(where + ": a KEY_VALUE half cannot be AUTO_CONSUME");
            default:
                throw new Errors.BadRequest(where + ": unknown schema type '" + type + "' (known: BYTES, STRING, "
                        + "INT32, INT64, BOOLEAN, DOUBLE, AVRO, JSON, KEY_VALUE, AUTO_CONSUME)");
        }
    }

    private static Schema<byte[]> half(Args kv, String part) {
        Args s = kv.object(part, FIELDS);
        if (s == null) {
            throw new Errors.BadRequest(kv.where() + ": KEY_VALUE needs '" + part + "' (a schema)");
        }
        return build(s, false);
    }

    /** Refuses the fields of {@link #FIELDS} that {@code type} does not take. */
    private static void onlyFields(Args s, String type, String... taken) {
        Set<String> allowed = Set.of(taken);
        for (String f : FIELDS) {
            if (!"type".equals(f) && !allowed.contains(f) && s.present(f)) {
                throw new Errors.BadRequest(s.where() + ": " + type + " takes no '" + f + "'"
                        + (taken.length == 0 ? "" : " (only " + String.join(", ", taken) + ")"));
            }
        }
    }
}
