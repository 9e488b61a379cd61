package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

const pad = "|"

// session is one trace run on the Go client: the client, the live handles, and what was sent and
// received (docs/go-driver.md). Every op returns its ok value or an error (see errors.go).
type session struct {
	client    pulsar.Client
	opTimeout time.Duration
	producers map[string]*producerHandle
	consumers map[string]*consumerHandle
	readers   map[string]pulsar.Reader
	sent      map[string]sentMessage
	sentOrder []string
	txns      map[string]pulsar.Transaction
}

type sentMessage struct {
	id    pulsar.MessageID
	owner string // the (partition) topic the message is stored on
}

type asyncSend struct {
	label string
	done  chan sendResult
}

type sendResult struct {
	id  pulsar.MessageID
	err error
}

type producerHandle struct {
	topic       string
	partitioned bool
	producer    pulsar.Producer
	creating    chan createResult // set while a wait_ms creation is pending
	pending     []asyncSend
}

type createResult struct {
	producer pulsar.Producer
	err      error
}

type consumerHandle struct {
	consumer pulsar.Consumer
	topics   []string
	received map[string]pulsar.Message
	retry    bool
}

func newSession() *session {
	s := &session{}
	s.forget()
	return s
}

func (s *session) forget() {
	s.producers = map[string]*producerHandle{}
	s.consumers = map[string]*consumerHandle{}
	s.readers = map[string]pulsar.Reader{}
	s.sent = map[string]sentMessage{}
	s.sentOrder = nil
	s.txns = map[string]pulsar.Transaction{}
}

var (
	argsOpen           = []string{"service_url", "token", "operation_timeout_ms", "connection_timeout_ms", "enable_transaction"}
	argsCreateProducer = []string{"producer", "topic", "name", "batching", "initial_sequence_id", "access_mode", "chunking",
		"send_timeout_ms", "router", "routing_mode", "batching_max_messages", "batching_max_bytes", "batching_max_delay_ms",
		"batching_type", "wait_ms", "hashing_scheme", "client", "schema"}
	argsSend = []string{"producer", "payload", "data", "key", "key_bytes", "ordering_key", "properties", "event_time",
		"sequence_id", "deliver_after_ms", "deliver_at_epoch_ms", "async", "txn"}
	argsSubscribe = []string{"consumer", "topic", "topics", "topics_pattern", "subscription", "type", "initial_position",
		"consumer_name", "receiver_queue_size", "nack_delay_ms", "ack_timeout_ms", "ack_timeout_tick_ms", "ack_timeout_backoff",
		"start_message_id_inclusive", "batch_index_ack", "dead_letter", "nack_backoff", "key_shared", "enable_retry",
		"read_compacted", "subscription_mode", "priority_level", "subscription_properties", "client", "schema"}
	argsMessageRef   = []string{"consumer", "message", "message_id", "txn"}
	argsReconsume    = []string{"consumer", "message", "message_id", "delay_ms"}
	argsSeek         = []string{"consumer", "position", "message_id", "timestamp", "message"}
	argsCreateReader = []string{"reader", "topic", "start", "inclusive", "read_compacted", "client", "schema"}
)

// opSpec: the arguments an op takes and what runs it.
type opSpec struct {
	args []string
	run  func(s *session, op string, a *args) (map[string]any, error)
}

func on(f func(*session, *args) (map[string]any, error)) func(*session, string, *args) (map[string]any, error) {
	return func(s *session, _ string, a *args) (map[string]any, error) { return f(s, a) }
}

var ops = map[string]opSpec{
	"create_producer":   {argsCreateProducer, on((*session).createProducer)},
	"send":              {argsSend, on((*session).send)},
	"flush":             {[]string{"producer"}, on((*session).flush)},
	"subscribe":         {argsSubscribe, on((*session).subscribe)},
	"receive":           {[]string{"consumer", "timeout_ms"}, on((*session).receive)},
	"send_many":         {[]string{"producer", "count", "prefix", "keys", "payload_size", "pad"}, on((*session).sendMany)},
	"consume":           {[]string{"consumer", "max", "idle_ms", "ack"}, on((*session).consume)},
	"ack":               {argsMessageRef, (*session).acknowledge},
	"ack_cumulative":    {argsMessageRef, (*session).acknowledge},
	"nack":              {argsMessageRef, (*session).acknowledge},
	"reconsume_later":   {argsReconsume, on((*session).reconsumeLater)},
	"redeliver_unacked": {[]string{"consumer"}, on((*session).redeliverUnacked)},
	"seek":              {argsSeek, on((*session).seek)},
	"close":             {[]string{"handle"}, on((*session).close)},
	"unsubscribe":       {[]string{"consumer"}, on((*session).unsubscribe)},
	"create_reader":     {argsCreateReader, on((*session).createReader)},
	"read_next":         {[]string{"reader", "timeout_ms"}, on((*session).readNext)},
	"new_txn":           {[]string{"txn", "timeout_ms"}, on((*session).newTxn)},
	"commit_txn":        {[]string{"txn"}, (*session).endTxn},
	"abort_txn":         {[]string{"txn"}, (*session).endTxn},
}

