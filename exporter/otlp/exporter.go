package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zerostat/zerostat/exporter"
	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/gzipbuf"
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
	// DefaultGRPCEndpoint is the Collector's OTLP/gRPC receiver on this
	// host (port 4317), without TLS (the specification's default).
	DefaultGRPCEndpoint = "http://localhost:4317"
	// MetricsPath is appended to Endpoint (the OTLP/HTTP path for
	// metrics).
	MetricsPath     = "/v1/metrics"
	DefaultInterval = push.DefaultInterval
	DefaultTimeout  = push.DefaultTimeout
	// DefaultInitialBackoff and DefaultMaxBackoff bound the waits between
	// retries (see Retry); every push exporter has the same.
	DefaultInitialBackoff = push.DefaultInitialBackoff
	DefaultMaxBackoff     = push.DefaultMaxBackoff
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
	// followed by MetricsPath. With the grpc Protocol it is the gRPC
	// target: host:port, or a URL whose scheme says whether to use TLS.
	Endpoint string
	// URL, if set, is the full URL the requests are POSTed to, used as is
	// (the root path when it has none), as
	// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is; it cannot be set with
	// Endpoint. HTTP only.
	URL string
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC, which only
	// otlpgrpc.New (module
	// github.com/zerostat/zerostat/exporter/otlp/otlpgrpc) sends.
	Protocol string
	// TLS configures the connection's TLS from files (server CA, client
	// certificate and key for mTLS), as OTEL_EXPORTER_OTLP_CERTIFICATE
	// and its kin do. With HTTP it cannot be set with Client.
	TLS TLS
	// Header holds extra request headers (authentication, ...). It must
	// not set Content-Type or Content-Encoding, which the exporter sets.
	Header http.Header
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Interval between exports; it also bounds each export, retries
	// included.
	Interval time.Duration
	// Temporality of the values: Cumulative or Delta (every view).
	Temporality Temporality
	// TemporalityPreference, if set, chooses the temporality per kind of
	// view as OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE does:
	// PreferDelta and PreferLowMemory make Count, Sum and Distribution
	// views delta, LastValue views (Gauges, which have no temporality)
	// cumulative (see exporter.TemporalityPreference). It cannot be set
	// with Temporality Delta.
	TemporalityPreference exporter.TemporalityPreference
	// MaxQueuedBytes bounds the delta requests kept for a later export
	// when they could not be sent (default exporter.DefaultMaxQueuedBytes,
	// 16 MiB); past it the oldest are dropped and counted in
	// Stats.Dropped (requests) and Stats.DroppedPoints. Cumulative
	// requests are never queued: the next export carries the same totals.
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
	// Timeout bounds each request (each attempt; 0: DefaultTimeout).
	Timeout time.Duration
	// ExportTimeout, if set, bounds each export, its attempts and retries
	// included (0: the Interval bounds it). OTEL_EXPORTER_OTLP_TIMEOUT
	// sets it, as the specification defines that variable: "the maximum
	// time the OTLP exporter will wait for each batch export".
	ExportTimeout time.Duration
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
	// FromEnv reads OpenTelemetry's environment variables into the
	// options left unset (the table in the package documentation; see
	// Options.WithEnv). Without it no variable is read.
	FromEnv bool
	// Logger logs changes of the exporter's state: the first failure
	// after a success (Warn), the first success after failures (Info),
	// the first partial success (Warn), the first full success after
	// partial ones (Info). nil: slog.Default(); a logger on
	// slog.DiscardHandler silences it.
	Logger *slog.Logger
}

// Protocols (the values of OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Retry configures retries. A request is retried when it fails without an
// answer (connection refused, reset, timed out) or with the status 429,
// 502, 503 or 504 (the OTLP/HTTP specification's retryable codes); other
// answers are final. The wait before retry n (from 0) is a random
// duration up to min(InitialBackoff×2ⁿ, MaxBackoff) ("full jitter", the
// policy all zerostat exporters share), or exactly the answer's
// Retry-After (seconds or an HTTP date) when it has one. Retries stop
// when the next wait would end after the export's deadline (the Interval,
// or the context's deadline if sooner).
type Retry = push.Retry

// Stats are an exporter's counters since it was created (push.Stats: a
// request is one OTLP request, a point one data point; Rejected counts
// the points a receiver reported rejected in a partial success).
type Stats = push.Stats

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
//
// It is the OTLP encoder and an HTTP transport on the shared push
// pipeline (package exporter/push), which owns the loop, the queue of
// delta requests, the retries and Stats.
type Exporter struct {
	opts Options
	url  string
	pipe *push.Pipeline
	// produceFn is e.produce, made once: a method value passed per export
	// would allocate.
	produceFn func(*push.Cycle) error
	http      push.HTTP
	sender    Sender // nil: http

	// Guarded by the pipeline's export lock.
	enc *Encoder
	zw  *gzipbuf.Compressor // nil: no compression
	seq uint64
	req push.Request // the request being sent, reused
}

