package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/gzipbuf"
)

// Temporality re-exports wire's temporalities for options.
const (
	Cumulative = wire.Cumulative
	Delta      = wire.Delta
)

// Compression of payloads.
type Compression uint8

const (
	// NoCompression sends payloads as they are (the default: the interned
	// format is compact, and gzip costs more CPU than encoding).
	NoCompression Compression = iota
	// Gzip compresses each payload with Options.GzipLevel.
	Gzip
)

// Defaults.
const (
	DefaultInterval        = push.DefaultInterval
	DefaultMaxPayloadBytes = 1 << 20
	MinMaxPayloadBytes     = 1 << 10
	DefaultTimeout         = push.DefaultTimeout
	// DefaultMaxQueuedBytes is the default of Options.MaxQueuedBytes.
	DefaultMaxQueuedBytes = push.DefaultMaxQueuedBytes
)

// Retry configures retries; the policy every push exporter shares (see
// push.Retry).
type Retry = push.Retry

// Options configure an Exporter. The zero value is usable: every 10 s,
// cumulative, uncompressed payloads of at most 1 MiB, 5 s per send.
type Options struct {
	// Interval between exports.
	Interval time.Duration
	// Temporality of the values: Cumulative (as OpenCensus) or Delta
	// (every view but an up-down sum, view.UpDownSum, whose row is always
	// its total: wire.UpDownSum; LastValue included: see
	// TemporalityPreference).
	Temporality wire.Temporality
	// TemporalityPreference, if set, chooses the temporality per kind of
	// view as OpenTelemetry's preference does: PreferDelta or
	// PreferLowMemory make Count, Sum and Distribution views delta and
	// LastValue and up-down sum views cumulative. The payload's temporality
	// is then Delta.
	// It cannot be set with Temporality Delta.
	TemporalityPreference TemporalityPreference
	// MaxPayloadBytes caps a payload's size before compression; a larger
	// snapshot is split into several self-contained payloads. A single row
	// larger than the cap is sent alone, oversized. At least 1 KiB.
	MaxPayloadBytes int
	// WireVersion is the wire format version of the payloads: 1 (0 means
	// 1), rows as arrays, which every reader of the format reads (a delta
	// distribution's overflow row then carries no start, so its first
	// export has no min and max for OTLP); or 2
	// (wire.Version2), the same content with each view's rows laid out as
	// columns, which gzip compresses to about a third of version 1 (and of
	// OTLP's bytes; docs/performance.md). Version 2 needs a reader of this
	// release or later: the zerostat receiver, wire.Decode, and the Python
	// and Ruby readers in exporter/testdata/crosslang.
	WireVersion int
	// Compression of payloads, and the gzip level (gzip.BestSpeed to
	// gzip.BestCompression; 0 means gzip.BestSpeed).
	Compression Compression
	GzipLevel   int
	// Timeout bounds each attempt to send a payload. An attempt that runs
	// out of it is retried while the export's deadline has time left.
	Timeout time.Duration
	// Retry shapes the retries of a payload whose send failed in a way
	// worth retrying (network errors, HTTP 429 and 5xx): exponential
	// backoff with full jitter from 100 ms up to 5 s by default,
	// honouring Retry-After, for as long as the export's context allows
	// (the periodic loop gives each export one Interval).
	Retry Retry
	// MaxQueuedBytes bounds the delta payloads kept for a later export
	// when they could not be sent (default 16 MiB); past it the oldest are
	// dropped and counted. Cumulative payloads are never queued: the next
	// export carries the same totals.
	MaxQueuedBytes int
	// EvictIdleAfter, with Delta temporality, evicts a series that has not
	// changed for that many exports in a row (0: never): its memory and
	// its place under the view's cardinality limit are given back once
	// every delta exporter has sent its final values. Recording its tags
	// again creates it anew. Last values are never evicted (a constant
	// gauge is not idle). See docs/reliability.md.
	EvictIdleAfter int
	// Resource describes the process. Empty fields get defaults: the
	// service name "unknown_service:<executable name>", the host name,
	// the process id.
	Resource Resource
	// OnError, if set, is called (from the export goroutine) with each
	// failed periodic export; the exporter keeps running.
	OnError func(error)
	// Logger logs the exporter's changes of state, once each: exports
	// starting to fail, and recovering. nil: slog.Default(); a logger on
	// slog.DiscardHandler silences it.
	Logger *slog.Logger
	// FromEnv reads OpenTelemetry's environment variables into the
	// options left unset: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// into Resource (see Resource.FromEnv), OTEL_METRIC_EXPORT_INTERVAL
	// (milliseconds) into Interval, and
	// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE into
	// TemporalityPreference when neither it nor Temporality is set. An
	// invalid number or preference is logged as a warning on Logger and
	// ignored (the default used), as the specification says; an invalid
	// resource attribute fails New with an error naming the variable. Without
	// FromEnv no variable is read.
	FromEnv bool
	// Name tags this exporter's self-observability (package selfstats,
	// tag "sink"). Default: "http", "writer" or "func" after the sink.
	Name string
}