// apply runs one op and returns its ok value.
func (s *session) apply(op string, raw any) (map[string]any, error) {
	switch op {
	case "open":
		a, err := newArgs(op, raw, argsOpen...)
		if err != nil {
			return nil, err
		}
		return s.open(a)
	case "close_run":
		if _, err := newArgs(op, raw); err != nil {
			return nil, err
		}
		s.closeRun()
		return map[string]any{}, nil
	}
	spec, known := ops[op]
	if !known {
		return nil, badRequest("unknown op '%s'", op)
	}
	if s.client == nil {
		return nil, badRequest("no open run: send 'open' first")
	}
	a, err := newArgs(op, raw, spec.args...)
	if err != nil {
		return nil, err
	}
	return spec.run(s, op, a)
}

func (s *session) redeliverUnacked(a *args) (map[string]any, error) {
	if _, err := s.consumer(a); err != nil {
		return nil, err
	}
	// pulsar.Consumer has no RedeliverUnackedMessages (only the internal partition consumer has one)
	return nil, notInGoClient("redeliverUnacknowledgedMessages on its Consumer")
}

// ------------------------------------------------------------------ session ops

func (s *session) open(a *args) (map[string]any, error) {
	s.closeRun()
	url, err := a.str("service_url")
	if err != nil {
		return nil, err
	}
	opts := pulsar.ClientOptions{URL: url, OperationTimeout: 30 * time.Second, Logger: quietLogger()}
	if d, ok, err := a.optMillis("operation_timeout_ms"); err != nil {
		return nil, err
	} else if ok {
		opts.OperationTimeout = d
	}
	if d, ok, err := a.optMillis("connection_timeout_ms"); err != nil {
		return nil, err
	} else if ok {
		opts.ConnectionTimeout = d
	}
	if token, err := a.optStr("token"); err != nil {
		return nil, err
	} else if token != nil {
		opts.Authentication = pulsar.NewAuthenticationToken(*token)
	}
	if opts.EnableTransaction, err = a.boolean("enable_transaction", false); err != nil {
		return nil, err
	}
	client, err := pulsar.NewClient(opts)
	if err != nil {
		return nil, err
	}
	s.client = client
	s.opTimeout = opts.OperationTimeout
	return map[string]any{}, nil
}

// closeRun closes every handle and the client (errors ignored) and forgets the run.
func (s *session) closeRun() {
	if s.client == nil {
		s.forget()
		return
	}
	done := make(chan struct{})
	go func() {
		for _, p := range s.producers {
			if p.producer != nil {
				p.producer.Close()
			}
		}
		for _, c := range s.consumers {
			c.consumer.Close()
		}
		for _, r := range s.readers {
			r.Close()
		}
		s.client.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(s.opTimeout + 5*time.Second):
	}
	s.client = nil
	s.forget()
}

// ------------------------------------------------------------------ producers

