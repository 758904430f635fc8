package exporter

import (
	"fmt"
	"strconv"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/otelenv"
	"github.com/zerostat/zerostat/view"
)

// OpenTelemetry's environment variables read by FromEnv options
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
const (
	EnvServiceName           = "OTEL_SERVICE_NAME"
	EnvResourceAttributes    = "OTEL_RESOURCE_ATTRIBUTES"
	EnvMetricExportInterval  = "OTEL_METRIC_EXPORT_INTERVAL"
	EnvTemporalityPreference = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
)

// FromEnv returns r completed from OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES, with code over environment: a field set in r
// is kept, and an attribute of r.Attributes wins over one of the same key
// in the variable. OTEL_SERVICE_NAME wins over a service.name in
// OTEL_RESOURCE_ATTRIBUTES (as the specification says); host.name and
// process.pid there fill Host and PID; the other attributes are added
// after r.Attributes, in the variable's order. A key the variable lists
// twice takes its last value, as in OpenTelemetry's SDKs. The variable's
// keys and values are percent-decoded. An invalid value is an error naming
// the variable, and an invalid r (see Normalize) an error naming the key;
// a service.name, host.name or process.pid of r.Attributes is set in code
// and fills its field. Every exporter with FromEnv describes the process
// with it. It reads the environment once; safe for concurrent use.
func (r Resource) FromEnv() (Resource, error) {
	r, err := r.fold()
	if err != nil {
		return r, err
	}
	var env otelenv.Env
	pairs, err := otelenv.Pairs(EnvResourceAttributes, env.Get(EnvResourceAttributes))
	if err != nil {
		return r, err
	}
	pairs = lastOfEach(pairs)
	code := make(map[string]bool, len(r.Attributes))
	for _, a := range r.Attributes {
		code[a.Key] = true
	}
	var attrs []wire.Attribute
	service, host, pid := "", "", 0
	for _, p := range pairs {
		switch p.Key {
		case "service.name":
			service = p.Value
		case "host.name":
			host = p.Value
		case "process.pid":
			n, err := strconv.Atoi(p.Value)
			if err != nil || n <= 0 {
				return r, fmt.Errorf("%s: process.pid=%q is not a positive integer", EnvResourceAttributes, p.Value)
			}
			pid = n
		default:
			if !code[p.Key] {
				attrs = append(attrs, wire.Attribute{Key: p.Key, Value: p.Value})
			}
		}
	}
	if v := env.Get(EnvServiceName); v != "" {
		service = v
	}
	if r.ServiceName == "" {
		r.ServiceName = service
	}
	if r.Host == "" {
		r.Host = host
	}
	if r.PID == 0 {
		r.PID = pid
	}
	if len(attrs) > 0 {
		r.Attributes = append(append([]wire.Attribute(nil), r.Attributes...), attrs...)
	}
	return r, nil
}

// TemporalityPreference chooses the temporality of each kind of view, as
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE does for OpenTelemetry
// instruments
// (https://opentelemetry.io/docs/specs/otel/metrics/sdk_exporters/otlp/#additional-environment-variable-configuration).
// zerostat's view kinds are synchronous instruments: a Count or Sum view
// is a monotonic Counter (docs/metric-mapping.md), a Distribution a
// Histogram, a LastValue a Gauge. So:
//
//	view kind (OTel instrument)             cumulative   delta        lowmemory
//	Count, Sum (Counter)                    Cumulative   Delta        Delta
//	ObservedSum (Asynchronous Counter)      Cumulative   Delta        Cumulative
//	UpDownSum (UpDownCounter, asynchronous) Cumulative   Cumulative   Cumulative
//	Distribution (Histogram)                Cumulative   Delta        Delta
//	LastValue (Gauge)                       Cumulative   Cumulative   Cumulative
//	Summary (metric.NewSummary)             Cumulative   Cumulative   Cumulative
//
// A summary is never read as deltas, under Options.Temporality Delta
// too: its quantiles cannot be subtracted, so a delta payload carries its
// current values (aggregation 8, docs/wire-format.md).
//
// delta and lowmemory differ for asynchronous counters only: the otel
// module's observable counters and metric.NewCounter (view.ObservedSum),
// delta under delta, cumulative under lowmemory in OTLP. zerostat's
// msgpack payload has one temporality for all its views, so there they
// are delta under lowmemory too (a total in a delta payload would be
// misread as an interval's): a difference until the format carries a
// temporality per view. A
// gauge's point is its last value whatever the temporality (OTLP's Gauge
// has none); reading it cumulatively keeps no per-series delta state for
// it, so EvictIdleAfter does not evict LastValue series under a
// preference, while Options.Temporality Delta (every view delta) does.
// A preference and Temporality Delta cannot both be set.
type TemporalityPreference = delta.Preference