// Resource identifies the process the views belong to.
type Resource struct {
	ServiceName string
	Host        string
	PID         int
	// Attributes are added after service.name, host.name and process.pid.
	// Each key must be non-empty and listed once. A service.name,
	// host.name or process.pid here fills the field of its own (it is an
	// error when the field holds another value), as it does in an
	// OpenTelemetry resource.
	Attributes []wire.Attribute
}

// WithDefaults returns r with its empty fields filled: the service name
// "unknown_service:" and the executable's name (the OpenTelemetry
// resource semantic conventions' default), this host's name, this
// process's id. Every exporter
// describes the process with it.
func (r Resource) WithDefaults() Resource {
	if r.ServiceName == "" {
		r.ServiceName = "unknown_service:" + filepath.Base(os.Args[0])
	}
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	if r.PID == 0 {
		r.PID = os.Getpid()
	}
	return r
}

// Normalize returns r with a service.name, host.name or process.pid of
// its Attributes moved into its field, and then WithDefaults applied:
// what every exporter describes the process with, each key once. It is an
// error, naming the key, when an attribute has an empty key, a key is
// listed twice, such an attribute disagrees with its field, or a
// process.pid is not a positive integer. r is not modified.
func (r Resource) Normalize() (Resource, error) {
	r, err := r.fold()
	if err != nil {
		return r, err
	}
	return r.WithDefaults(), nil
}

// fold is Normalize without WithDefaults.
func (r Resource) fold() (Resource, error) {
	var attrs []wire.Attribute
	for i, a := range r.Attributes {
		if a.Key == "" {
			return r, fmt.Errorf("Resource.Attributes[%d] has an empty key", i)
		}
		for _, b := range r.Attributes[:i] {
			if b.Key == a.Key {
				return r, fmt.Errorf("Resource.Attributes lists %q twice", a.Key)
			}
		}
		var field *string
		switch a.Key {
		case "service.name":
			field = &r.ServiceName
		case "host.name":
			field = &r.Host
		case "process.pid":
			n, err := strconv.Atoi(a.Value)
			if err != nil || n <= 0 {
				return r, fmt.Errorf("Resource.Attributes: process.pid=%q is not a positive integer", a.Value)
			}
			if r.PID != 0 && r.PID != n {
				return r, fmt.Errorf("Resource.Attributes: process.pid=%d, but Resource.PID is %d", n, r.PID)
			}
			r.PID = n
		default:
			attrs = append(attrs, a)
		}
		if field != nil {
			if *field != "" && *field != a.Value {
				return r, fmt.Errorf("Resource.Attributes: %s=%q, but the Resource's field holds %q", a.Key, a.Value, *field)
			}
			*field = a.Value
		}
	}
	if len(attrs) != len(r.Attributes) {
		r.Attributes = attrs
	}
	return r, nil
}

// attributes returns the normalized r as the wire's resource attributes.
func (r Resource) attributes() ([]wire.Attribute, error) {
	r, err := r.Normalize()
	if err != nil {
		return nil, err
	}
	attrs := []wire.Attribute{
		{Key: "service.name", Value: r.ServiceName},
		{Key: "host.name", Value: r.Host},
		{Key: "process.pid", Value: strconv.Itoa(r.PID)},
	}
	return append(append(attrs, r.Attributes...), r.SDKAttributes()...), nil
}

