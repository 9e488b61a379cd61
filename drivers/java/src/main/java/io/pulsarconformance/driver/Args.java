package io.pulsarconformance.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The arguments of one request, checked as they are read: an unknown name, a wrong JSON type, a
 * missing required argument or a value outside its choices is a {@link Errors.BadRequest}
 * ({@code driver_error}), so a trace argument the driver does not implement is never ignored.
 * A JSON {@code null} counts as absent (except where an op reads it itself, as send's data).
 */
final class Args {
    private final String where;
    private final JsonNode node;

    private Args(String where, JsonNode node) {
        this.where = where;
        this.node = node;
    }

    /** The args object of op {@code op}, refusing names outside {@code allowed}. */
    static Args of(String op, JsonNode node, Set<String> allowed) {
        return checked("op '" + op + "'", node == null || node.isNull() ? null : node, allowed);
    }

    /** A nested object argument ({@code dead_letter}, {@code key_shared} ...) of this request. */
    Args object(String name, Set<String> allowed) {
        JsonNode value = get(name);
        if (value == null) {
            return null;
        }
        return checked(where + " argument '" + name + "'", value, allowed);
    }

    private static Args checked(String where, JsonNode node, Set<String> allowed) {
        if (node == null) {
            return new Args(where, com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode());
        }
        if (!node.isObject()) {
            throw new Errors.BadRequest(where + ": args must be a JSON object, got " + node);
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!allowed.contains(name)) {
                throw new Errors.BadRequest(where + ": unknown argument '" + name + "' (known: "
                        + String.join(", ", new java.util.TreeSet<>(allowed)) + ")");
            }
        }
        return new Args(where, node);
    }

    /** Where these arguments are, for messages: {@code op 'subscribe' argument 'schema'}. */
    String where() {
        return where;
    }

    boolean has(String name) {
        return get(name) != null;
    }

    /** The raw value, or null when absent or JSON null. */
    JsonNode get(String name) {
        JsonNode v = node.get(name);
        return v == null || v.isNull() ? null : v;
    }

    /** Whether the key is present at all (even as JSON null). */
    boolean present(String name) {
        return node.has(name);
    }

    String str(String name) {
        String v = optStr(name);
        if (v == null) {
            throw missing(name);
        }
        return v;
    }

    String optStr(String name) {
        JsonNode v = get(name);
        if (v == null) {
            return null;
        }
        if (!v.isTextual()) {
            throw wrong(name, "a string", v);
        }
        return v.asText();
    }

    String choice(String name, String dflt, String... choices) {
        String v = optStr(name);
        if (v == null) {
            return dflt;
        }
        for (String c : choices) {
            if (c.equals(v)) {
                return v;
            }
        }
        throw new Errors.BadRequest(where + ": argument '" + name + "' is '" + v + "'; allowed: " + String.join(", ", choices));
    }

    long lng(String name) {
        Long v = optLong(name);
        if (v == null) {
            throw missing(name);
        }
        return v;
    }

    Long optLong(String name) {
        JsonNode v = get(name);
        if (v == null) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw wrong(name, "an integer", v);
        }
        return v.asLong();
    }

    Integer optInt(String name) {
        Long v = optLong(name);
        if (v == null) {
            return null;
        }
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw wrong(name, "a 32-bit integer", get(name));
        }
        return v.intValue();
    }

    Double optDouble(String name) {
        JsonNode v = get(name);
        if (v == null) {
            return null;
        }
        if (!v.isNumber()) {
            throw wrong(name, "a number", v);
        }
        return v.asDouble();
    }

    boolean bool(String name, boolean dflt) {
        JsonNode v = get(name);
        if (v == null) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw wrong(name, "a boolean", v);
        }
        return v.asBoolean();
    }

    Map<String, String> optStringMap(String name) {
        JsonNode v = get(name);
        if (v == null) {
            return null;
        }
        if (!v.isObject()) {
            throw wrong(name, "an object of strings", v);
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw wrong(name + "." + e.getKey(), "a string", e.getValue());
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    List<String> optStringList(String name) {
        JsonNode v = get(name);
        if (v == null) {
            return null;
        }
        if (!v.isArray()) {
            throw wrong(name, "a list of strings", v);
        }
        List<String> out = new ArrayList<>();
        for (JsonNode item : v) {
            if (!item.isTextual()) {
                throw wrong(name, "a list of strings", v);
            }
            out.add(item.asText());
        }
        return out;
    }

    /** A message id {@code [ledger, entry, partition, batch_index]}, or null when absent. */
    long[] optMessageId(String name) {
        JsonNode v = get(name);
        if (v == null) {
            return null;
        }
        if (!v.isArray() || v.size() != 4) {
            throw wrong(name, "a message id [ledger, entry, partition, batch_index]", v);
        }
        long[] out = new long[4];
        for (int i = 0; i < 4; i++) {
            if (!v.get(i).isIntegralNumber() || !v.get(i).canConvertToLong()) {
                throw wrong(name, "a message id [ledger, entry, partition, batch_index]", v);
            }
            out[i] = v.get(i).asLong();
        }
        return out;
    }

    /** Key_Shared sticky ranges {@code [[start, end], ...]}. */
    List<int[]> optRanges(String name) {
        JsonNode v = get(name);
        if (v == null) {
            return null;
        }
        String expected = "a list of [start, end] integer pairs";
        if (!v.isArray()) {
            throw wrong(name, expected, v);
        }
        List<int[]> out = new ArrayList<>();
        for (JsonNode pair : v) {
            if (!pair.isArray() || pair.size() != 2 || !pair.get(0).canConvertToInt() || !pair.get(1).canConvertToInt()
                    || !pair.get(0).isIntegralNumber() || !pair.get(1).isIntegralNumber()) {
                throw wrong(name, expected, v);
            }
            out.add(new int[] {pair.get(0).asInt(), pair.get(1).asInt()});
        }
        return out;
    }

    /** Exactly one of {@code names} is present; returns it. */
    String exactlyOne(String... names) {
        String found = null;
        for (String n : names) {
            if (has(n)) {
                if (found != null) {
                    throw new Errors.BadRequest(where + ": give only one of " + String.join(", ", names) + " (got " + found + " and " + n + ")");
                }
                found = n;
            }
        }
        if (found == null) {
            throw new Errors.BadRequest(where + ": give one of " + String.join(", ", names));
        }
        return found;
    }

    private Errors.BadRequest missing(String name) {
        return new Errors.BadRequest(where + ": missing required argument '" + name + "'");
    }

    private Errors.BadRequest wrong(String name, String expected, JsonNode v) {
        return new Errors.BadRequest(where + ": argument '" + name + "' must be " + expected + ", got " + v);
    }
}
