package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/gzipbuf"
	"github.com/zerostat/zerostat/internal/periodic"
	"github.com/zerostat/zerostat/internal/retry"
	"github.com/zerostat/zerostat/selfstats"
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
	DefaultInterval        = 10 * time.Second
	DefaultMaxPayloadBytes = 1 << 20
	MinMaxPayloadBytes     = 1 << 10
	DefaultTimeout         = 5 * time.Second
)

// Options configure an Exporter. The zero value is usable: every 10 s,
// cumulative, uncompressed payloads of at most 1 MiB, 5 s per send.
type Options struct {
	// Interval between exports.
	Interval time.Duration
	// Temporality of the values: Cumulative (as OpenCensus) or Delta.
	Temporality wire.Temporality
	// MaxPayloadBytes caps a payload's size before compression; a larger
	// snapshot is split into several self-contained payloads. A single row
	// larger than the cap is sent alone, oversized. At least 1 KiB.
	MaxPayloadBytes int
	// Compression of payloads, and the gzip level (gzip.BestSpeed to
	// gzip.BestCompression; 0 means gzip.BestSpeed).
	Compression Compression
	GzipLevel   int
	// Timeout bounds each attempt to send a payload. An attempt that runs
	// out of it is retried while the export's deadline has time left.
	Timeout time.Duration
	// RetryBackoff and RetryMaxBackoff shape the retries of a payload whose
	// send failed in a way worth retrying (network errors, HTTP 429 and
	// 5xx): exponential backoff with full jitter from RetryBackoff (default
	// 100 ms) up to RetryMaxBackoff (default 5 s), honouring Retry-After,
	// for as long as the export's context allows (the periodic loop gives
	// each export one Interval).
	RetryBackoff, RetryMaxBackoff time.Duration
	// MaxQueuedBytes bounds the delta payloads kept for a later export when
	// they could not be sent (default 16 MiB); past it the oldest are
	// dropped and counted. Cumulative payloads are never queued: the next
	// export carries the same totals.
	MaxQueuedBytes int
	// EvictIdleAfter, with Delta temporality, evicts a series that has not
	// changed for that many exports in a row (0: never): its memory and
	// its place under the view's cardinality limit are given back once
	// every delta exporter has sent its final values. Recording its tags
	// again creates it anew. See docs/reliability.md.
	EvictIdleAfter int
	// Resource describes the process. Empty fields get defaults: the
	// service name "unknown_service:<executable name>", the host name,
	// the process id.
	Resource Resource
	// OnError, if set, is called (from the export goroutine) with each
	// failed export; the exporter keeps running.
	OnError func(error)
	// Logf logs the exporter's changes of state, once each: exports
	// starting to fail, and recovering. Default: log.Printf; set a no-op
	// function to silence it.
	Logf func(format string, args ...any)
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

func (r Resource) attributes() []wire.Attribute {
	r = r.WithDefaults()
	attrs := []wire.Attribute{
		{Key: "service.name", Value: r.ServiceName},
		{Key: "host.name", Value: r.Host},
		{Key: "process.pid", Value: strconv.Itoa(r.PID)},
	}
	return append(attrs, r.Attributes...)
}

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

// Stats are an exporter's counters since it was created.
type Stats struct {
	Exports, Failures uint64 // export cycles, and those that failed
	Payloads, Bytes   uint64 // payloads sent and their bytes (as sent)
	Retries           uint64 // send attempts beyond the first
	Oversized         uint64 // payloads over MaxPayloadBytes (one large row)
	Queued            int    // delta payloads waiting for a later export
	QueuedBytes       int
	Dropped           uint64 // payloads given up: a cumulative one that failed (its cycle's later parts are not encoded), delta ones pushed out of the queue
	DroppedBytes      uint64
	LastSuccess       time.Time
	LastError         error
}

// DefaultMaxQueuedBytes is the default of Options.MaxQueuedBytes.
const DefaultMaxQueuedBytes = 16 << 20

// Retryable marks an error returned by a Sink as worth retrying (after
// after, if positive, else after the backoff). HTTPSink marks network
// errors, 429 and 5xx answers so.
func Retryable(err error, after time.Duration) error { return retry.Retryable(err, after) }

// queued is a payload kept for a later export.
type queued struct {
	p    Payload
	data []byte // owns p.Data
}

// Exporter periodically snapshots every registered view and sends the
// encoded snapshot to a sink. Snapshots read the series with atomic loads:
// recorders are never blocked or slowed by a lock. Its methods are safe for
// concurrent use; exports are serialised.
type Exporter struct {
	sink Sink
	opts Options

	runner periodic.Runner

	mu      sync.Mutex // serialises exports; guards enc, zw, lastEnd
	enc     *encoder
	zw      *gzipbuf.Compressor // nil: no compression
	lastEnd time.Time

	self *selfstats.Sink

	// Guarded by mu.
	queue        []queued
	queuedBytes  int
	lastCycleErr error
	failing      bool
	failedRuns   int

	exports, failures, payloads, nbytes, oversized atomic.Uint64
	retries, dropped, droppedBytes                 atomic.Uint64
	queuedN, queuedB                               atomic.Int64
	lastSuccess                                    atomic.Int64
	lastErr                                        atomic.Pointer[error]
}

// New returns an exporter to sink. It fails on invalid options, naming the
// option.
func New(sink Sink, opts Options) (*Exporter, error) {
	if sink == nil {
		return nil, errors.New("exporter: nil sink")
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Interval < 0 {
		return nil, fmt.Errorf("exporter: Interval %v is negative", opts.Interval)
	}
	if opts.MaxPayloadBytes == 0 {
		opts.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if opts.MaxPayloadBytes < MinMaxPayloadBytes {
		return nil, fmt.Errorf("exporter: MaxPayloadBytes %d is below the minimum of %d", opts.MaxPayloadBytes, MinMaxPayloadBytes)
	}
	if opts.Temporality != Cumulative && opts.Temporality != Delta {
		return nil, fmt.Errorf("exporter: unknown Temporality %d", opts.Temporality)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("exporter: Timeout %v is negative", opts.Timeout)
	}
	if err := delta.CheckEvictIdleAfter(opts.EvictIdleAfter, opts.Temporality == Delta); err != nil {
		return nil, fmt.Errorf("exporter: %w", err)
	}
	if opts.RetryBackoff < 0 || opts.RetryMaxBackoff < 0 {
		return nil, fmt.Errorf("exporter: RetryBackoff %v and RetryMaxBackoff %v must not be negative", opts.RetryBackoff, opts.RetryMaxBackoff)
	}
	if opts.MaxQueuedBytes == 0 {
		opts.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if opts.MaxQueuedBytes < 0 {
		return nil, fmt.Errorf("exporter: MaxQueuedBytes %d is negative", opts.MaxQueuedBytes)
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	e := &Exporter{sink: sink, opts: opts, lastEnd: time.Now()}
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
	if opts.Name == "" {
		switch sink.(type) {
		case *HTTPSink:
			opts.Name = "http"
		case *WriterSink:
			opts.Name = "writer"
		default:
			opts.Name = "func"
		}
	}
	e.opts = opts
	e.self = selfstats.NewSink(opts.Name)
	e.enc = newEncoder(opts.MaxPayloadBytes, opts.Temporality, opts.EvictIdleAfter, opts.Resource.attributes())
	return e, nil
}

// Start begins exporting every Interval. Calling it again does nothing.
func (e *Exporter) Start() { e.runner.Start(e.opts.Interval, e.Export, e.opts.OnError) }

// Stop ends the periodic exports and exports a final snapshot (sending
// queued payloads first), so nothing recorded before Stop is left unsent
// while the sink works. Within ctx's deadline it retries as an export does;
// it returns an error saying what it could not send.
func (e *Exporter) Stop(ctx context.Context) error {
	if err := e.runner.Stop(ctx); err != nil {
		return err
	}
	err := e.Export(ctx)
	e.mu.Lock()
	e.enc.delta.Close() // no longer a reader evicted series wait for
	e.mu.Unlock()
	if s := e.Stats(); s.Queued > 0 {
		return fmt.Errorf("exporter: stopped with %d payloads (%d bytes) unsent: %w", s.Queued, s.QueuedBytes, err)
	}
	return err
}

// Export sends the payloads queued by earlier failed delta exports, then
// snapshots the registered views and sends them, retrying each payload
// within ctx's deadline, or one Interval if ctx has none (see
// Options.RetryBackoff). It returns an error
// when a payload could not be sent: a delta payload is then queued for the
// next export, a cumulative one dropped (the next export carries the same
// totals). Payloads after a failed one in the same export are not tried:
// delta ones are queued; for cumulative ones the export stops encoding,
// so only the failed payload is counted in Stats.Dropped.
func (e *Exporter) Export(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.exports.Add(1)
	began := time.Now()
	retries0, dropped0 := e.retries.Load(), e.dropped.Load()
	defer func() {
		e.self.Export(e.lastCycleErr, time.Since(began), int(e.retries.Load()-retries0), int(e.dropped.Load()-dropped0))
	}()
	selfstats.RecordViews() // zerostat/live_series, overflowed_recordings and evicted_series, in this snapshot
	err := e.flushQueue(ctx)
	now := time.Now()
	start := e.lastEnd
	e.lastEnd = now
	encErr := e.enc.encode(start, now, func(p []byte, last bool) error {
		if err != nil { // the sink failed already: do not wait on it again
			return e.giveUp(p, last, err)
		}
		if serr := e.send(ctx, p, last); serr != nil {
			err = serr
			return e.giveUp(p, last, serr)
		}
		return nil
	})
	e.oversized.Store(uint64(e.enc.oversized))
	if err == nil {
		err = encErr
	}
	e.queuedN.Store(int64(len(e.queue)))
	e.queuedB.Store(int64(e.queuedBytes))
	e.lastCycleErr = err
	if err != nil {
		e.failures.Add(1)
		stored := err // a copy, so err itself does not escape on success
		e.lastErr.Store(&stored)
		e.failedRuns++
		if !e.failing {
			e.failing = true
			e.opts.Logf("zerostat exporter: exports failing: %v", err)
		}
		return err
	}
	if e.failing {
		e.opts.Logf("zerostat exporter: exports recovered after %d failed", e.failedRuns)
		e.failing, e.failedRuns = false, 0
	}
	e.lastSuccess.Store(now.UnixNano())
	return nil
}

// giveUp queues a delta payload that could not be sent, or drops a
// cumulative one. It returns nil for a delta payload so that the encoder
// goes on (and every part of the cycle is queued); the error otherwise, so
// that it stops.
func (e *Exporter) giveUp(data []byte, last bool, err error) error {
	p := e.payload(data, last)
	if e.opts.Temporality != Delta {
		e.dropped.Add(1)
		e.droppedBytes.Add(uint64(len(p.Data)))
		return err
	}
	q := queued{p: p, data: bytes.Clone(p.Data)}
	q.p.Data = q.data
	e.queue = append(e.queue, q)
	e.queuedBytes += len(q.data)
	for e.queuedBytes > e.opts.MaxQueuedBytes && len(e.queue) > 0 {
		old := e.queue[0]
		e.queue = e.queue[1:]
		e.queuedBytes -= len(old.data)
		e.dropped.Add(1)
		e.droppedBytes.Add(uint64(len(old.data)))
	}
	return nil
}

// flushQueue sends queued payloads, oldest first, until one fails.
func (e *Exporter) flushQueue(ctx context.Context) error {
	for len(e.queue) > 0 {
		q := e.queue[0]
		if err := e.deliver(ctx, q.p); err != nil {
			return err
		}
		e.queue[0] = queued{}
		e.queue = e.queue[1:]
		e.queuedBytes -= len(q.data)
	}
	e.queue = e.queue[:0:0]
	return nil
}

// payload compresses data if configured and describes it.
func (e *Exporter) payload(data []byte, last bool) Payload {
	p := Payload{Data: data, Sequence: e.enc.seq, Part: e.enc.part - 1, Last: last}
	if e.zw != nil {
		p.Data, p.Encoding = e.zw.Compress(data), "gzip"
	}
	return p
}

func (e *Exporter) send(ctx context.Context, data []byte, last bool) error {
	return e.deliver(ctx, e.payload(data, last))
}

// deliver sends p, retrying within ctx's deadline, or within one Interval
// when ctx has none: retries are always bounded.
func (e *Exporter) deliver(ctx context.Context, p Payload) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.opts.Interval)
		defer cancel()
	}
	pol := retry.Policy{Initial: e.opts.RetryBackoff, Max: e.opts.RetryMaxBackoff}
	attempts, err := retry.Do(ctx, pol, func(ctx context.Context) error {
		// A context of its own only when ctx's deadline is later than
		// the send timeout: creating one allocates.
		actx := ctx
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > e.opts.Timeout {
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(ctx, e.opts.Timeout)
			defer cancel()
		}
		err := e.sink.Send(actx, p)
		if err != nil && actx != ctx && actx.Err() != nil && ctx.Err() == nil {
			// This attempt ran out of its own time, but the export has
			// time left: a slow backend is worth another try.
			var re *retry.Error
			if !errors.As(err, &re) {
				err = retry.Retryable(err, 0)
			}
		}
		return err
	})
	if attempts > 1 {
		e.retries.Add(uint64(attempts - 1))
	}
	if err != nil {
		return fmt.Errorf("exporter: sending payload %d.%d (%d bytes, %d attempts): %w", p.Sequence, p.Part, len(p.Data), attempts, err)
	}
	e.payloads.Add(1)
	e.nbytes.Add(uint64(len(p.Data)))
	e.self.Payload(len(p.Data))
	return nil
}

// Stats returns the exporter's counters.
func (e *Exporter) Stats() Stats {
	s := Stats{
		Exports:      e.exports.Load(),
		Failures:     e.failures.Load(),
		Payloads:     e.payloads.Load(),
		Bytes:        e.nbytes.Load(),
		Retries:      e.retries.Load(),
		Oversized:    e.oversized.Load(),
		Queued:       int(e.queuedN.Load()),
		QueuedBytes:  int(e.queuedB.Load()),
		Dropped:      e.dropped.Load(),
		DroppedBytes: e.droppedBytes.Load(),
	}
	if ns := e.lastSuccess.Load(); ns != 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	if p := e.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}
