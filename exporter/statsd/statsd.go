package statsd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/internal/delta"
)

// Dialect is the line format: DogStatsD (tags, distributions, multi-value
// lines) or plain StatsD (Etsy's: no tags).
type Dialect uint8

const (
	// DogStatsD lines: name:value|type|@rate|#key:value,... Tags are
	// tags. Distributions are |d by default; protocol 1.1 multi-value
	// lines (name:v1:v2|d, Datadog agent ≥ 7.25) unless NoMultiValue.
	DogStatsD Dialect = iota
	// Plain StatsD lines, as Etsy statsd reads them: name:value|type|@rate.
	// Tags are folded into the name, ".<key>.<value>" per tag (Graphite
	// path segments). Distributions are |ms timers by default; one value
	// per line.
	Plain
)

// Distribution types (Options.DistributionType).
const (
	TypeDistribution = "d"  // DogStatsD: aggregated by Datadog across hosts
	TypeHistogram    = "h"  // DogStatsD: aggregated by the agent; statsd_exporter reads it as a timer without /1000
	TypeTimer        = "ms" // StatsD's timer (statsd_exporter divides it by 1000: seconds)
)

// Defaults.
const (
	DefaultAddr = "127.0.0.1:8125"
	DefaultPort = "8125"
	// DefaultUDPDatagramBytes keeps a UDP datagram in one Ethernet frame
	// (1500 bytes less IPv4 and UDP headers and some margin): datadog-go's
	// OptimalUDPPayloadSize, 1432.
	DefaultUDPDatagramBytes = 1432
	// DefaultUDSDatagramBytes is datadog-go's DefaultMaxAgentPayloadSize
	// for Unix sockets, 8192, which the agent's
	// dogstatsd_buffer_size (8192) reads whole; streams write batches of
	// this size too.
	DefaultUDSDatagramBytes = 8192
	DefaultInterval         = push.DefaultInterval
	DefaultTimeout          = push.DefaultTimeout
)

// Retry configures the retries of the Unix-socket and stream transports
// (push.Retry); UDP sends are never retried.
type Retry = push.Retry

// Stats are the exporter's counters since it was created (push.Stats): a
// request is one datagram (or one stream write), a point one line.
type Stats = push.Stats

// Options configure an Exporter. The zero value sends DogStatsD over UDP
// to 127.0.0.1:8125 every 10 s.
type Options struct {
	// Addr is the agent: "host:port" or "udp://host:port" (UDP; a host
	// alone gets port 8125), "tcp://host:port", "unix:///path" (a Unix
	// socket, datagram or stream as the agent's socket is, as datadog-go
	// guesses), "unixgram:///path", "unixstream:///path". Default
	// 127.0.0.1:8125 (with FromEnv, the DD_* variables first).
	Addr string
	// Dialect: DogStatsD (default) or Plain.
	Dialect Dialect
	// DistributionType is the type a native distribution's values are
	// sent as: TypeDistribution (the DogStatsD default), TypeHistogram,
	// or TypeTimer (the Plain default). Plain allows TypeTimer and
	// TypeHistogram.
	DistributionType string
	// NoMultiValue sends one value per line (DogStatsD before protocol
	// 1.1: agents before 7.25).
	NoMultiValue bool
	// OpenCensusDatadog sends every view as the OpenCensus Datadog
	// exporter (github.com/DataDog/opencensus-go-exporter-datadog) does:
	// its names, its counts, its cumulative gauges for sums and
	// distributions (docs/metric-mapping.md), so a service migrating from
	// it keeps its dashboards. Percentiles, DisableCountPerBuckets and
	// TagMetricNames are that exporter's options of the same names.
	OpenCensusDatadog bool
	// Percentiles (each in (0, 1]) adds a gauge per percentile to each
	// distribution in OpenCensusDatadog mode, "<name>.<p×100>percentile"
	// (the exporter's client-percentiles branch).
	Percentiles []float64
	// DisableCountPerBuckets leaves out the ".count_per_bucket" gauges in
	// OpenCensusDatadog mode.
	DisableCountPerBuckets bool
	// TagMetricNames appends "_<key>" per tag key to the metric names in
	// OpenCensusDatadog mode.
	TagMetricNames bool
	// Namespace, if set, prefixes every metric name with Namespace + ".".
	Namespace string
	// Tags are added to every line, "key:value" (or "key"), in this
	// order, before the series' own (as datadog-go's WithTags). Plain
	// folds them into the name.
	Tags []string
	// MaxDatagramBytes bounds each datagram (default 1432 for UDP, 8192
	// for Unix datagram sockets); for streams, the size of each write
	// (default 8192).
	MaxDatagramBytes int
	// Interval between exports (default 10 s, the agents' flush interval).
	Interval time.Duration
	// Timeout bounds each send (default 5 s).
	Timeout time.Duration
	// Retry shapes the retries of the Unix-socket and stream transports.
	Retry Retry
	// MaxQueuedBytes bounds what a stream transport keeps for the next
	// export while the agent is unreachable (default 16 MiB); past it the
	// oldest writes are dropped and counted.
	MaxQueuedBytes int
	// EvictIdleAfter evicts a series that has not changed for that many
	// exports in a row (0: never), as exporter.Options.EvictIdleAfter.
	EvictIdleAfter int
	// FromEnv reads Datadog's variables into what is left unset: the
	// agent's address from DD_DOGSTATSD_URL, or DD_AGENT_HOST and
	// DD_DOGSTATSD_PORT; the tags env, service and version from DD_ENV,
	// DD_SERVICE and DD_VERSION, and dd.internal.entity_id from
	// DD_ENTITY_ID (as datadog-go v5 adds them).
	FromEnv bool
	// Logger logs when exports start failing and when they recover.
	// nil: slog.Default().
	Logger *slog.Logger
	// OnError, if set, is called with each failed periodic export.
	OnError func(error)
}