func (s *session) createProducer(a *args) (map[string]any, error) {
	handle, err := a.str("producer")
	if err != nil {
		return nil, err
	}
	topic, err := a.str("topic")
	if err != nil {
		return nil, err
	}
	opts := pulsar.ProducerOptions{Topic: topic, DisableBatching: true}
	batching, err := a.boolean("batching", false)
	if err != nil {
		return nil, err
	}
	opts.DisableBatching = !batching
	if opts.EnableChunking, err = a.boolean("chunking", false); err != nil {
		return nil, err
	}
	if name, err := a.optStr("name"); err != nil {
		return nil, err
	} else if name != nil {
		opts.Name = *name
	}
	if a.has("initial_sequence_id") {
		return nil, notInGoClient("initial sequence id option on its producer")
	}
	access, err := a.choice("access_mode", "", "Shared", "Exclusive", "ExclusiveWithFencing", "WaitForExclusive")
	if err != nil {
		return nil, err
	}
	switch access {
	case "Exclusive":
		opts.ProducerAccessMode = pulsar.ProducerAccessModeExclusive
	case "WaitForExclusive":
		opts.ProducerAccessMode = pulsar.ProducerAccessModeWaitForExclusive
	case "ExclusiveWithFencing":
		return nil, notInGoClient("ExclusiveWithFencing access mode")
	}
	if d, ok, err := a.optMillis("send_timeout_ms"); err != nil {
		return nil, err
	} else if ok {
		opts.SendTimeout = d
	}
	router, err := a.object("router", "hashing", "client")
	if err != nil {
		return nil, err
	}
	if router != nil {
		hashing, err := router.choice("hashing", "murmur3_32", "murmur3_32", "java_string_hash")
		if err != nil {
			return nil, err
		}
		flavour, err := router.choice("client", "java", "java", "cpp")
		if err != nil {
			return nil, err
		}
		opts.MessageRouter = schemeRouter(hashing, flavour)
	}
	if a.has("routing_mode") {
		if _, err := a.choice("routing_mode", "", "RoundRobin", "SinglePartition"); err != nil {
			return nil, err
		}
		return nil, notInGoClient("routing mode option on its producer (its default router is round robin)")
	}
	hashing, err := a.choice("hashing_scheme", "", "java_string_hash", "murmur3_32")
	if err != nil {
		return nil, err
	}
	if hashing == "murmur3_32" {
		opts.HashingScheme = pulsar.Murmur3_32Hash
	} else if hashing == "java_string_hash" {
		opts.HashingScheme = pulsar.JavaStringHash
	}
	if a.has("batching_max_messages") {
		n, err := a.int64("batching_max_messages")
		if err != nil {
			return nil, err
		}
		opts.BatchingMaxMessages = uint(n)
	}
	if a.has("batching_max_bytes") {
		n, err := a.int64("batching_max_bytes")
		if err != nil {
			return nil, err
		}
		opts.BatchingMaxSize = uint(n)
	}
	if d, ok, err := a.optMillis("batching_max_delay_ms"); err != nil {
		return nil, err
	} else if ok {
		opts.BatchingMaxPublishDelay = d
	}
	if kind, err := a.choice("batching_type", "Default", "Default", "KeyBased"); err != nil {
		return nil, err
	} else if kind == "KeyBased" {
		opts.BatcherBuilderType = pulsar.KeyBasedBatchBuilder
	}
	if opts.Schema, err = schemaOf(a, false); err != nil {
		return nil, err
	}
	partitions, err := s.client.TopicPartitions(topic)
	if err != nil {
		return nil, err
	}
	h := &producerHandle{topic: topic, partitioned: len(partitions) > 1 || len(partitions) == 1 && partitions[0] != topic}
	created := make(chan createResult, 1)
	go func() {
		p, err := s.client.CreateProducer(opts)
		created <- createResult{p, err}
	}()
	if a.has("wait_ms") {
		ms, err := a.int64("wait_ms")
		if err != nil {
			return nil, err
		}
		select {
		case r := <-created:
			if r.err != nil {
				return nil, r.err
			}
			h.producer = r.producer
		case <-time.After(time.Duration(max(ms, 0)) * time.Millisecond):
			h.creating = created // PLS-ACCESS-005: still queued (WaitForExclusive); the next op on it waits
			s.producers[handle] = h
			return map[string]any{"pending": true}, nil
		}
	} else {
		r := <-created
		if r.err != nil {
			return nil, r.err
		}
		h.producer = r.producer
	}
	s.producers[handle] = h
	value := map[string]any{"producer_name": h.producer.Name(), "last_sequence_id": h.producer.LastSequenceID()}
	if a.has("wait_ms") {
		value["pending"] = false
	}
	return value, nil
}

func (s *session) producer(a *args) (*producerHandle, error) {
	name, err := a.str("producer")
	if err != nil {
		return nil, err
	}
	h, ok := s.producers[name]
	if !ok {
		return nil, unknownHandle("producer", name)
	}
	if h.producer == nil {
		select {
		case r := <-h.creating:
			if r.err != nil {
				return nil, r.err
			}
			h.producer, h.creating = r.producer, nil
		case <-time.After(s.opTimeout):
			// PLS-ACCESS-005: the op on it is never issued, so it did not act: rejected, not indeterminate
			return nil, rejected("Timeout", "the producer creation did not complete in %s", s.opTimeout)
		}
	}
	return h, nil
}

func (s *session) send(a *args) (map[string]any, error) {
	h, err := s.producer(a)
	if err != nil {
		return nil, err
	}
	label, err := a.str("payload")
	if err != nil {
		return nil, err
	}
	msg := &pulsar.ProducerMessage{Payload: []byte(label)}
	if a.present("data") {
		text, err := a.optStr("data")
		if err != nil {
			return nil, err
		}
		if text == nil {
			return nil, notInGoClient("null message value (ProducerMessage has no null-value flag)")
		}
		msg.Payload = []byte(*text)
	}
	if a.present("key_bytes") {
		// PLS-MSG-002: Java's keyBytes sends Base64 text flagged partition_key_b64_encoded; Go has no such flag
		return nil, notInGoClient("binary partition key (ProducerMessage.Key is a string, sent without the Base64 flag)")
	}
	if key, err := a.optStr("key"); err != nil {
		return nil, err
	} else if key != nil {
		msg.Key = *key
	}
	if key, err := a.optStr("ordering_key"); err != nil {
		return nil, err
	} else if key != nil {
		msg.OrderingKey = *key
	}
	if msg.Properties, err = a.stringMap("properties"); err != nil {
		return nil, err
	}
	if a.has("event_time") {
		ms, err := a.int64("event_time")
		if err != nil {
			return nil, err
		}
		msg.EventTime = time.UnixMilli(ms)
	}
	if a.has("sequence_id") {
		id, err := a.int64("sequence_id")
		if err != nil {
			return nil, err
		}
		msg.SequenceID = &id
	}
	if d, ok, err := a.optMillis("deliver_after_ms"); err != nil {
		return nil, err
	} else if ok {
		msg.DeliverAfter = d
	}
	if a.has("deliver_at_epoch_ms") {
		ms, err := a.int64("deliver_at_epoch_ms")
		if err != nil {
			return nil, err
		}
		msg.DeliverAt = time.UnixMilli(ms)
	}
	if a.has("txn") {
		txn, err := s.txn(a)
		if err != nil {
			return nil, err
		}
		msg.Transaction = txn
	}
	async, err := a.boolean("async", false)
	if err != nil {
		return nil, err
	}
	if async {
		done := make(chan sendResult, 1)
		h.producer.SendAsync(context.Background(), msg, func(id pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			done <- sendResult{id, err}
		})
		h.pending = append(h.pending, asyncSend{label, done})
		return map[string]any{}, nil
	}
	id, err := h.producer.Send(context.Background(), msg)
	if err != nil {
		return nil, err
	}
	s.remember(label, id, h.topic)
	return map[string]any{"message_id": idJSON(id, h.partitioned), "sequence_id": h.producer.LastSequenceID(), "id_text": id.String()}, nil
}

