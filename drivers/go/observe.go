package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

// observe: the <message> observation of docs/java-driver.md (the same for every driver).
func observe(msg pulsar.Message) (map[string]any, error) {
	text := string(msg.Payload())
	if bar := strings.Index(text, pad); bar >= 0 {
		text = text[:bar]
	}
	properties := map[string]any{}
	for k, v := range msg.Properties() {
		properties[k] = v
	}
	var key, orderingKey any
	if msg.Key() != "" { // as the Python target: an empty key reads as no key
		key = msg.Key()
	}
	if msg.OrderingKey() != "" {
		orderingKey = msg.OrderingKey()
	}
	var eventTime int64
	if t := msg.EventTime(); !t.IsZero() && t.UnixMilli() > 0 {
		eventTime = t.UnixMilli()
	}
	o := map[string]any{
		"payload":          text,
		"message_id":       idJSON(msg.ID(), strings.Contains(msg.Topic(), "-partition-")),
		"topic":            msg.Topic(),
		"key":              key,
		"ordering_key":     orderingKey,
		"properties":       properties,
		"event_time":       eventTime,
		"publish_time":     millis(msg.PublishTime()),
		"redelivery_count": msg.RedeliveryCount(),
		"producer_name":    msg.ProducerName(),
		"schema_version":   nil,
	}
	// the broker's version of the schema the message was sent with (an 8-byte big-endian long)
	if version := msg.SchemaVersion(); len(version) == 8 {
		o["schema_version"] = int64(binary.BigEndian.Uint64(version))
	} else if len(version) != 0 {
		return nil, fmt.Errorf("schema version of %d bytes (expected 8): %s", len(version), hex.EncodeToString(version))
	}
	return o, nil
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