// New returns an exporter configured by opts, sending OTLP/HTTP. It fails
// on invalid options, naming the option (or the environment variable,
// with FromEnv).
func New(opts Options) (*Exporter, error) {
	var err error
	protocol := "Protocol grpc" // what chose gRPC, for the error below
	if opts.FromEnv {
		if opts.Protocol == "" {
			if n := protocolVar(); n != "" {
				protocol = n + "=grpc"
			}
		}
		if opts, err = opts.WithEnv(); err != nil {
			return nil, err
		}
	}
	switch opts.Protocol {
	case "", ProtocolHTTP:
	case ProtocolGRPC:
		return nil, fmt.Errorf("otlp: %s is sent by otlpgrpc.New (module github.com/zerostat/zerostat/exporter/otlp/otlpgrpc)", protocol)
	default:
		return nil, fmt.Errorf("otlp: unsupported Protocol %q (want %s or %s)", opts.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	target, err := metricsURL(opts.Endpoint, opts.URL)
	if err != nil {
		return nil, err
	}
	for k, vs := range opts.Header {
		if !ValidHeaderName(k) {
			return nil, fmt.Errorf("otlp: Header %q is not a valid header name", k)
		}
		for _, v := range vs {
			if !ValidHeaderValue(v) {
				return nil, fmt.Errorf("otlp: Header %q has a value with a control character", k)
			}
		}
		switch http.CanonicalHeaderKey(k) {
		case "Content-Type", "Content-Encoding", "Content-Length":
			return nil, fmt.Errorf("otlp: Header sets %s, which the exporter sets", k)
		}
	}
	client := opts.Client
	if opts.TLS.files() && strings.HasPrefix(target, "http:") {
		return nil, fmt.Errorf("otlp: TLS files are set but %s is plain http (as OTel Go's otlpmetrichttp, zerostat refuses the combination)", target)
	}
	if opts.TLS.files() {
		if client != nil {
			return nil, errors.New("otlp: Client and TLS are both set: configure the client's TLS, or leave Client nil")
		}
		cfg, err := opts.TLS.Config()
		if err != nil {
			return nil, err
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = cfg
		client = &http.Client{Transport: t}
	}
	e, err := newExporter(opts, target, nil)
	if err != nil {
		return nil, err
	}
	e.http = push.HTTP{URL: target, Client: client, Header: requestHeader(opts.Header),
		Retry: push.RetryOTLP, Message: errorMessage, OK: e.answered}
	return e, nil
}

// ValidHeaderName reports whether k is an HTTP header name (an RFC 9110
// token), as a header of Options.Header or OTEL_EXPORTER_OTLP_HEADERS must
// be.
func ValidHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// ValidHeaderValue reports whether v may be sent as an HTTP header value:
// it holds no control character but the horizontal tab (net/http refuses
// to send a request otherwise).
func ValidHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// metricsURL returns where requests are POSTed: url as is (the root path
// when it has none), else endpoint followed by MetricsPath.
func metricsURL(endpoint, full string) (string, error) {
	name, s := "Endpoint", endpoint
	switch {
	case full != "" && endpoint != "":
		return "", errors.New("otlp: Endpoint and URL are both set; set one")
	case full != "":
		name, s = "URL", full
	case endpoint == "":
		s = DefaultEndpoint
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("otlp: %s: %w", name, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("otlp: %s %q is not an http or https URL with a host", name, s)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("otlp: %s %q has a query or fragment", name, s)
	}
	if full != "" {
		if u.Path == "" {
			s += "/"
		}
		return s, nil
	}
	return strings.TrimRight(s, "/") + MetricsPath, nil
}

// Sender sends one request over a transport other than OTLP/HTTP (package
// otlpgrpc's gRPC). body is an ExportMetricsServiceRequest in the
// protobuf binary encoding, never compressed by the exporter (compressing
// is the sender's business), valid only during the call. It returns the
// ExportMetricsServiceResponse's bytes (nil: none) or an error, wrapped by
// push.Retryable when another attempt may succeed. The pipeline calls it
// from one goroutine at a time, within each attempt's ctx.
type Sender func(ctx context.Context, body []byte) (response []byte, err error)

// NewWithSender returns an exporter configured by opts that sends each
// request with s; target names the receiver (URL, log lines). Endpoint,
// URL, Protocol, Header, Client, TLS and FromEnv are the caller's
// business (package otlpgrpc resolves them before), not read here; the
// other options are New's.
func NewWithSender(opts Options, target string, s Sender) (*Exporter, error) {
	if s == nil {
		return nil, errors.New("otlp: nil Sender")
	}
	return newExporter(opts, target, s)
}

// newExporter builds what every transport shares: the encoder, its
// temporality and compression, and the push pipeline.
func newExporter(opts Options, target string, s Sender) (*Exporter, error) {
	e := &Exporter{url: target, sender: s}
	switch opts.Compression {
	case NoCompression:
	case Gzip:
		zw, err := gzipbuf.New(opts.GzipLevel)
		if err != nil {
			return nil, fmt.Errorf("otlp: GzipLevel %d: %w", opts.GzipLevel, err)
		}
		if s == nil {
			e.zw = zw
		}
	default:
		return nil, fmt.Errorf("otlp: unknown Compression %d", opts.Compression)
	}
	if opts.Temporality != Cumulative && opts.Temporality != Delta {
		return nil, fmt.Errorf("otlp: unknown Temporality %d", opts.Temporality)
	}
	kinds, err := delta.NewKinds(opts.Temporality == Delta, opts.TemporalityPreference, "otlp: ")
	if err != nil {
		return nil, err
	}
	if err := delta.CheckEvictIdleAfter(opts.EvictIdleAfter, kinds.Any()); err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	if e.enc, err = newEncoder(kinds, opts.EvictIdleAfter, opts.Resource); err != nil {
		return nil, err
	}
	pipe, err := push.New(push.Config{
		Name: "otlp", Target: target,
		Interval: opts.Interval, Timeout: opts.Timeout, ExportTimeout: opts.ExportTimeout, Retry: opts.Retry,
		Queue: kinds.Any(), MaxQueuedBytes: opts.MaxQueuedBytes,
		Logger: opts.Logger, OnError: opts.OnError,
	}, e.transport, "otlp: ")
	if err != nil {
		return nil, err
	}
	e.enc.views = pipe.ExportViews
	c := pipe.Config()
	opts.Interval, opts.Timeout, opts.Retry, opts.MaxQueuedBytes = c.Interval, c.Timeout, c.Retry, c.MaxQueuedBytes
	e.opts, e.pipe = opts, pipe
	e.produceFn = e.produce
	return e, nil
}

// requestHeader is the user's headers with the protocol's.
func requestHeader(user http.Header) http.Header {
	h := make(http.Header, len(user)+2)
	for k, vs := range user {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	h.Set("Content-Type", ContentType)
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", userAgent)
	}
	return h
}

// URL returns the URL the requests are POSTed to (the gRPC target for
// otlpgrpc's).
func (e *Exporter) URL() string { return e.url }

// Start begins exporting every Interval. Calling it again does nothing.
func (e *Exporter) Start() { e.pipe.Start(e.Export) }

// Stop ends the periodic exports and exports a final snapshot, queued
// delta requests first, so nothing recorded before Stop is left unsent. It
// returns that export's error, or ctx's if ctx ends first. The final
// export, retries included, is bounded by ctx, or by the Interval if ctx
// has no deadline.
func (e *Exporter) Stop(ctx context.Context) error {
	// Once stopped, no longer a reader that evicted series wait for.
	return e.pipe.Stop(ctx, e.produceFn, e.enc.delta.Close)
}

// Export sends the delta requests queued by earlier failed exports, then
// snapshots the registered views and sends them in one request, retrying
// as Options.Retry says until ctx ends or the Interval has passed. A
// snapshot without data points (nothing registered; with Delta, nothing
// new) is not sent. A partial success is a success: it is counted in
// Stats.Rejected and logged, not returned.
func (e *Exporter) Export(ctx context.Context) error { return e.pipe.Export(ctx, e.produceFn) }

func (e *Exporter) produce(c *push.Cycle) error {
	body := e.enc.Encode(time.Now())
	n := e.enc.Points()
	if n == 0 {
		return nil // nothing new to send (the queue was flushed already)
	}
	e.seq++
	r := &e.req
	*r = push.Request{Body: body, Points: n, Sequence: e.seq, Last: true}
	if e.zw != nil {
		r.Body, r.Encoding = e.zw.Compress(body), "gzip"
	}
	return c.Send(r)
}

func (e *Exporter) transport(ctx context.Context, r *push.Request) error {
	if e.sender == nil {
		return e.http.Post(ctx, r)
	}
	resp, err := e.sender(ctx, r.Body)
	if err == nil && len(resp) > 0 {
		e.partial(resp)
	}
	return err
}

// answered reads a 2xx answer: a partial success is counted and logged.
func (e *Exporter) answered(h http.Header, body []byte) {
	if !isProtobuf(h) || len(body) == 0 {
		return
	}
	e.partial(body)
}

// partial reads an ExportMetricsServiceResponse: a partial success is
// counted and logged.
func (e *Exporter) partial(body []byte) {
	if ps, _ := parsePartialSuccess(body); ps != nil { // undecodable: not a partial success
		e.pipe.Rejected(ps.RejectedDataPoints, ps.ErrorMessage)
	}
}

// Stats returns the exporter's counters. Safe for concurrent use.
func (e *Exporter) Stats() Stats { return e.pipe.Stats() }