// sendMany (docs/trace-format.md#bulk-ops): count async sends labelled prefix1..prefixN, keyed k(i mod keys)
// when keys > 0, each padded as the harness pads a send's payload_size; their ids come with the next flush.
func (s *session) sendMany(a *args) (map[string]any, error) {
	h, err := s.producer(a)
	if err != nil {
		return nil, err
	}
	prefix, err := a.str("prefix")
	if err != nil {
		return nil, err
	}
	count, err := a.int64("count")
	if err != nil {
		return nil, err
	}
	var keys, size int64
	if a.has("keys") {
		if keys, err = a.int64("keys"); err != nil {
			return nil, err
		}
	}
	if a.has("payload_size") {
		if size, err = a.int64("payload_size"); err != nil {
			return nil, err
		}
	}
	padText := pad
	if a.has("pad") {
		if padText, err = a.str("pad"); err != nil {
			return nil, err
		}
	}
	for i := int64(1); i <= count; i++ {
		label := fmt.Sprintf("%s%d", prefix, i)
		text := label
		if size > int64(len(label)) {
			text = label + padText + strings.Repeat(".", int(size-int64(len(label))-1))
		}
		msg := &pulsar.ProducerMessage{Payload: []byte(text)}
		if keys > 0 {
			msg.Key = fmt.Sprintf("k%d", i%keys)
		}
		done := make(chan sendResult, 1)
		h.producer.SendAsync(context.Background(), msg, func(id pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			done <- sendResult{id, err}
		})
		h.pending = append(h.pending, asyncSend{label, done})
	}
	return map[string]any{}, nil
}

// consume (docs/trace-format.md#bulk-ops): receive until max came or none came for idle_ms, acking each as it
// comes unless ack is false; at_ms says when each came, in ms after the op began.
func (s *session) consume(a *args) (map[string]any, error) {
	h, err := s.consumer(a)
	if err != nil {
		return nil, err
	}
	limit, err := a.int64("max")
	if err != nil {
		return nil, err
	}
	idleMs, err := a.int64("idle_ms")
	if err != nil {
		return nil, err
	}
	ack, err := a.boolean("ack", true)
	if err != nil {
		return nil, err
	}
	idle := time.Duration(math.Max(1, float64(idleMs))) * time.Millisecond
	start := time.Now()
	messages := []any{}
	at := []any{}
	ended := "max"
	for int64(len(messages)) < limit {
		ctx, cancel := context.WithTimeout(context.Background(), idle)
		msg, err := h.consumer.Receive(ctx)
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				ended = "idle"
				break
			}
			return nil, err
		}
		at = append(at, math.Round(float64(time.Since(start).Microseconds()))/1000.0)
		observed, err := s.take(h, msg)
		if err != nil {
			return nil, err
		}
		messages = append(messages, observed)
		if ack {
			if err := h.consumer.Ack(msg); err != nil {
				return nil, err
			}
		}
	}
	return map[string]any{"messages": messages, "at_ms": at, "ended": ended}, nil
}

func (s *session) flush(a *args) (map[string]any, error) {
	h, err := s.producer(a)
	if err != nil {
		return nil, err
	}
	flushErr := h.producer.Flush()
	pending := h.pending
	h.pending = nil
	deadline := time.After(s.opTimeout)
	ids := map[string]any{}
	texts := map[string]any{}
	var failed []string
	for _, p := range pending {
		select {
		case r := <-p.done:
			if r.err != nil {
				failed = append(failed, p.label+": "+r.err.Error())
				continue
			}
			ids[p.label] = idJSON(r.id, h.partitioned)
			texts[p.label] = r.id.String()
			s.remember(p.label, r.id, h.topic)
		case <-deadline:
			return nil, indeterminate("flush: no answer for %s in %s", p.label, s.opTimeout)
		}
	}
	if len(failed) > 0 {
		return nil, rejected("OtherError", "async sends failed: %s", strings.Join(failed, "; "))
	}
	if flushErr != nil {
		return nil, flushErr
	}
	return map[string]any{"message_ids": ids, "id_texts": texts}, nil
}

func (s *session) remember(label string, id pulsar.MessageID, topic string) {
	if _, seen := s.sent[label]; !seen {
		s.sentOrder = append(s.sentOrder, label)
	}
	s.sent[label] = sentMessage{id, ownerTopic(topic, id)}
}

// ------------------------------------------------------------------ consumers

