package main

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// args gives checked access to a request's arguments: an argument the op does not take, or one of
// the wrong type, is a malformed request (driver_error), never sent to the broker.
type args struct {
	op string
	m  map[string]any
}

func newArgs(op string, raw any, allowed ...string) (*args, error) {
	m := map[string]any{}
	if raw != nil {
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil, badRequest("op '%s': args is not a JSON object", op)
		}
		m = obj
	}
	known := map[string]bool{}
	for _, k := range allowed {
		known[k] = true
	}
	var unknown []string
	for k := range m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, badRequest("op '%s': unknown argument(s) %s (takes %s)", op, strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return &args{op: op, m: m}, nil
}

// has: the argument is given and not JSON null.
func (a *args) has(k string) bool {
	v, ok := a.m[k]
	return ok && v != nil
}

// present: the argument is given, JSON null included.
func (a *args) present(k string) bool {
	_, ok := a.m[k]
	return ok
}

func (a *args) str(k string) (string, error) {
	v, ok := a.m[k]
	if !ok || v == nil {
		return "", badRequest("op '%s': missing required argument '%s'", a.op, k)
	}
	s, ok := v.(string)
	if !ok {
		return "", badRequest("op '%s': argument '%s' must be a string, got %v", a.op, k, v)
	}
	return s, nil
}

func (a *args) optStr(k string) (*string, error) {
	if !a.has(k) {
		return nil, nil
	}
	s, err := a.str(k)
	return &s, err
}

func (a *args) boolean(k string, def bool) (bool, error) {
	if !a.has(k) {
		return def, nil
	}
	b, ok := a.m[k].(bool)
	if !ok {
		return false, badRequest("op '%s': argument '%s' must be true or false, got %v", a.op, k, a.m[k])
	}
	return b, nil
}

func (a *args) int64(k string) (int64, error) {
	v, ok := a.m[k]
	if !ok || v == nil {
		return 0, badRequest("op '%s': missing required argument '%s'", a.op, k)
	}
	i, ok := wholeNumber(v)
	if !ok {
		return 0, badRequest("op '%s': argument '%s' must be a whole number, got %v", a.op, k, v)
	}
	return i, nil
}

// wholeNumber: a JSON number without a fraction, as int64.
func wholeNumber(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// optMillis: a duration argument given in milliseconds; ok is false when it is absent.
func (a *args) optMillis(k string) (d time.Duration, ok bool, err error) {
	if !a.has(k) {
		return 0, false, nil
	}
	ms, err := a.int64(k)
	return time.Duration(ms) * time.Millisecond, err == nil, err
}

func (a *args) float(k string) (float64, error) {
	n, ok := a.m[k].(json.Number)
	if !ok {
		return 0, badRequest("op '%s': argument '%s' must be a number, got %v", a.op, k, a.m[k])
	}
	f, err := n.Float64()
	if err != nil {
		return 0, badRequest("op '%s': argument '%s' must be a number, got %v", a.op, k, a.m[k])
	}
	return f, nil
}

func (a *args) choice(k, def string, options ...string) (string, error) {
	if !a.has(k) {
		return def, nil
	}
	s, err := a.str(k)
	if err != nil {
		return "", err
	}
	for _, o := range options {
		if s == o {
			return s, nil
		}
	}
	return "", badRequest("op '%s': argument '%s' is %q, not one of %s", a.op, k, s, strings.Join(options, ", "))
}

func (a *args) stringMap(k string) (map[string]string, error) {
	if !a.has(k) {
		return nil, nil
	}
	obj, ok := a.m[k].(map[string]any)
	if !ok {
		return nil, badRequest("op '%s': argument '%s' must be an object of strings", a.op, k)
	}
	out := make(map[string]string, len(obj))
	for key, v := range obj {
		s, ok := v.(string)
		if !ok {
			return nil, badRequest("op '%s': argument '%s' must be an object of strings (%s is %v)", a.op, k, key, v)
		}
		out[key] = s
	}
	return out, nil
}

func (a *args) stringList(k string) ([]string, error) {
	list, ok := a.m[k].([]any)
	if !ok {
		return nil, badRequest("op '%s': argument '%s' must be a list of strings", a.op, k)
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, badRequest("op '%s': argument '%s' must be a list of strings", a.op, k)
		}
		out = append(out, s)
	}
	return out, nil
}

// object: a nested argument object, checked like a request's args; nil when absent.
func (a *args) object(k string, allowed ...string) (*args, error) {
	if !a.has(k) {
		return nil, nil
	}
	return newArgs(a.op+"."+k, a.m[k], allowed...)
}

// messageID: [ledger, entry, partition, batch_index].
func (a *args) messageID(k string) ([4]int64, error) {
	var out [4]int64
	list, ok := a.m[k].([]any)
	if !ok || len(list) != 4 {
		return out, badRequest("op '%s': argument '%s' must be [ledger, entry, partition, batch_index]", a.op, k)
	}
	for i, v := range list {
		x, ok := wholeNumber(v)
		if !ok {
			return out, badRequest("op '%s': argument '%s' must hold whole numbers", a.op, k)
		}
		out[i] = x
	}
	return out, nil
}

// ranges: [[start, end], ...] of Key_Shared sticky hash ranges.
func (a *args) ranges(k string) ([]int, error) {
	if !a.has(k) {
		return nil, nil
	}
	list, ok := a.m[k].([]any)
	if !ok {
		return nil, badRequest("op '%s': argument '%s' must be a list of [start, end]", a.op, k)
	}
	var out []int
	for _, r := range list {
		pair, ok := r.([]any)
		if !ok || len(pair) != 2 {
			return nil, badRequest("op '%s': argument '%s' must be a list of [start, end]", a.op, k)
		}
		for _, v := range pair {
			x, ok := wholeNumber(v)
			if !ok {
				return nil, badRequest("op '%s': argument '%s' must hold whole numbers", a.op, k)
			}
			out = append(out, int(x))
		}
	}
	return out, nil
}

// exactlyOne: which one of the keys is given; a malformed request when none or several are.
func (a *args) exactlyOne(keys ...string) (string, error) {
	found := ""
	for _, k := range keys {
		if a.has(k) {
			if found != "" {
				return "", badRequest("op '%s': give only one of %s", a.op, strings.Join(keys, ", "))
			}
			found = k
		}
	}
	if found == "" {
		return "", badRequest("op '%s': give one of %s", a.op, strings.Join(keys, ", "))
	}
	return found, nil
}
