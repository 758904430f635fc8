// Package otelenv reads OpenTelemetry's environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
// and the OTLP exporter's,
// https://opentelemetry.io/docs/specs/otel/protocol/exporter/), for the
// exporters whose options say FromEnv. It parses; the exporters decide
// precedence (code over environment, signal-specific over generic).
//
// Every error names the variable and the value. Reading is done once, when
// an exporter is created; nothing here is on a hot path.
package otelenv

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Env looks variables up. The zero value reads the process environment.
// An empty value is the same as an unset one, as the specification says
// ("Implementations MUST interpret an empty value of an environment
// variable the same way as when the variable is unset").
type Env struct {
	// Lookup, if set, replaces os.LookupEnv (tests).
	Lookup func(string) (string, bool)
}

// Get returns the value of name, "" when unset or empty.
func (e Env) Get(name string) string {
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, _ := lookup(name)
	return strings.TrimSpace(v)
}

// First returns the first of names with a value, and the value ("", ""
// when none has one): pass the signal-specific variable first.
func (e Env) First(names ...string) (name, value string) {
	for _, n := range names {
		if v := e.Get(n); v != "" {
			return n, v
		}
	}
	return "", ""
}

// Millis parses value, a duration in integer milliseconds (the unit of
// every OTel timeout and interval variable), naming the variable when it
// is not a non-negative integer.
func Millis(name, value string) (time.Duration, error) {
	ms, err := strconv.ParseInt(value, 10, 64)
	if err != nil || ms < 0 || ms > int64(time.Duration(1<<63-1)/time.Millisecond) {
		return 0, fmt.Errorf("%s=%q: want a non-negative integer number of milliseconds", name, value)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Bool parses value, "true" or "false" in any case.
func Bool(name, value string) (bool, error) {
	switch strings.ToLower(value) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: want true or false", name, value)
}

// Pair is one key=value of a list variable.
type Pair struct{ Key, Value string }

// Pairs parses value, a comma-separated list of key=value (the format of
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES: W3C Baggage's,
// without properties). Keys and values are percent-decoded, then trimmed
// of spaces; empty members are skipped. A member without '=', with an
// empty key or with an invalid percent-escape is an error naming the
// variable and the member (the specification lets an SDK discard such a
// value; zerostat refuses to start with a configuration it cannot read).
func Pairs(name, value string) ([]Pair, error) {
	var out []Pair
	i := 0
	for member := range strings.SplitSeq(value, ",") {
		i++
		if strings.TrimSpace(member) == "" {
			continue
		}
		// Errors name the member by position and key, never by value: a
		// header's value may be a credential (OTEL_EXPORTER_OTLP_HEADERS).
		k, v, ok := strings.Cut(member, "=")
		if !ok {
			return nil, fmt.Errorf("%s: member %d has no '=' (want key=value)", name, i)
		}
		dk, err := url.PathUnescape(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("%s: member %d: key %q: %v", name, i, strings.TrimSpace(k), err)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: member %d (key %q): the value has an invalid percent-escape", name, i, dk)
		}
		dk, dv = strings.TrimSpace(dk), strings.TrimSpace(dv)
		if dk == "" {
			return nil, fmt.Errorf("%s: member %d has an empty key", name, i)
		}
		out = append(out, Pair{dk, dv})
	}
	return out, nil
}

// Ignored is a value the specification says to warn about and ignore
// ("an enum value the implementation does not recognise MUST produce a
// warning and be ignored"; numeric and boolean values SHOULD be treated
// likewise): the default is used instead. Err says which variable and
// value, and what was expected.
type Ignored struct{ Err error }

func (i Ignored) Error() string {
	return i.Err.Error() + ": ignored, the default is used"
}

// Warn logs each of ignored on lg (nil: slog.Default()), naming the
// exporter (who), once each, as a warning.
func Warn(lg *slog.Logger, who string, ignored []Ignored) {
	if lg == nil {
		lg = slog.Default()
	}
	for _, i := range ignored {
		lg.Warn(who+": an environment variable's value is not recognised", "err", i.Error())
	}
}

// Positive returns the duration in milliseconds that name holds, 0 when
// unset, or an error when it is invalid or zero (an interval or timeout of
// 0 ms is meaningless; unset it for the default).
func (e Env) Positive(name string) (time.Duration, error) {
	v := e.Get(name)
	if v == "" {
		return 0, nil
	}
	d, err := Millis(name, v)
	if err == nil && d == 0 {
		err = fmt.Errorf("%s=%q: must be positive (unset it for the default)", name, v)
	}
	return d, err
}

// HistogramAggregation is the OTLP exporter's variable choosing the
// default aggregation of histograms: explicit_bucket_histogram (the
// default) or base2_exponential_bucket_histogram (the SDK's
// AggregationBase2ExponentialHistogram, MaxSize 160, MaxScale 20).
const HistogramAggregation = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"

// Base2Exponential reports whether HistogramAggregation says
// base2_exponential_bucket_histogram. The value is matched in any case,
// as OTel Go's exporters match it (and as the specification says enum
// values should be). Unset, empty or explicit_bucket_histogram: false.
// Any other value: false, with an error naming the variable and the value,
// for the caller to report as Ignored (the specification: an unknown enum
// value "MUST produce a warning and be ignored"; OTel Go logs it and
// keeps the default).
func (e Env) Base2Exponential() (bool, error) {
	switch v := e.Get(HistogramAggregation); strings.ToLower(v) {
	case "", "explicit_bucket_histogram":
		return false, nil
	case "base2_exponential_bucket_histogram":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want explicit_bucket_histogram or base2_exponential_bucket_histogram", HistogramAggregation, v)
	}
}