func (s *session) subscribe(a *args) (map[string]any, error) {
	handle, err := a.str("consumer")
	if err != nil {
		return nil, err
	}
	opts := pulsar.ConsumerOptions{}
	if opts.SubscriptionName, err = a.str("subscription"); err != nil {
		return nil, err
	}
	var topics []string
	which, err := a.exactlyOne("topic", "topics", "topics_pattern")
	if err != nil {
		return nil, err
	}
	switch which {
	case "topic":
		if opts.Topic, err = a.str("topic"); err != nil {
			return nil, err
		}
		topics = []string{opts.Topic}
	case "topics":
		if topics, err = a.stringList("topics"); err != nil {
			return nil, err
		}
		opts.Topics = topics
	default:
		if opts.TopicsPattern, err = a.str("topics_pattern"); err != nil {
			return nil, err
		}
		if _, err := regexp.Compile(opts.TopicsPattern); err != nil {
			return nil, badRequest("op 'subscribe': topics_pattern does not compile: %v", err)
		}
	}
	kind, err := a.choice("type", "Exclusive", "Exclusive", "Shared", "Failover", "Key_Shared")
	if err != nil {
		return nil, err
	}
	opts.Type = map[string]pulsar.SubscriptionType{"Exclusive": pulsar.Exclusive, "Shared": pulsar.Shared,
		"Failover": pulsar.Failover, "Key_Shared": pulsar.KeyShared}[kind]
	position, err := a.choice("initial_position", "Latest", "Latest", "Earliest")
	if err != nil {
		return nil, err
	}
	if position == "Earliest" {
		opts.SubscriptionInitialPosition = pulsar.SubscriptionPositionEarliest
	}
	if name, err := a.optStr("consumer_name"); err != nil {
		return nil, err
	} else if name != nil {
		opts.Name = *name
	}
	if a.has("receiver_queue_size") {
		n, err := a.int64("receiver_queue_size")
		if err != nil {
			return nil, err
		}
		if n == 0 {
			opts.EnableZeroQueueConsumer = true
		} else {
			opts.ReceiverQueueSize = int(n)
		}
	}
	if d, ok, err := a.optMillis("nack_delay_ms"); err != nil {
		return nil, err
	} else if ok {
		opts.NackRedeliveryDelay = d
	}
	for _, k := range []string{"ack_timeout_ms", "ack_timeout_tick_ms", "ack_timeout_backoff"} {
		if a.has(k) {
			return nil, notInGoClient("ack timeout (" + k + ")")
		}
	}
	if a.has("priority_level") {
		return nil, notInGoClient("consumer priority level")
	}
	backoff, err := a.object("nack_backoff", "min_delay_ms", "max_delay_ms", "multiplier")
	if err != nil {
		return nil, err
	}
	if backoff != nil {
		policy, err := multiplierBackoff(backoff)
		if err != nil {
			return nil, err
		}
		opts.NackBackoffPolicy = policy
	}
	if opts.StartMessageIDInclusive, err = a.boolean("start_message_id_inclusive", false); err != nil {
		return nil, err
	}
	if opts.EnableBatchIndexAcknowledgment, err = a.boolean("batch_index_ack", false); err != nil {
		return nil, err
	}
	dead, err := a.object("dead_letter", "max_redeliver_count", "topic", "initial_subscription", "retry_topic")
	if err != nil {
		return nil, err
	}
	if dead != nil {
		policy := &pulsar.DLQPolicy{}
		if dead.has("max_redeliver_count") {
			n, err := dead.int64("max_redeliver_count")
			if err != nil {
				return nil, err
			}
			if n < 0 || n > math.MaxUint32 {
				return nil, rejected("InvalidArgument", "max_redeliver_count %d is not a uint32 (DLQPolicy.MaxDeliveries)", n)
			}
			// the trace's count is given as the Go client's MaxDeliveries, as a Go user would set it: the two
			// clients count differently (deliveries vs redeliveries), which the model's Go profile says
			policy.MaxDeliveries = uint32(n)
		}
		if topic, err := dead.optStr("topic"); err != nil {
			return nil, err
		} else if topic != nil {
			policy.DeadLetterTopic = *topic
		}
		if topic, err := dead.optStr("retry_topic"); err != nil {
			return nil, err
		} else if topic != nil {
			policy.RetryLetterTopic = *topic
		}
		if sub, err := dead.optStr("initial_subscription"); err != nil {
			return nil, err
		} else if sub != nil {
			policy.InitialSubscriptionName = *sub
		}
		opts.DLQ = policy
	}
	keyShared, err := a.object("key_shared", "mode", "allow_out_of_order", "ranges")
	if err != nil {
		return nil, err
	}
	if keyShared != nil && kind == "Key_Shared" { // as the other targets: ignored on other types
		mode, err := keyShared.choice("mode", "AutoSplit", "AutoSplit", "Sticky")
		if err != nil {
			return nil, err
		}
		policy := &pulsar.KeySharedPolicy{Mode: pulsar.KeySharedPolicyModeAutoSplit}
		if mode == "Sticky" {
			ranges, err := keyShared.ranges("ranges")
			if err != nil {
				return nil, err
			}
			if policy, err = pulsar.NewKeySharedPolicySticky(ranges); err != nil {
				return nil, rejected("InvalidArgument", "%v", err)
			}
		}
		if policy.AllowOutOfOrderDelivery, err = keyShared.boolean("allow_out_of_order", false); err != nil {
			return nil, err
		}
		opts.KeySharedPolicy = policy
	}
	if opts.RetryEnable, err = a.boolean("enable_retry", false); err != nil {
		return nil, err
	}
	if opts.ReadCompacted, err = a.boolean("read_compacted", false); err != nil {
		return nil, err
	}
	if mode, err := a.choice("subscription_mode", "", "Durable", "NonDurable"); err != nil {
		return nil, err
	} else if mode == "NonDurable" {
		opts.SubscriptionMode = pulsar.NonDurable
	}
	if opts.SubscriptionProperties, err = a.stringMap("subscription_properties"); err != nil {
		return nil, err
	}
	if opts.Schema, err = schemaOf(a, true); err != nil {
		return nil, err
	}
	c, err := s.client.Subscribe(opts)
	if err != nil {
		return nil, err
	}
	s.consumers[handle] = &consumerHandle{consumer: c, topics: topics, received: map[string]pulsar.Message{}, retry: opts.RetryEnable}
	return map[string]any{}, nil
}

