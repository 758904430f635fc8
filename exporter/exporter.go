package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/exporter/wire"
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
	// Timeout bounds each Send.
	Timeout time.Duration
	// Resource describes the process. Empty fields get defaults: the
	// service name "unknown_service", the host name, the process id.
	Resource Resource
	// OnError, if set, is called (from the export goroutine) with each
	// failed export; the exporter keeps running.
	OnError func(error)
}

// Resource identifies the process the views belong to.
type Resource struct {
	ServiceName string
	Host        string
	PID         int
	// Attributes are added after service.name, host.name and process.pid.
	Attributes []wire.Attribute
}

func (r Resource) attributes() []wire.Attribute {
	if r.ServiceName == "" {
		r.ServiceName = "unknown_service"
	}
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	if r.PID == 0 {
		r.PID = os.Getpid()
	}
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
	Oversized         uint64 // payloads over MaxPayloadBytes (one large row)
	LastSuccess       time.Time
	LastError         error
}

// Exporter periodically snapshots every registered view and sends the
// encoded snapshot to a sink. Snapshots read the series with atomic loads:
// recorders are never blocked or slowed by a lock. Its methods are safe for
// concurrent use; exports are serialised.
type Exporter struct {
	sink Sink
	opts Options

	mu       sync.Mutex // serialises exports; guards enc, zbuf, zw, lastEnd
	enc      *encoder
	zbuf     bytes.Buffer
	zw       *gzip.Writer
	lastEnd  time.Time
	started  bool
	stopping chan struct{}
	done     chan struct{}

	exports, failures, payloads, nbytes, oversized atomic.Uint64
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
	e := &Exporter{sink: sink, opts: opts, lastEnd: time.Now()}
	switch opts.Compression {
	case NoCompression:
	case Gzip:
		if opts.GzipLevel == 0 {
			opts.GzipLevel = gzip.BestSpeed
		}
		zw, err := gzip.NewWriterLevel(&e.zbuf, opts.GzipLevel)
		if err != nil {
			return nil, fmt.Errorf("exporter: GzipLevel %d: %w", opts.GzipLevel, err)
		}
		e.zw = zw
	default:
		return nil, fmt.Errorf("exporter: unknown Compression %d", opts.Compression)
	}
	e.opts = opts
	e.enc = newEncoder(opts.MaxPayloadBytes, opts.Temporality, opts.Resource.attributes())
	return e, nil
}

// Start begins exporting every Interval. Calling it again does nothing.
func (e *Exporter) Start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started {
		return
	}
	e.started = true
	e.stopping, e.done = make(chan struct{}), make(chan struct{})
	go e.loop(e.stopping, e.done)
}

func (e *Exporter) loop(stopping, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(e.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-stopping:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), e.opts.Interval)
			if err := e.Export(ctx); err != nil && e.opts.OnError != nil {
				e.opts.OnError(err)
			}
			cancel()
		}
	}
}

// Stop ends the periodic exports and exports a final snapshot, so nothing
// recorded before Stop is left unsent. It returns that export's error, or
// ctx's if ctx ends first.
func (e *Exporter) Stop(ctx context.Context) error {
	e.mu.Lock()
	stopping, done := e.stopping, e.done
	e.started = false
	e.stopping, e.done = nil, nil
	e.mu.Unlock()
	if stopping != nil {
		close(stopping)
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return e.Export(ctx)
}

// Export snapshots the registered views now and sends the payloads. It
// returns the first send error (the remaining parts of that cycle are not
// sent).
func (e *Exporter) Export(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.exports.Add(1)
	now := time.Now()
	start := e.lastEnd
	e.lastEnd = now
	err := e.enc.encode(start, now, func(p []byte, last bool) error {
		return e.send(ctx, p, last)
	})
	e.oversized.Store(uint64(e.enc.oversized))
	if err != nil {
		e.failures.Add(1)
		stored := err // a copy, so err itself does not escape on success
		e.lastErr.Store(&stored)
		return err
	}
	e.lastSuccess.Store(now.UnixNano())
	return nil
}

func (e *Exporter) send(ctx context.Context, data []byte, last bool) error {
	p := Payload{Data: data, Sequence: e.enc.seq, Part: e.enc.part - 1, Last: last}
	if e.zw != nil {
		e.zbuf.Reset()
		e.zw.Reset(&e.zbuf)
		if _, err := e.zw.Write(data); err != nil {
			return fmt.Errorf("exporter: gzip: %w", err)
		}
		if err := e.zw.Close(); err != nil {
			return fmt.Errorf("exporter: gzip: %w", err)
		}
		p.Data, p.Encoding = e.zbuf.Bytes(), "gzip"
	}
	// A context of its own only when ctx's deadline is later than the
	// send timeout: creating one allocates.
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > e.opts.Timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.opts.Timeout)
		defer cancel()
	}
	if err := e.sink.Send(ctx, p); err != nil {
		return fmt.Errorf("exporter: sending payload %d.%d (%d bytes): %w", p.Sequence, p.Part, len(p.Data), err)
	}
	e.payloads.Add(1)
	e.nbytes.Add(uint64(len(p.Data)))
	return nil
}

// Stats returns the exporter's counters.
func (e *Exporter) Stats() Stats {
	s := Stats{
		Exports:   e.exports.Load(),
		Failures:  e.failures.Load(),
		Payloads:  e.payloads.Load(),
		Bytes:     e.nbytes.Load(),
		Oversized: e.oversized.Load(),
	}
	if ns := e.lastSuccess.Load(); ns != 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	if p := e.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}
