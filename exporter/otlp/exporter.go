package otlp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/gzipbuf"
	"github.com/zerostat/zerostat/internal/periodic"
	"github.com/zerostat/zerostat/selfstats"
)

// Temporality of the values written: Cumulative (as OpenCensus) or Delta.
type Temporality = wire.Temporality

// Temporalities, the same as package exporter's.
const (
	Cumulative = exporter.Cumulative
	Delta      = exporter.Delta
)

// Compressions, the same as package exporter's.
const (
	NoCompression = exporter.NoCompression
	Gzip          = exporter.Gzip
)

// Defaults.
const (
	// DefaultEndpoint is an OpenTelemetry Collector's OTLP/HTTP receiver
	// on this host (port 4318, the OTLP/HTTP default of the OTLP
	// specification).
	DefaultEndpoint = "http://localhost:4318"
	// MetricsPath is appended to Endpoint (the OTLP/HTTP path for
	// metrics).
	MetricsPath     = "/v1/metrics"
	DefaultInterval = exporter.DefaultInterval
	DefaultTimeout  = exporter.DefaultTimeout
	// DefaultInitialBackoff and DefaultMaxBackoff bound the waits between
	// retries (see Retry).
	DefaultInitialBackoff = 250 * time.Millisecond
	DefaultMaxBackoff     = 5 * time.Second
)

// ContentType is the Content-Type of the requests (OTLP/HTTP binary
// protobuf encoding).
const ContentType = "application/x-protobuf"

// Options configure an Exporter. The zero value is usable: every 10 s,
// cumulative, to http://localhost:4318/v1/metrics, uncompressed, 5 s per
// request, retrying with backoff within the interval.
type Options struct {
	// Endpoint is the receiver's base URL, http or https (the equivalent
	// of OTEL_EXPORTER_OTLP_ENDPOINT); requests are POSTed to Endpoint
	// followed by MetricsPath.
	Endpoint string
	// Header holds extra request headers (authentication, ...). It must
	// not set Content-Type or Content-Encoding, which the exporter sets.
	Header http.Header
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Interval between exports; it also bounds each export, retries
	// included.
	Interval time.Duration
	// Temporality of the values: Cumulative or Delta.
	Temporality Temporality
	// MaxQueuedBytes bounds the delta requests kept for a later export
	// when they could not be sent (default exporter.DefaultMaxQueuedBytes,
	// 16 MiB); past it the oldest are dropped and their points counted in
	// Stats.Dropped. Cumulative requests are never queued: the next export
	// carries the same totals.
	MaxQueuedBytes int
	// EvictIdleAfter, with Delta temporality, evicts a series that has not
	// changed for that many exports in a row (0: never), as
	// exporter.Options.EvictIdleAfter does.
	EvictIdleAfter int
	// Compression of requests (Gzip sends Content-Encoding: gzip), and the
	// gzip level (gzip.BestSpeed to gzip.BestCompression; 0 means
	// gzip.BestSpeed).
	Compression exporter.Compression
	GzipLevel   int
	// Timeout bounds each request.
	Timeout time.Duration
	// Retry configures retries of failed requests.
	Retry Retry
	// Resource describes the process: the resource attributes service.name
	// (empty: "unknown_service"), host.name (empty: the host name) and
	// process.pid (an int; 0: this process), then Resource.Attributes (as
	// strings).
	Resource exporter.Resource
	// OnError, if set, is called (from the export goroutine) with each
	// failed periodic export; the exporter keeps running.
	OnError func(error)
	// Logger, if set, logs changes of the exporter's state: the first
	// failure after a success (Warn), the first success after failures
	// (Info), the first partial success (Warn). Nil logs nothing.
	Logger *slog.Logger
}