func (s *session) consumer(a *args) (*consumerHandle, error) {
	name, err := a.str("consumer")
	if err != nil {
		return nil, err
	}
	h, ok := s.consumers[name]
	if !ok {
		return nil, unknownHandle("consumer", name)
	}
	return h, nil
}

func (s *session) receive(a *args) (map[string]any, error) {
	h, err := s.consumer(a)
	if err != nil {
		return nil, err
	}
	timeout, err := timeoutOf(a)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	msg, err := h.consumer.Receive(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return map[string]any{"message": nil}, nil
		}
		return nil, err
	}
	observed, err := s.take(h, msg)
	if err != nil {
		return nil, err
	}
	return map[string]any{"message": observed}, nil
}

// take: what a receive or consume took, observed, and kept under its label for a later ack or nack of it.
func (s *session) take(h *consumerHandle, msg pulsar.Message) (map[string]any, error) {
	observed, err := observe(msg)
	if err != nil {
		return nil, err
	}
	label := observed["payload"].(string)
	h.received[label] = msg
	if label == "" { // a tombstone: also reachable by the label its send had here
		if sentLabel := s.labelByID(msg.ID()); sentLabel != "" {
			h.received[sentLabel] = msg
		}
	}
	return observed, nil
}

// reference: the Message the consumer last received with that label, else the id sent with it, else the
// harness's id; a Go Ack/Nack of a bare id needs an id the consumer knows, which the client checks.
func (s *session) reference(h *consumerHandle, a *args) (pulsar.Message, pulsar.MessageID, error) {
	label, err := a.str("message")
	if err != nil {
		return nil, nil, err
	}
	if m, ok := h.received[label]; ok {
		return m, m.ID(), nil
	}
	if sent, ok := s.sent[label]; ok {
		return nil, sent.id, nil
	}
	if a.has("message_id") {
		id, err := a.messageID("message_id")
		if err != nil {
			return nil, nil, err
		}
		return nil, buildID(id), nil
	}
	return nil, nil, rejected("OtherError", "message '%s' was neither received by this consumer nor sent in this run, "+
		"and the harness gave no message_id", label)
}