// Exporter sends every registered view to a StatsD or DogStatsD agent on
// an interval (Start, Stop) or on demand (Export).
//
// It is the StatsD encoder and a socket transport on the shared push
// pipeline (package exporter/push), which owns the loop, the retries, the
// queue of a stream transport, Stats and the self-metrics.
//
// Concurrency: safe for concurrent use; exports are serialised by the
// pipeline, which guards the encoder and the connection. Recorders never
// wait for an export: it reads series with atomic loads.
//
// End of life:
//
//	call             what happens
//	Stop             ends the periodic exports, then exports once more (queued stream writes first)
//	                 within ctx, closes the socket; returns that export's error
//	Stop again       exports once more (counts: nothing new), as Export
//	Export after     dials again and sends what is new
//	Stats, Addr      always valid
type Exporter struct {
	opts      Options
	ep        endpoint
	pipe      *push.Pipeline
	conn      *conn
	enc       *encoder
	produceFn func(*push.Cycle) error
	releaseFn func()
	seq       uint64
	cycle     *push.Cycle // the export in progress (guarded by the pipeline)
	req       push.Request
	sendFn    func(body []byte, lines int) error
}

// New returns an exporter; it fails on invalid options, naming the option.
func New(opts Options) (*Exporter, error) {
	if opts.FromEnv {
		opts = opts.WithEnv()
	}
	ep, err := parseAddr(opts.Addr)
	if err != nil {
		return nil, err
	}
	switch opts.Dialect {
	case DogStatsD:
		if opts.DistributionType == "" {
			opts.DistributionType = TypeDistribution
		}
	case Plain:
		if opts.DistributionType == "" {
			opts.DistributionType = TypeTimer
		}
		if opts.DistributionType == TypeDistribution {
			return nil, errors.New("statsd: DistributionType d is DogStatsD's: Plain sends ms or h")
		}
	default:
		return nil, fmt.Errorf("statsd: unknown Dialect %d", opts.Dialect)
	}
	switch opts.DistributionType {
	case TypeDistribution, TypeHistogram, TypeTimer:
	default:
		return nil, fmt.Errorf("statsd: DistributionType %q is not d, h or ms", opts.DistributionType)
	}
	for _, p := range opts.Percentiles {
		if !(p > 0 && p <= 1) || math.IsNaN(p) {
			return nil, fmt.Errorf("statsd: Percentiles: %v is not in (0, 1]", p)
		}
	}
	if len(opts.Percentiles) > 0 && !opts.OpenCensusDatadog {
		return nil, errors.New("statsd: Percentiles are sent in OpenCensusDatadog mode only (native distributions carry every bucket)")
	}
	if opts.MaxDatagramBytes < 0 {
		return nil, fmt.Errorf("statsd: MaxDatagramBytes %d is negative", opts.MaxDatagramBytes)
	}
	if opts.MaxDatagramBytes == 0 {
		opts.MaxDatagramBytes = DefaultUDSDatagramBytes
		if ep.network == "udp" {
			opts.MaxDatagramBytes = DefaultUDPDatagramBytes
		}
	}
	if err := delta.CheckEvictIdleAfter(opts.EvictIdleAfter, true); err != nil {
		return nil, fmt.Errorf("statsd: %w", err)
	}
	e := &Exporter{ep: ep, conn: &conn{ep: ep, max: opts.MaxDatagramBytes}}
	stream := ep.network == "tcp" || ep.network == "unix"
	retryCfg := opts.Retry
	if ep.network == "udp" {
		retryCfg.Disabled = true
	}
	pipe, err := push.New(push.Config{
		Name: "statsd", Target: ep.target(),
		Interval: opts.Interval, Timeout: opts.Timeout, Retry: retryCfg,
		// Counts and distributions are the interval's changes: what a
		// stream could not send waits for the next export. A datagram
		// socket queues nothing (the agent's own buffers are the queue).
		Queue: stream, MaxQueuedBytes: opts.MaxQueuedBytes,
		Logger: opts.Logger, OnError: opts.OnError,
	}, e.conn.send, "statsd: ")
	if err != nil {
		return nil, err
	}
	c := pipe.Config()
	opts.Interval, opts.Timeout, opts.MaxQueuedBytes = c.Interval, c.Timeout, c.MaxQueuedBytes
	if ep.network != "udp" {
		opts.Retry = c.Retry
	}
	e.opts, e.pipe = opts, pipe
	e.enc = newEncoder(&e.opts, ep.datagram(), opts.MaxDatagramBytes)
	e.enc.views = pipe.ExportViews
	e.sendFn = e.sendDatagram
	e.enc.send = e.sendFn
	e.produceFn = e.produce
	e.releaseFn = e.release
	return e, nil
}