// Temporality preferences (the names are the environment variable's).
const (
	// PreferCumulative: every view cumulative (the zero value: then
	// Options.Temporality decides).
	PreferCumulative = delta.PreferCumulative
	// PreferDelta: counters and histograms delta, gauges cumulative.
	PreferDelta = delta.PreferDelta
	// PreferLowMemory: synchronous counters and histograms delta, the
	// rest cumulative: as PreferDelta but for asynchronous counters
	// (view.ObservedSum), cumulative here.
	PreferLowMemory = delta.PreferLowMemory
)

// ParseTemporalityPreference parses cumulative, delta or lowmemory (in
// any case).
func ParseTemporalityPreference(s string) (TemporalityPreference, error) {
	return delta.ParsePreference(s)
}

// TemporalityOf returns the temporality of a view of aggregation type t
// under p (the table at TemporalityPreference).
func TemporalityOf(p TemporalityPreference, t view.AggType) wire.Temporality {
	k := core.Kind(0)
	switch t {
	case view.AggTypeCount:
		k = core.KindCount
	case view.AggTypeSum:
		k = core.KindSum
	case view.AggTypeDistribution:
		k = core.KindDistribution
	case view.AggTypeLastValue:
		k = core.KindLastValue
	case view.AggTypeExponentialDistribution:
		k = core.KindExponential
	case view.AggTypeSummary:
		k = core.KindSummary // never delta
	}
	if p.Delta(k) {
		return Delta
	}
	return Cumulative
}

// fromEnv fills the options FromEnv reads: the Resource, the Interval
// (OTEL_METRIC_EXPORT_INTERVAL, milliseconds) when zero, the
// TemporalityPreference when neither it nor Temporality is set.
//
// A number or enum value not recognised (the interval, the preference) is
// logged as a warning on o.Logger and ignored, the default used, as the
// specification says; an invalid resource attribute fails.
func (o Options) fromEnv() (Options, error) {
	var env otelenv.Env
	var err error
	if o.Resource, err = o.Resource.FromEnv(); err != nil {
		return o, err
	}
	var ignored []otelenv.Ignored
	if o.Interval == 0 {
		if o.Interval, err = env.Positive(EnvMetricExportInterval); err != nil {
			o.Interval = 0
			ignored = append(ignored, otelenv.Ignored{Err: err})
		}
	}
	if v := env.Get(EnvTemporalityPreference); v != "" && o.Temporality == Cumulative && o.TemporalityPreference == PreferCumulative {
		if o.TemporalityPreference, err = ParseTemporalityPreference(v); err != nil {
			ignored = append(ignored, otelenv.Ignored{Err: fmt.Errorf("%s: %w", EnvTemporalityPreference, err)})
		}
	}
	otelenv.Warn(o.Logger, "zerostat exporter", ignored)
	return o, nil
}

// lastOfEach returns pairs with each key once, at its last position, with
// its last value.
func lastOfEach(pairs []otelenv.Pair) []otelenv.Pair {
	last := make(map[string]int, len(pairs))
	for i, p := range pairs {
		last[p.Key] = i
	}
	if len(last) == len(pairs) {
		return pairs
	}
	out := make([]otelenv.Pair, 0, len(last))
	for i, p := range pairs {
		if last[p.Key] == i {
			out = append(out, p)
		}
	}
	return out
}
