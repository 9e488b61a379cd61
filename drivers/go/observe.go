package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
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
		"message_id":       receivedID(msg.Topic(), msg.ID()),
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

// receivedID: a received message's id in the trace format, its partition the one its topic names. A consumer opened
// on one partition's own name ("t-partition-1") is a single-topic consumer to the Go client, which gives its ids
// partition 0 (its index among the consumer's own partitions, pulsar/consumer_impl.go); the Java and C++ clients
// read the index off the topic name, and the stored position is that partition's (live 4.0.8, 6 Dec 2026).
func receivedID(topic string, id pulsar.MessageID) []int64 {
	out := idJSON(id, strings.Contains(topic, "-partition-"))
	if i := strings.LastIndex(topic, "-partition-"); i >= 0 {
		if p, err := strconv.Atoi(topic[i+len("-partition-"):]); err == nil {
			out[2] = int64(p)
		}
	}
	return out
}