// Addr returns the agent's address, as Options.Addr writes it.
func (e *Exporter) Addr() string { return e.ep.String() }

// Start begins exporting every Interval. Calling it again does nothing.
func (e *Exporter) Start() { e.pipe.Start(e.Export) }

// Stop ends the periodic exports and exports a final time within ctx, so
// that nothing recorded before Stop is left unsent, then closes the
// socket. It returns that export's error, or ctx's if ctx ends first.
func (e *Exporter) Stop(ctx context.Context) error {
	return e.pipe.Stop(ctx, e.produceFn, e.releaseFn)
}

// Export sends what changed since the last export (the gauges' current
// values, every time) now, within ctx (or Interval). Safe for concurrent
// use; exports are serialised.
func (e *Exporter) Export(ctx context.Context) error { return e.pipe.Export(ctx, e.produceFn) }

// Stats returns the counters. Safe for concurrent use.
func (e *Exporter) Stats() Stats { return e.pipe.Stats() }

func (e *Exporter) produce(c *push.Cycle) error {
	e.cycle = c
	e.seq++
	e.req.Part = 0
	err := e.enc.encode()
	e.cycle = nil
	return err
}

// sendDatagram hands one datagram (or stream write) to the cycle.
func (e *Exporter) sendDatagram(body []byte, lines int) error {
	r := &e.req
	*r = push.Request{Body: body, Points: lines, Sequence: e.seq, Part: r.Part}
	err := e.cycle.Send(r)
	e.req.Part++
	return err
}

// release lets go of the delta reader's registration and the socket, at
// the end of Stop's final export.
func (e *Exporter) release() {
	e.enc.tracker.Close()
	e.conn.close()
}
