package main

import (
	"github.com/apache/pulsar-client-go/pulsar"
)

// schemaOf: the Go schema a handle is built with for the trace's `schema` (docs/java-driver.md#schemas);
// nil: none (BYTES). Payloads stay the harness's label bytes: the driver sends ProducerMessage.Payload
// (never Value), so no schema encodes anything, and it never decodes a payload.
func schemaOf(a *args, consuming bool) (pulsar.Schema, error) {
	spec, err := a.object("schema", "type", "definition", "key", "value")
	if err != nil || spec == nil {
		return nil, err
	}
	kind, err := spec.str("type")
	if err != nil {
		return nil, err
	}
	switch kind {
	case "BYTES":
		return nil, nil
	case "STRING":
		return pulsar.NewStringSchema(nil), nil
	case "INT32":
		return pulsar.NewInt32Schema(nil), nil
	case "INT64":
		return pulsar.NewInt64Schema(nil), nil
	case "DOUBLE":
		return pulsar.NewDoubleSchema(nil), nil
	case "AVRO", "JSON":
		definition, err := spec.str("definition")
		if err != nil {
			return nil, err
		}
		// the plain constructors panic on a definition the client cannot parse; these refuse it
		var s pulsar.Schema
		if kind == "AVRO" {
			s, err = pulsar.NewAvroSchemaWithValidation(definition, nil)
		} else {
			s, err = pulsar.NewJSONSchemaWithValidation(definition, nil)
		}
		if err != nil {
			return nil, rejected("InvalidArgument", "the Go client refuses the %s definition itself: %v", kind, err)
		}
		return s, nil
	case "BOOLEAN":
		return nil, notInGoClient("BOOLEAN schema")
	case "KEY_VALUE":
		return nil, notInGoClient("KEY_VALUE schema")
	case "AUTO_CONSUME":
		if !consuming {
			return nil, badRequest("op '%s': AUTO_CONSUME is a consumer's or reader's schema", a.op)
		}
		return nil, notInGoClient("AUTO_CONSUME schema")
	}
	return nil, badRequest("op '%s': unknown schema type %q", a.op, kind)
}
