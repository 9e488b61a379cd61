package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/pulsar-client-go/pulsar"
)

// A malformed request or a bug in the driver: the harness raises, never a verdict.
type badRequestError struct{ detail string }

func (e *badRequestError) Error() string { return e.detail }

func badRequest(format string, a ...any) error { return &badRequestError{fmt.Sprintf(format, a...)} }

// An op the client refused, named with a trace-format error name.
type rejectedError struct{ name, detail string }

func (e *rejectedError) Error() string { return e.name + ": " + e.detail }

func rejected(name, format string, a ...any) error {
	return &rejectedError{name, fmt.Sprintf(format, a...)}
}

// An op that may or may not have acted (a timeout, a lost connection).
type indeterminateError struct{ detail string }

func (e *indeterminateError) Error() string { return e.detail }

func indeterminate(format string, a ...any) error {
	return &indeterminateError{fmt.Sprintf(format, a...)}
}

// notInGoClient: an op or option the Go client has no API for (the trace asks for a feature of another client).
func notInGoClient(what string) error {
	return rejected("InvalidArgument", "the Go client (pulsar-client-go %s) has no %s", clientVersion(), what)
}

// The broker's refusals reach Go as the server error's enum name in the text
// (pulsar/producer_partition.go, consumer_partition.go, internal/lookup_service.go): the trace-format name for each.
var serverErrors = []struct{ server, trace string }{
	{"ProducerBusy", "ProducerBusy"},
	{"ProducerFenced", "ProducerFenced"},
	{"ConsumerBusy", "ConsumerBusy"},
	{"ConsumerAssignError", "ConsumerAssignError"},
	{"IncompatibleSchema", "IncompatibleSchema"},
	{"TopicNotFound", "TopicNotFound"},
	{"SubscriptionNotFound", "SubscriptionNotFound"},
	{"NotAllowedError", "NotAllowedError"},
	{"InvalidTopicName", "InvalidTopicName"},
	{"TransactionConflict", "TransactionConflict"},
	{"InvalidTxnStatus", "InvalidTxnStatus"},
	{"TransactionNotFound", "TransactionNotFound"},
	{"TransactionCoordinatorNotFound", "TransactionCoordinatorNotFound"},
}

// Server errors that say nothing about the op's effect.
var serverUnknown = []string{"ServiceNotReady", "MetadataError", "PersistenceError", "TooManyRequests"}

// Client results (pulsar/error.go) and the trace-format name, or "" for indeterminate.
var resultNames = map[pulsar.Result]string{
	pulsar.ConsumerBusy:                     "ConsumerBusy",
	pulsar.InvalidConfiguration:             "InvalidConfiguration",
	pulsar.InvalidTopicName:                 "InvalidTopicName",
	pulsar.TopicNotFound:                    "TopicNotFound",
	pulsar.SubscriptionNotFound:             "SubscriptionNotFound",
	pulsar.MessageTooBig:                    "MessageTooBig",
	pulsar.ProducerFenced:                   "ProducerFenced",
	pulsar.AlreadyClosedError:               "AlreadyClosed",
	pulsar.ConsumerClosed:                   "AlreadyClosed",
	pulsar.ProducerClosed:                   "AlreadyClosed",
	pulsar.InvalidStatus:                    "InvalidTxnStatus",
	pulsar.TransactionNoFoundError:          "TransactionNotFound",
	pulsar.TransactionCoordinatorNotEnabled: "TransactionCoordinatorNotFound",
	pulsar.TimeoutError:                     "",
	pulsar.ConnectError:                     "",
	pulsar.LookupError:                      "",
	pulsar.NotConnectedError:                "",
	pulsar.BrokerMetadataError:              "",
	pulsar.BrokerPersistenceError:           "",
	pulsar.ServiceUnitNotReady:              "",
}

type outcome struct{ status, name, detail string }

func classify(err error) outcome {
	var bad *badRequestError
	var rej *rejectedError
	var ind *indeterminateError
	switch {
	case errors.As(err, &bad):
		return outcome{"driver_error", "", bad.detail}
	case errors.As(err, &rej):
		return outcome{"rejected", rej.name, rej.detail}
	case errors.As(err, &ind):
		return outcome{"indeterminate", "", ind.detail}
	}
	text := err.Error()
	if errors.Is(err, pulsar.ErrInvalidAck) { // a cumulative ack on Shared/Key_Shared (consumer_partition.go)
		return outcome{"rejected", "InvalidAck", text}
	}
	if strings.Contains(text, "encryptedPayload exceeds MaxMessageSize") {
		// pulsar/internal/commands.go ErrExceedMaxMessageSize: metadata plus payload above maxMessageSize when
		// the send is framed (PLS-CHUNK-008). The sentinel is in an internal package, so its text is all a
		// Go user (and this driver) can match; the trace calls the condition MessageTooBig.
		return outcome{"rejected", "MessageTooBig", text}
	}
	if strings.Contains(text, "batching and chunking can not be enabled together") {
		// pulsar/producer_impl.go newProducer refuses the options (PLS-CHUNK-004): a plain error
		return outcome{"rejected", "InvalidArgument", text}
	}
	if strings.Contains(strings.ToLower(text), "invalid topic") { // the client's own check (internal/topic_name.go ParseTopicName)
		return outcome{"rejected", "InvalidTopicName", text}
	}
	for _, s := range serverErrors {
		if strings.Contains(text, s.server) {
			return outcome{"rejected", s.trace, text}
		}
	}
	for _, s := range serverUnknown {
		if strings.Contains(text, s) {
			return outcome{"indeterminate", "", text}
		}
	}
	var perr *pulsar.Error
	if errors.As(err, &perr) {
		if name, ok := resultNames[perr.Result()]; ok {
			if name == "" {
				return outcome{"indeterminate", "", text}
			}
			return outcome{"rejected", name, text}
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return outcome{"indeterminate", "", text}
	}
	return outcome{"rejected", "OtherError", fmt.Sprintf("%T: %s", err, text)}
}