// SDKAttributes returns the telemetry.sdk.* resource attributes every
// exporter sends after r's, as OpenTelemetry's SDKs describe themselves:
// name "zerostat", language "go", and the version of the zerostat module
// the program was built with (its build info: a tag, a pseudo-version,
// or "(devel)" when zerostat is the main module; "unknown" when the build
// info does not list it); those r.Attributes sets (in code, or with
// FromEnv from OTEL_RESOURCE_ATTRIBUTES) are left out, so r's win.
func (r Resource) SDKAttributes() []wire.Attribute {
	var out []wire.Attribute
	for _, a := range sdkAttributes() {
		if !slices.ContainsFunc(r.Attributes, func(b wire.Attribute) bool { return b.Key == a.Key }) {
			out = append(out, a)
		}
	}
	return out
}

var sdkAttributes = sync.OnceValue(func() []wire.Attribute {
	const module = "github.com/zerostat/zerostat"
	version := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == module {
			version = bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == module {
				version = d.Version
				if d.Replace != nil && d.Replace.Version != "" {
					version = d.Replace.Version
				}
			}
		}
	}
	return []wire.Attribute{
		{Key: "telemetry.sdk.name", Value: "zerostat"},
		{Key: "telemetry.sdk.language", Value: "go"},
		{Key: "telemetry.sdk.version", Value: version},
	}
})

// Payload is one encoded snapshot (or one part of it) handed to a Sink.
type Payload struct {
	// Data is the payload, compressed when Encoding is "gzip". It is valid
	// only during Send: a sink that keeps it must copy it.
	Data     []byte
	Encoding string // "" or "gzip"
	Sequence uint64 // export cycle, from 1
	Part     uint64 // part within the cycle, from 0
	Last     bool   // the cycle's last part
}

// Sink delivers payloads. Send is called from one goroutine at a time.
type Sink interface {
	Send(ctx context.Context, p Payload) error
}

// Stats are an exporter's counters since it was created: those every
// push exporter has (push.Stats; a request is one payload, a point one
// row; Oversized counts payloads over MaxPayloadBytes).
type Stats = push.Stats

// Retryable marks an error returned by a Sink as worth retrying (after
// after, if positive, else after the backoff). HTTPSink marks network
// errors, 429 and 5xx answers so.
func Retryable(err error, after time.Duration) error { return push.Retryable(err, after) }

// Exporter periodically snapshots every registered view and sends the
// encoded snapshot to a sink. Snapshots read the series with atomic loads:
// recorders are never blocked or slowed by a lock. Its methods are safe for
// concurrent use; exports are serialised.
//
// It is the msgpack encoder and a Sink on the shared push pipeline
// (package exporter/push), which owns the loop, the queue, the retries and
// Stats.
type Exporter struct {
	sink Sink
	opts Options
	pipe *push.Pipeline
	// produceFn is e.produce, made once: a method value passed per export
	// would allocate.
	produceFn func(*push.Cycle) error

	// Guarded by the pipeline's export lock (used only in produce).
	enc     *encoder
	zw      *gzipbuf.Compressor // nil: no compression
	lastEnd time.Time
	req     push.Request // the request being sent, reused
}

