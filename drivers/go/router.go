package main

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/apache/pulsar-client-go/pulsar"
)

// schemeRouter: the `router` of create_producer, as drivers/java's SchemeRouter and
// reference_model/routing.py partition_for_key: a keyed message goes to hash(key) mod N as the named
// client does with the named hashing scheme; a keyless one round robin from partition 0. A key counts
// when it is set and not empty.
func schemeRouter(hashing, client string) func(*pulsar.ProducerMessage, pulsar.TopicMetadata) int {
	var mu sync.Mutex
	var keyless uint32
	return func(msg *pulsar.ProducerMessage, md pulsar.TopicMetadata) int {
		n := md.NumPartitions()
		if n == 0 {
			return 0
		}
		if msg.Key != "" {
			return int(keyHash(msg.Key, hashing, client) % int32(n))
		}
		mu.Lock()
		defer mu.Unlock()
		p := keyless % n
		keyless++
		return int(p)
	}
}

// keyHash: non-negative (the sign bit cleared), so signSafeMod and % agree.
func keyHash(key, hashing, client string) int32 {
	if hashing == "murmur3_32" {
		return int32(murmur3([]byte(key)) & math.MaxInt32)
	}
	var h int32
	if client == "java" { // String.hashCode over UTF-16 code units
		for _, u := range utf16.Encode([]rune(key)) {
			h = 31*h + int32(u)
		}
	} else { // the C++ JavaStringHash: the same recurrence over UTF-8 bytes read as signed chars
		for _, b := range []byte(key) {
			h = 31*h + int32(int8(b))
		}
	}
	return h & math.MaxInt32
}

// murmur3: MurmurHash3_x86_32, seed 0 (Pulsar's Murmur3_32Hash before the sign bit is cleared).
func murmur3(data []byte) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	var h uint32
	n := len(data) / 4
	for i := 0; i < n; i++ {
		k := binary.LittleEndian.Uint32(data[4*i:])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	tail := data[4*n:]
	switch len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(len(data))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// multiplierBackoff: the trace's nack_backoff {min_delay_ms, max_delay_ms, multiplier} as a Go
// NackBackoffPolicy, shaped like the Java client's MultiplierRedeliveryBackoff: min * multiplier^count,
// capped at max. The Go client asks it for Next(redelivery count) on each Nack(msg), and runs its tracker's
// ticker every Next(1) / 3 (PLS-NACK-007).
type multiplierPolicy struct {
	min, max   time.Duration
	multiplier float64
}

func (p multiplierPolicy) Next(redeliveryCount uint32) time.Duration {
	d := float64(p.min) * math.Pow(p.multiplier, float64(redeliveryCount))
	if d > float64(p.max) || math.IsInf(d, 1) {
		return p.max
	}
	return time.Duration(d)
}

func multiplierBackoff(a *args) (pulsar.NackBackoffPolicy, error) {
	p := multiplierPolicy{min: time.Second, max: 60 * time.Second, multiplier: 2}
	if a.has("min_delay_ms") {
		ms, err := a.int64("min_delay_ms")
		if err != nil {
			return nil, err
		}
		p.min = time.Duration(ms) * time.Millisecond
	}
	if a.has("max_delay_ms") {
		ms, err := a.int64("max_delay_ms")
		if err != nil {
			return nil, err
		}
		p.max = time.Duration(ms) * time.Millisecond
	}
	if a.has("multiplier") {
		m, err := a.float("multiplier")
		if err != nil {
			return nil, err
		}
		p.multiplier = m
	}
	// the checks of Java's MultiplierRedeliveryBackoff builder, whose shape this policy has (the model's
	// reference_model/redelivery.py multiplier_backoff_ms); the Go client itself checks nothing
	switch {
	case !(p.multiplier > 1):
		return nil, rejected("InvalidArgument", "multiplier must be > 1, got %v", p.multiplier)
	case p.min < 0:
		return nil, rejected("InvalidArgument", "min_delay_ms must be >= 0, got %d", p.min.Milliseconds())
	case p.max < p.min:
		return nil, rejected("InvalidArgument", "max_delay_ms (%d) must be >= min_delay_ms (%d)",
			p.max.Milliseconds(), p.min.Milliseconds())
	}
	return p, nil
}
