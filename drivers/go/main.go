// Command driver runs pulsar-conformance trace ops with the Apache Pulsar Go client
// (github.com/apache/pulsar-client-go) over the JSON line protocol of docs/java-driver.md: a ready
// line, then one answer line per request line, in order. stdout carries protocol lines only; the
// client's log goes to stderr.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/sirupsen/logrus"
)

const clientModule = "github.com/apache/pulsar-client-go"

// clientVersion: the pulsar-client-go release this binary was built with ("0.19.0").
func clientVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == clientModule {
				if dep.Replace != nil {
					dep = dep.Replace
				}
				return strings.TrimPrefix(dep.Version, "v")
			}
		}
	}
	return "unknown"
}

func quietLogger() log.Logger {
	l := logrus.New()
	l.SetOutput(os.Stderr)
	l.SetLevel(logrus.WarnLevel)
	return log.NewLoggerWithLogrus(l)
}

func main() {
	out := bufio.NewWriter(os.Stdout)
	write := func(v any) {
		text, err := json.Marshal(v)
		if err != nil { // never leave a request unanswered
			text = []byte(`{"status":"driver_error","detail":"cannot write the answer"}`)
		}
		out.Write(text)
		out.WriteByte('\n')
		out.Flush()
	}
	write(map[string]any{"ready": true, "client_version": clientVersion(), "go_version": runtime.Version()})
	s := newSession()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			answer, stop := handle(s, line)
			write(answer)
			if stop {
				break
			}
		}
		if err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "reading requests:", err)
			}
			break
		}
	}
	s.closeRun()
}

// handle answers one request line; stop is true for shutdown.
func handle(s *session, line []byte) (answer map[string]any, stop bool) {
	var request map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&request); err != nil {
		return map[string]any{"id": nil, "status": "driver_error", "detail": "request is not a JSON object: " + err.Error()}, false
	}
	id := request["id"]
	op, ok := request["op"].(string)
	if !ok {
		return map[string]any{"id": id, "status": "driver_error", "detail": "request has no op name"}, false
	}
	if op == "shutdown" {
		return map[string]any{"id": id, "status": "ok", "value": map[string]any{}}, true
	}
	value, err := run(s, op, request["args"])
	if err != nil {
		o := classify(err)
		answer = map[string]any{"id": id, "status": o.status, "detail": o.detail}
		if o.name != "" {
			answer["error"] = o.name
		}
		fmt.Fprintf(os.Stderr, "op %s: %s %s %s\n", op, o.status, o.name, o.detail)
		return answer, false
	}
	return map[string]any{"id": id, "status": "ok", "value": value}, false
}

// run applies one op, turning a panic inside the client or the driver into a driver_error.
func run(s *session, op string, raw any) (value map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = badRequest("op '%s' panicked inside the driver: %v\n%s", op, r, debug.Stack())
		}
	}()
	return s.apply(op, raw)
}