// Retry configures retries. A request is retried when it fails without an
// answer (connection refused, reset, timed out) or with the status 429,
// 502, 503 or 504 (the OTLP/HTTP specification's retryable codes); other
// answers are final. The wait before retry n (from 0) is a random
// duration up to min(InitialBackoff×2ⁿ, MaxBackoff) ("full jitter", the
// policy all zerostat exporters share), or exactly the answer's
// Retry-After (seconds or an HTTP date) when it has one. Retries stop when the next wait would end after the export's
// deadline (the Interval, or the context's deadline if sooner).
type Retry struct {
	// Disabled turns retries off.
	Disabled bool
	// InitialBackoff is the first wait (0: DefaultInitialBackoff);
	// MaxBackoff caps the waits (0: DefaultMaxBackoff).
	InitialBackoff, MaxBackoff time.Duration
}

// Stats are an exporter's counters since it was created.
type Stats struct {
	Exports, Failures uint64 // export cycles, and those that failed after retries
	Requests, Retries uint64 // HTTP requests made, and those that were retries
	Points            uint64 // data points delivered
	// Dropped counts the data points given up: those of failed
	// cumulative exports (the next successful export carries their values)
	// and those of delta requests pushed out of the queue (lost).
	Dropped uint64
	// Queued is the number of delta requests waiting for a later export.
	Queued int
	// Rejected counts the data points a receiver reported it rejected
	// (partial success); they are included in Points.
	Rejected    uint64
	Bytes       uint64 // bytes of the delivered request bodies, as sent
	LastSuccess time.Time
	LastError   error
}

// PartialSuccess is a receiver's report that it rejected part of a request.
type PartialSuccess struct {
	RejectedDataPoints int64
	ErrorMessage       string
}

func (p *PartialSuccess) Error() string {
	return fmt.Sprintf("otlp: partial success: %d data points rejected: %s", p.RejectedDataPoints, p.ErrorMessage)
}

// Exporter periodically snapshots every registered view and sends it to
// an OTLP/HTTP receiver. Snapshots read the series with atomic loads:
// recorders are never blocked or slowed by a lock. Its methods are safe for
// concurrent use; exports are serialised (the export lock is held while an
// export retries).
type Exporter struct {
	opts Options
	url  string

	mu    sync.Mutex // serialises exports; guards enc, zw, state
	enc   *Encoder
	zw    *gzipbuf.Compressor // nil: no compression
	state exportState

	self *selfstats.Sink // zerostat's own health, tagged sink="otlp"

	// Guarded by mu: delta requests waiting for a later export.
	queue       []queuedReq
	queuedBytes int
	queuedN     atomic.Int64

	// runner owns the periodic loop. Its lock is not mu, so that Stop
	// does not wait for an export in progress (which may be retrying)
	// longer than its context allows.
	runner periodic.Runner

	exports, failures, requests, retries atomic.Uint64
	points, dropped, rejected, nbytes    atomic.Uint64
	lastSuccess                          atomic.Int64
	lastErr                              atomic.Pointer[error]
}

// exportState is what the Logger reports changes of.
type exportState uint8

const (
	stateOK exportState = iota
	stateFailing
	statePartial
)

