package io.pulsarconformance.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.pulsar.PulsarVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Java client driver of pulsar-conformance: reads one JSON request per line on stdin, runs
 * it with the Pulsar Java client, and answers with exactly one JSON line on stdout
 * (docs/java-driver.md). Requests run one at a time on the main thread. Only protocol lines go to
 * stdout ({@code System.out} is pointed at stderr so nothing else can slip in); the client's log
 * goes to stderr through slf4j-simple. EOF on stdin or {@code shutdown} closes the run and exits 0.
 */
public final class Driver {
    private static final Logger LOG = LoggerFactory.getLogger(Driver.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final PrintStream out;
    private final Session session = new Session();
    private final StallWatch stallWatch = new StallWatch();

    private Driver(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] argv) throws Exception {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        Driver driver = new Driver(protocol);
        int code = driver.run(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
        System.exit(code);
    }

    private int run(BufferedReader in) throws Exception {
        ObjectNode ready = MAPPER.createObjectNode()
                .put("ready", true)
                .put("client_version", PulsarVersion.getVersion())
                .put("java_version", System.getProperty("java.version"));
        write(ready);
        stallWatch.start();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            if (handle(line)) {
                break;
            }
        }
        session.closeRun();
        return 0;
    }

    /** Answers one request line; true when it was {@code shutdown}. */
    private boolean handle(String line) {
        JsonNode id = null;
        String op = null;
        ObjectNode answer = MAPPER.createObjectNode();
        try {
            JsonNode request;
            try {
                request = MAPPER.readTree(line);
            } catch (Exception e) {
                throw new Errors.BadRequest("request is not JSON: " + e.getMessage());
            }
            if (request == null || !request.isObject()) {
                throw new Errors.BadRequest("request is not a JSON object: " + line);
            }
            id = request.get("id");
            JsonNode opNode = request.get("op");
            if (opNode == null || !opNode.isTextual()) {
                throw new Errors.BadRequest("request has no op name: " + line);
            }
            op = opNode.asText();
            if ("shutdown".equals(op)) {
                answer.set("id", id);
                answer.put("status", "ok");
                answer.putObject("value");
                write(answer);
                return true;
            }
            ObjectNode value = "stalls".equals(op) ? stallWatch.drain(MAPPER) : session.apply(op, request.get("args"));
            answer.set("id", id);
            answer.put("status", "ok");
            answer.set("value", value);
        } catch (Throwable t) {
            Errors.Outcome outcome = Errors.classify(t);
            answer.removeAll();
            answer.set("id", id);
            answer.put("status", outcome.status());
            if (outcome.error() != null) {
                answer.put("error", outcome.error());
            }
            answer.put("detail", outcome.detail());
            if ("driver_error".equals(outcome.status())) {
                LOG.warn("op {} failed inside the driver: {}", op, outcome.detail(), t);
            } else {
                LOG.info("op {}: {} {} {}", op, outcome.status(), outcome.error() == null ? "" : outcome.error(), outcome.detail());
            }
        }
        write(answer);
        return false;
    }

    private void write(ObjectNode message) {
        String text;
        try {
            text = MAPPER.writeValueAsString(message);
        } catch (Exception e) { // cannot happen for a tree of plain values; never leave a request unanswered
            text = "{\"id\":" + message.get("id") + ",\"status\":\"driver_error\",\"detail\":\"cannot write the answer\"}";
        }
        out.print(text);
        out.print('\n');
        out.flush();
    }
}