// New returns an exporter to sink. It fails on invalid options, naming the
// option.
func New(sink Sink, opts Options) (*Exporter, error) {
	if sink == nil {
		return nil, errors.New("exporter: nil sink")
	}
	if opts.MaxPayloadBytes == 0 {
		opts.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if opts.MaxPayloadBytes < MinMaxPayloadBytes {
		return nil, fmt.Errorf("exporter: MaxPayloadBytes %d is below the minimum of %d", opts.MaxPayloadBytes, MinMaxPayloadBytes)
	}
	switch opts.WireVersion {
	case 0:
		opts.WireVersion = wire.Version
	case wire.Version, wire.Version2:
	default:
		return nil, fmt.Errorf("exporter: unknown WireVersion %d (want %d or %d)", opts.WireVersion, wire.Version, wire.Version2)
	}
	if opts.Temporality != Cumulative && opts.Temporality != Delta {
		return nil, fmt.Errorf("exporter: unknown Temporality %d", opts.Temporality)
	}
	if opts.FromEnv {
		var err error
		if opts, err = opts.fromEnv(); err != nil {
			return nil, fmt.Errorf("exporter: %w", err)
		}
	}
	resource, err := opts.Resource.attributes()
	if err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	kinds, err := delta.NewKinds(opts.Temporality == Delta, opts.TemporalityPreference, "exporter: ")
	// One temporality per payload: an asynchronous counter (view.ObservedSum)
	// under lowmemory is delta here, where OTLP makes it cumulative.
	kinds = kinds.OneTemporality()
	if err != nil {
		return nil, err
	}
	if err := delta.CheckEvictIdleAfter(opts.EvictIdleAfter, kinds.Any()); err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	e := &Exporter{sink: sink, lastEnd: time.Now()}
	switch opts.Compression {
	case NoCompression:
	case Gzip:
		zw, err := gzipbuf.New(opts.GzipLevel)
		if err != nil {
			return nil, fmt.Errorf("exporter: GzipLevel %d: %w", opts.GzipLevel, err)
		}
		e.zw = zw
	default:
		return nil, fmt.Errorf("exporter: unknown Compression %d", opts.Compression)
	}
	target := ""
	if opts.Name == "" {
		switch s := sink.(type) {
		case *HTTPSink:
			opts.Name, target = "http", s.URL
		case *WriterSink:
			opts.Name = "writer"
		default:
			opts.Name = "func"
		}
	}
	pipe, err := push.New(push.Config{
		Name: opts.Name, Target: target,
		Interval: opts.Interval, Timeout: opts.Timeout, Retry: opts.Retry,
		Queue: kinds.Any(), MaxQueuedBytes: opts.MaxQueuedBytes,
		Logger: opts.Logger, OnError: opts.OnError,
	}, e.transport, "exporter: ")
	if err != nil {
		return nil, err
	}
	e.pipe = pipe
	e.produceFn = e.produce
	c := pipe.Config()
	opts.Interval, opts.Timeout, opts.Retry, opts.MaxQueuedBytes = c.Interval, c.Timeout, c.Retry, c.MaxQueuedBytes
	e.opts = opts
	e.enc = newEncoder(opts.MaxPayloadBytes, kinds, opts.EvictIdleAfter, resource)
	e.enc.version = opts.WireVersion
	e.enc.views = pipe.ExportViews
	return e, nil
}

// Start begins exporting every Interval. Calling it again does nothing.
func (e *Exporter) Start() { e.pipe.Start(e.Export) }

// Stop ends the periodic exports and exports a final snapshot (sending
// queued payloads first), so nothing recorded before Stop is left unsent
// while the sink works. Within ctx's deadline it retries as an export does;
// it returns an error saying what it could not send.
func (e *Exporter) Stop(ctx context.Context) error {
	// Once stopped, no longer a reader that evicted series wait for.
	return e.pipe.Stop(ctx, e.produceFn, e.enc.delta.Close)
}

// Export sends the payloads queued by earlier failed delta exports, then
// snapshots the registered views and sends them, retrying each payload
// within ctx's deadline, or one Interval if ctx has none (see
// Options.Retry). It returns an error when a payload could not be sent: a
// delta payload is then queued for the next export, a cumulative one
// dropped (the next export carries the same totals). Payloads after a
// failed one in the same export are not tried: delta ones are queued; for
// cumulative ones the export stops encoding, so only the failed payload is
// counted in Stats.Dropped.
func (e *Exporter) Export(ctx context.Context) error { return e.pipe.Export(ctx, e.produceFn) }

// produce encodes a snapshot and hands each payload to the cycle.
func (e *Exporter) produce(c *push.Cycle) error {
	now := time.Now()
	start := e.lastEnd
	e.lastEnd = now
	err := e.enc.encode(start, now, func(p []byte, last bool) error {
		r := &e.req
		*r = push.Request{Body: p, Points: e.enc.points, Sequence: e.enc.seq, Part: e.enc.part - 1, Last: last,
			Oversized: len(p) > e.opts.MaxPayloadBytes}
		if e.zw != nil {
			r.Body, r.Encoding = e.zw.Compress(p), "gzip"
		}
		return c.Send(r)
	})
	return err
}

// transport hands one request to the sink.
func (e *Exporter) transport(ctx context.Context, r *push.Request) error {
	return e.sink.Send(ctx, Payload{Data: r.Body, Encoding: r.Encoding, Sequence: r.Sequence, Part: r.Part, Last: r.Last})
}

// Stats returns the exporter's counters. Safe for concurrent use.
func (e *Exporter) Stats() Stats { return e.pipe.Stats() }