// New returns an exporter configured by opts. It fails on invalid options,
// naming the option.
func New(opts Options) (*Exporter, error) {
	if opts.Endpoint == "" {
		opts.Endpoint = DefaultEndpoint
	}
	u, err := url.Parse(opts.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("otlp: Endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("otlp: Endpoint %q is not an http or https URL with a host", opts.Endpoint)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("otlp: Endpoint %q has a query or fragment", opts.Endpoint)
	}
	for k := range opts.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Type", "Content-Encoding", "Content-Length":
			return nil, fmt.Errorf("otlp: Header sets %s, which the exporter sets", k)
		}
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Interval < 0 {
		return nil, fmt.Errorf("otlp: Interval %v is negative", opts.Interval)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("otlp: Timeout %v is negative", opts.Timeout)
	}
	if opts.MaxQueuedBytes == 0 {
		opts.MaxQueuedBytes = exporter.DefaultMaxQueuedBytes
	}
	if opts.MaxQueuedBytes < 0 {
		return nil, fmt.Errorf("otlp: MaxQueuedBytes %d is negative", opts.MaxQueuedBytes)
	}
	if opts.Retry.InitialBackoff == 0 {
		opts.Retry.InitialBackoff = DefaultInitialBackoff
	}
	if opts.Retry.MaxBackoff == 0 {
		opts.Retry.MaxBackoff = max(DefaultMaxBackoff, opts.Retry.InitialBackoff)
	}
	if opts.Retry.InitialBackoff < 0 || opts.Retry.MaxBackoff < 0 {
		return nil, fmt.Errorf("otlp: Retry backoff %v..%v is negative", opts.Retry.InitialBackoff, opts.Retry.MaxBackoff)
	}
	if opts.Retry.MaxBackoff < opts.Retry.InitialBackoff {
		return nil, fmt.Errorf("otlp: Retry.MaxBackoff %v is below Retry.InitialBackoff %v", opts.Retry.MaxBackoff, opts.Retry.InitialBackoff)
	}
	e := &Exporter{url: strings.TrimRight(opts.Endpoint, "/") + MetricsPath}
	switch opts.Compression {
	case NoCompression:
	case Gzip:
		zw, err := gzipbuf.New(opts.GzipLevel)
		if err != nil {
			return nil, fmt.Errorf("otlp: GzipLevel %d: %w", opts.GzipLevel, err)
		}
		e.zw = zw
	default:
		return nil, fmt.Errorf("otlp: unknown Compression %d", opts.Compression)
	}
	if e.enc, err = NewEncoder(opts.Temporality, opts.Resource); err != nil {
		return nil, err
	}
	if err := delta.CheckEvictIdleAfter(opts.EvictIdleAfter, opts.Temporality == Delta); err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	if opts.EvictIdleAfter > 0 {
		e.enc.delta = delta.NewTracker(opts.EvictIdleAfter)
	}
	e.opts = opts
	e.self = selfstats.NewSink("otlp")
	return e, nil
}

// URL returns the URL the requests are POSTed to.
func (e *Exporter) URL() string { return e.url }

// Start begins exporting every Interval. Calling it again does nothing.
func (e *Exporter) Start() { e.runner.Start(e.opts.Interval, e.Export, e.opts.OnError) }

// Stop ends the periodic exports and exports a final snapshot, so nothing
// recorded before Stop is left unsent. It returns that export's error, or
// ctx's if ctx ends first. The final export, retries included, is bounded
// by ctx and by the Interval.
func (e *Exporter) Stop(ctx context.Context) error {
	if err := e.runner.Stop(ctx); err != nil {
		return err
	}
	err := e.Export(ctx)
	e.mu.Lock()
	e.enc.delta.Close() // no longer a reader evicted series wait for
	e.mu.Unlock()
	return err
}

// Export snapshots the registered views now and sends them in one request,
// retrying as Options.Retry says until ctx ends or the Interval has
// passed. A snapshot without data points (nothing registered; with Delta,
// nothing new) is not sent. A partial success is a success: it is counted
// in Stats.Rejected and logged, not returned.
func (e *Exporter) Export(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.exports.Add(1)
	now := time.Now()
	retries0, dropped0 := e.retries.Load(), e.dropped.Load()
	var err error
	defer func() { // zerostat/exports, retries, dropped for this sink (selfstats)
		e.self.Export(err, time.Since(now), int(e.retries.Load()-retries0), int(e.dropped.Load()-dropped0))
	}()
	selfstats.RecordViews()
	body := e.enc.Encode(now)
	n := uint64(e.enc.Points())
	if n == 0 {
		return nil // nothing to send: neither a success nor a failure
	}
	encoding := ""
	if e.zw != nil {
		body, encoding = e.zw.Compress(body), "gzip"
	}
	if err = e.flushQueue(ctx); err != nil { // older delta requests first
		return e.failed(n, e.giveUp(body, encoding, n, err))
	}
	var ps *PartialSuccess
	if ps, err = e.send(ctx, body, encoding); err != nil {
		return e.failed(n, e.giveUp(body, encoding, n, err))
	}
	e.points.Add(n)
	e.nbytes.Add(uint64(len(body)))
	e.self.Payload(len(body))
	e.succeeded(now, ps)
	return nil
}