func (s *session) acknowledge(op string, a *args) (map[string]any, error) {
	h, err := s.consumer(a)
	if err != nil {
		return nil, err
	}
	msg, id, err := s.reference(h, a)
	if err != nil {
		return nil, err
	}
	c := h.consumer
	if a.has("txn") {
		txn, err := s.txn(a)
		if err != nil {
			return nil, err
		}
		if op != "ack" {
			if op == "ack_cumulative" {
				return nil, notInGoClient("cumulative ack in a transaction")
			}
			return nil, badRequest("%s takes no txn: only ack and ack_cumulative are transactional", op)
		}
		if msg == nil {
			return nil, notInGoClient("transactional ack of a message id (AckWithTxn takes a received Message)")
		}
		return map[string]any{}, c.AckWithTxn(msg, txn)
	}
	switch op {
	case "ack":
		if msg != nil {
			err = c.Ack(msg)
		} else {
			err = c.AckID(id)
		}
	case "ack_cumulative":
		if msg != nil {
			err = c.AckCumulative(msg)
		} else {
			err = c.AckIDCumulative(id)
		}
	default:
		if msg != nil {
			c.Nack(msg)
		} else {
			c.NackID(id)
		}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

func (s *session) reconsumeLater(a *args) (map[string]any, error) {
	h, err := s.consumer(a)
	if err != nil {
		return nil, err
	}
	delay, err := a.int64("delay_ms")
	if err != nil {
		return nil, err
	}
	msg, _, err := s.reference(h, a)
	if err != nil {
		return nil, err
	}
	if msg == nil {
		label, _ := a.str("message")
		return nil, rejected("OtherError", "reconsume_later: the consumer has not received '%s'; the Go client's "+
			"ReconsumeLater takes a received Message, not an id", label)
	}
	if !h.retry {
		// pulsar/consumer_impl.go ReconsumeLater without RetryEnable panics (no dead-letter policy) or blocks for
		// ever (a policy, no retry router): pulsar-client-go issue #664. The driver refuses it instead.
		return nil, rejected("InvalidConfiguration", "reconsume_later on a consumer without enable_retry: the Go client "+
			"would panic or block (pulsar-client-go issue #664)")
	}
	h.consumer.ReconsumeLater(msg, time.Duration(delay)*time.Millisecond)
	return map[string]any{}, nil
}

func (s *session) seek(a *args) (map[string]any, error) {
	h, err := s.consumer(a)
	if err != nil {
		return nil, err
	}
	which, err := a.exactlyOne("position", "message_id", "timestamp", "message")
	if err != nil {
		return nil, err
	}
	switch which {
	case "position":
		// (err2, not err: a := here would declare a new err in this case's scope, and the Seek's error, assigned
		// to it, would be dropped: a refused seek reported ok, as the Go client's SeekFailed on a consumer of
		// several partitions was, live 4.0.8, 4 Dec 2026, case seek-partitioned-go)
		where, err2 := a.choice("position", "", "earliest", "latest")
		if err2 != nil {
			return nil, err2
		}
		err = h.consumer.Seek(seekPosition(where))
	case "timestamp":
		ms, err2 := a.int64("timestamp")
		if err2 != nil {
			return nil, err2
		}
		err = h.consumer.SeekByTime(time.UnixMilli(ms))
	case "message_id":
		id, err2 := a.messageID("message_id")
		if err2 != nil {
			return nil, err2
		}
		err = h.consumer.Seek(buildID(id))
	default:
		label, _ := a.str("message")
		sent, ok := s.sent[label]
		if !ok {
			return nil, rejected("OtherError", "message '%s' was not sent in this run", label)
		}
		err = h.consumer.Seek(sent.id)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

func (s *session) unsubscribe(a *args) (map[string]any, error) {
	h, err := s.consumer(a)
	if err != nil {
		return nil, err
	}
	if err := h.consumer.Unsubscribe(); err != nil {
		return nil, err
	}
	name, _ := a.str("consumer")
	delete(s.consumers, name)
	h.consumer.Close()
	return map[string]any{}, nil
}

// ------------------------------------------------------------------ readers

func (s *session) createReader(a *args) (map[string]any, error) {
	handle, err := a.str("reader")
	if err != nil {
		return nil, err
	}
	opts := pulsar.ReaderOptions{}
	if opts.Topic, err = a.str("topic"); err != nil {
		return nil, err
	}
	if !a.has("start") {
		return nil, badRequest("op 'create_reader': missing required argument 'start'")
	}
	if text, ok := a.m["start"].(string); ok {
		switch text {
		case "earliest":
			opts.StartMessageID = pulsar.EarliestMessageID()
		case "latest":
			opts.StartMessageID = pulsar.LatestMessageID()
		default:
			return nil, badRequest("op 'create_reader': start %q is not earliest, latest or an object", text)
		}
	} else {
		start, err := a.object("start", "message_id", "message")
		if err != nil {
			return nil, err
		}
		which, err := start.exactlyOne("message_id", "message")
		if err != nil {
			return nil, err
		}
		if which == "message_id" {
			id, err := start.messageID("message_id")
			if err != nil {
				return nil, err
			}
			opts.StartMessageID = buildID(id)
		} else {
			label, _ := start.str("message")
			sent, ok := s.sent[label]
			if !ok {
				return nil, rejected("OtherError", "message '%s' was not sent in this run", label)
			}
			opts.StartMessageID = sent.id
		}
	}
	if opts.StartMessageIDInclusive, err = a.boolean("inclusive", false); err != nil {
		return nil, err
	}
	if opts.ReadCompacted, err = a.boolean("read_compacted", false); err != nil {
		return nil, err
	}
	if opts.Schema, err = schemaOf(a, true); err != nil {
		return nil, err
	}
	r, err := s.client.CreateReader(opts)
	if err != nil {
		return nil, err
	}
	s.readers[handle] = r
	return map[string]any{}, nil
}

func (s *session) readNext(a *args) (map[string]any, error) {
	name, err := a.str("reader")
	if err != nil {
		return nil, err
	}
	r, ok := s.readers[name]
	if !ok {
		return nil, unknownHandle("reader", name)
	}
	timeout, err := timeoutOf(a)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	msg, err := r.Next(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return map[string]any{"message": nil}, nil
		}
		return nil, err
	}
	observed, err := observe(msg)
	if err != nil {
		return nil, err
	}
	return map[string]any{"message": observed}, nil
}

// ------------------------------------------------------------------ any handle

func (s *session) close(a *args) (map[string]any, error) {
	name, err := a.str("handle")
	if err != nil {
		return nil, err
	}
	if _, ok := s.producers[name]; ok {
		h, err := s.producer(&args{op: "close", m: map[string]any{"producer": name}})
		if err != nil {
			return nil, err
		}
		delete(s.producers, name)
		h.producer.Close()
		return map[string]any{}, nil
	}
	if r, ok := s.readers[name]; ok {
		delete(s.readers, name)
		r.Close()
		return map[string]any{}, nil
	}
	if c, ok := s.consumers[name]; ok {
		delete(s.consumers, name)
		c.consumer.Close()
		return map[string]any{}, nil
	}
	return nil, unknownHandle("handle", name)
}

// ------------------------------------------------------------------ transactions

func (s *session) newTxn(a *args) (map[string]any, error) {
	name, err := a.str("txn")
	if err != nil {
		return nil, err
	}
	if _, open := s.txns[name]; open {
		return nil, badRequest("transaction '%s' is already open in this run; name each new_txn anew", name)
	}
	timeout := time.Minute // the Java client's default transaction timeout
	if d, ok, err := a.optMillis("timeout_ms"); err != nil {
		return nil, err
	} else if ok {
		timeout = d
	}
	txn, err := s.client.NewTransaction(timeout)
	if err != nil {
		return nil, err
	}
	s.txns[name] = txn
	id := txn.GetTxnID()
	return map[string]any{"txn_id": fmt.Sprintf("(%d,%d)", id.MostSigBits, id.LeastSigBits)}, nil
}

func (s *session) txn(a *args) (pulsar.Transaction, error) {
	name, err := a.str("txn")
	if err != nil {
		return nil, err
	}
	txn, ok := s.txns[name]
	if !ok {
		return nil, unknownHandle("txn", name)
	}
	return txn, nil
}

func (s *session) endTxn(op string, a *args) (map[string]any, error) {
	txn, err := s.txn(a)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opTimeout)
	defer cancel()
	if op == "commit_txn" {
		err = txn.Commit(ctx)
	} else {
		err = txn.Abort(ctx)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// ------------------------------------------------------------------ helpers

func unknownHandle(kind, name string) error {
	return rejected("UnknownHandle", "no live %s named '%s': a bug in the trace", kind, name)
}

func timeoutOf(a *args) (time.Duration, error) {
	ms, err := a.int64("timeout_ms")
	if err != nil {
		return 0, err
	}
	return time.Duration(max(ms, 1)) * time.Millisecond, nil
}

func (s *session) labelByID(id pulsar.MessageID) string {
	want := idJSON(id, true)
	for _, label := range s.sentOrder {
		got := idJSON(s.sent[label].id, true)
		if got[0] == want[0] && got[1] == want[1] && got[2] == want[2] && got[3] == want[3] {
			return label
		}
	}
	return ""
}

// ownerTopic: the topic a message id belongs to, the partition's own name for a partition.
func ownerTopic(topic string, id pulsar.MessageID) string {
	if p := id.PartitionIdx(); p >= 0 && !strings.Contains(topic, "-partition-") {
		return fmt.Sprintf("%s-partition-%d", topic, p)
	}
	return topic
}

// idJSON: the trace format's [ledger, entry, partition, batch_index], partition -1 on a topic that is not
// partitioned and batch_index -1 for a message not in a batch. The Go client's own ids say partition 0 and
// batch index 0 there; the trace format names the stored position
// the same way for every client, so the driver translates, and keeps the Go client's own text in id_text
// (MessageID.String(): "ledger:entry:partition").
func idJSON(id pulsar.MessageID, partitioned bool) []int64 {
	partition, batch := int64(id.PartitionIdx()), int64(id.BatchIdx())
	if id.BatchSize() <= 1 {
		// the Go client gives every message batch index i of batch size n, n = 1 both for a message stored
		// alone and for a batch of one (pulsar/consumer_partition.go MessageReceived; a send receipt the
		// same): which it was is not observable here, and the driver says -1 for both
		batch = -1
	}
	if !partitioned {
		partition = -1
	}
	return []int64{id.LedgerID(), id.EntryID(), partition, batch}
}

// buildID: the id a Go user would hold for the harness's [l, e, p, b], that is idJSON read backwards.
// The Go client's own ids say partition 0 on a topic that is not partitioned and batch index 0 for a
// message stored alone (pulsar/consumer_partition.go MessageReceived), and its Seek refuses partition -1
// (consumer_impl.go checkMsgIDPartition); with batch index -1 its exclusive start filter
// (messageShouldBeDiscarded) would let the start message through again.
func buildID(id [4]int64) pulsar.MessageID {
	partition, batch := id[2], id[3]
	if partition < 0 {
		partition = 0
	}
	if batch < 0 {
		batch = 0
	}
	return pulsar.NewMessageID(id[0], id[1], int32(batch), int32(partition))
}

// seekPosition: the earliest or latest position as an id the Go consumer's Seek takes. The client's own
// EarliestMessageID() and LatestMessageID() say partition -1, which Seek refuses (checkMsgIDPartition);
// these put the same ledger and entry on the wire (-1:-1 and MaxInt64:MaxInt64, as the Java client's
// MessageId.earliest and .latest), and batch index -1 keeps LatestMessageID's "never discard" test
// (messageShouldBeDiscarded compares ledger, entry and batch index only).
func seekPosition(where string) pulsar.MessageID {
	if where == "earliest" {
		return pulsar.NewMessageID(-1, -1, -1, 0)
	}
	return pulsar.NewMessageID(math.MaxInt64, math.MaxInt64, -1, 0)
}