func (e *Exporter) succeeded(now time.Time, ps *PartialSuccess) {
	e.lastSuccess.Store(now.UnixNano())
	next := stateOK
	if ps != nil {
		next = statePartial
		if ps.RejectedDataPoints > 0 {
			e.rejected.Add(uint64(ps.RejectedDataPoints))
		}
	}
	if l := e.opts.Logger; l != nil && next != e.state {
		switch {
		case next == statePartial:
			l.Warn("zerostat/otlp: the receiver rejected data points", "url", e.url,
				"rejected", ps.RejectedDataPoints, "message", ps.ErrorMessage)
		case e.state == stateFailing:
			l.Info("zerostat/otlp: exports succeed again", "url", e.url)
		}
	}
	e.state = next
}

// queuedReq is a delta request kept for a later export.
type queuedReq struct {
	body     []byte
	encoding string
	points   uint64
}

// giveUp queues a delta request that could not be sent (a copy: body is
// the encoder's buffer), pushing the oldest out past MaxQueuedBytes. It
// returns err.
func (e *Exporter) giveUp(body []byte, encoding string, points uint64, err error) error {
	if e.opts.Temporality != Delta {
		return err
	}
	e.queue = append(e.queue, queuedReq{body: bytes.Clone(body), encoding: encoding, points: points})
	e.queuedBytes += len(body)
	for e.queuedBytes > e.opts.MaxQueuedBytes && len(e.queue) > 0 {
		old := e.queue[0]
		e.queue = e.queue[1:]
		e.queuedBytes -= len(old.body)
		e.dropped.Add(old.points)
	}
	e.queuedN.Store(int64(len(e.queue)))
	return err
}

// flushQueue sends the queued delta requests, oldest first, until one
// fails.
func (e *Exporter) flushQueue(ctx context.Context) error {
	for len(e.queue) > 0 {
		q := e.queue[0]
		if _, err := e.send(ctx, q.body, q.encoding); err != nil {
			return err
		}
		e.points.Add(q.points)
		e.nbytes.Add(uint64(len(q.body)))
		e.queue[0] = queuedReq{}
		e.queue = e.queue[1:]
		e.queuedBytes -= len(q.body)
		e.queuedN.Store(int64(len(e.queue)))
	}
	return nil
}

// failed counts a failed export; its points are dropped unless they were
// queued (delta).
func (e *Exporter) failed(points uint64, err error) error {
	e.failures.Add(1)
	if e.opts.Temporality != Delta {
		e.dropped.Add(points)
	}
	stored := err
	e.lastErr.Store(&stored)
	if l := e.opts.Logger; l != nil && e.state != stateFailing {
		l.Warn("zerostat/otlp: export failed", "url", e.url, "err", err)
	}
	e.state = stateFailing
	return err
}

// Stats returns the exporter's counters. Safe for concurrent use.
func (e *Exporter) Stats() Stats {
	s := Stats{
		Exports:  e.exports.Load(),
		Failures: e.failures.Load(),
		Requests: e.requests.Load(),
		Retries:  e.retries.Load(),
		Points:   e.points.Load(),
		Dropped:  e.dropped.Load(),
		Queued:   int(e.queuedN.Load()),
		Rejected: e.rejected.Load(),
		Bytes:    e.nbytes.Load(),
	}
	if ns := e.lastSuccess.Load(); ns != 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	if p := e.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}
