package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/periodic"
	"github.com/zerostat/zerostat/internal/retry"
	"github.com/zerostat/zerostat/selfstats"
)

// Defaults shared by every push exporter.
const (
	DefaultInterval       = 10 * time.Second
	DefaultTimeout        = 5 * time.Second
	DefaultMaxQueuedBytes = 16 << 20
	// DefaultInitialBackoff and DefaultMaxBackoff bound the waits between
	// retries (see Retry).
	DefaultInitialBackoff = 100 * time.Millisecond
	DefaultMaxBackoff     = 5 * time.Second
)

// Retry configures the retries of a request that failed in a way worth
// retrying (no answer, or an answer the exporter's protocol calls
// retryable). The wait before retry n (from 0) is a random duration up to
// min(InitialBackoff×2ⁿ, MaxBackoff) ("full jitter", so that many
// processes failing together do not retry together), or exactly the
// answer's Retry-After when it has one. Retries stop when the next wait
// would end after the export's deadline (one Interval, or the context's
// deadline if sooner).
type Retry struct {
	// Disabled turns retries off: every failure is final.
	Disabled bool
	// InitialBackoff is the first wait's ceiling (0: DefaultInitialBackoff);
	// MaxBackoff caps the ceilings (0: DefaultMaxBackoff, or
	// InitialBackoff if larger).
	InitialBackoff, MaxBackoff time.Duration
}

// Request is one encoded body, ready for the transport: a msgpack
// payload, an OTLP request, a remote-write request.
type Request struct {
	// Body is what the transport sends, compressed when Encoding says so.
	// It is valid only during the call that receives it: the pipeline
	// copies a request it queues.
	Body     []byte
	Encoding string // Content-Encoding: "", "gzip", "snappy"
	// Points is the number of data points (rows, samples) the request
	// carries, for Stats.
	Points int
	// Sequence is the export cycle (from 1), Part the request within it
	// (from 0), Last whether it is the cycle's last.
	Sequence, Part uint64
	Last           bool
	// Oversized says the request is over the exporter's size cap (a
	// single row larger than the cap is sent alone); counted in Stats.
	Oversized bool
}

// Transport sends one request, once: the pipeline times, retries and
// queues. It returns an error wrapped by Retryable when another attempt
// may succeed, any other error when it cannot. It is called from one
// goroutine at a time.
type Transport func(ctx context.Context, r *Request) error

// Config configures a Pipeline. Exporters fill it from their options.
type Config struct {
	// Name tags the exporter's self-observability (selfstats, tag
	// "sink") and its log lines.
	Name string
	// Target says where the requests go, for log lines (a URL).
	Target string
	// Interval between exports (0: DefaultInterval). It also bounds an
	// export without a deadline of its own, retries included.
	Interval time.Duration
	// Timeout bounds each attempt (0: DefaultTimeout). An attempt that
	// runs out of it is retried while the export has time left.
	Timeout time.Duration
	// ExportTimeout, if set, bounds each export, its attempts and retries
	// included (OpenTelemetry's OTEL_EXPORTER_OTLP_TIMEOUT: "the maximum
	// time the OTLP exporter will wait for each batch export"), within
	// the Interval and the caller's deadline.
	ExportTimeout time.Duration
	Retry         Retry
	// Queue keeps the requests that could not be sent (delta
	// temporality: each carries values no later request repeats) and
	// sends them, oldest first, before anything newer: on the next export
	// and on Stop. Without it a failed request is dropped (cumulative: the
	// next export carries the same totals).
	Queue bool
	// MaxQueuedBytes bounds the queue (0: DefaultMaxQueuedBytes); past it
	// the oldest requests are dropped and counted.
	MaxQueuedBytes int
	// Logger logs the changes of the exporter's state, once each: exports
	// starting to fail (Warn), recovering (Info), a receiver rejecting
	// part of a request (Warn) and accepting every point again (Info). nil: slog.Default(); to silence it, a
	// logger on slog.DiscardHandler.
	Logger *slog.Logger
	// OnError, if set, is called with each failed periodic export (from
	// the export goroutine); the exporter keeps running.
	OnError func(error)
}

// Stats are an exporter's counters since it was created. Each field means
// the same for every push exporter; a "request" is one body handed to the
// transport (a msgpack payload or frame, an OTLP request, a remote-write
// request), a "point" one data point of it (a row, a sample).
type Stats struct {
	Exports, Failures uint64 // export cycles, and those that failed
	Requests          uint64 // send attempts, retries included
	Retries           uint64 // attempts beyond the first
	Sent              uint64 // requests delivered
	Points            uint64 // data points delivered
	Bytes             uint64 // bytes delivered, as sent (compressed)
	// Dropped counts the requests given up, DroppedPoints and
	// DroppedBytes what they carried: a failed request without a queue
	// (cumulative: the next export carries the same totals), a queued one
	// pushed out past MaxQueuedBytes (lost).
	Dropped, DroppedPoints, DroppedBytes uint64
	// Queued requests wait for a later export (with Config.Queue).
	Queued, QueuedPoints, QueuedBytes int
	// Rejected counts the data points a receiver reported it did not
	// accept in an answer that was a success otherwise (OTLP partial
	// success); they are included in Points.
	Rejected uint64
	// Oversized counts the requests produced over the exporter's size
	// cap (msgpack: MaxPayloadBytes), sent anyway.
	Oversized   uint64
	LastSuccess time.Time
	LastError   error
}

type state uint8

const (
	stateOK state = iota
	stateFailing
	statePartial
)

// Pipeline runs the exports of one exporter: the periodic loop, the
// bounded queue and its flush, the retry policy, Stats, selfstats and the
// log of state changes. The exporter supplies what is its own: the
// encoding (the produce function given to Export) and the Transport.
//
// Concurrency: safe for concurrent use. Exports are serialised by mu,
// which also guards the queue and the state; the counters are atomics, so
// Stats never waits for an export.
type Pipeline struct {
	cfg       Config
	transport Transport
	pol       retry.Policy
	log       *slog.Logger
	self      *selfstats.Sink
	runner    periodic.Runner

	mu         sync.Mutex
	queue      []queued
	qBytes     int
	qPoints    int
	state      state
	failedRuns int
	// rejectedRun: the export in progress had a partial success
	// (Rejected); a successful export without one ends statePartial.
	rejectedRun bool
	lastWarning string // the last warning a receiver sent with a full success (Rejected)
	cycle       Cycle  // the export in progress, reused: no allocation
	stopping    atomic.Bool
	reader      atomic.Pointer[core.ExportReader] // from Start to Stop: keeps unregistered views until exported (core.ExportViews)

	exports, failures, requests, retries, sent, points, nbytes atomic.Uint64
	dropped, droppedPoints, droppedBytes, rejected, oversized  atomic.Uint64
	queuedN, queuedP, queuedB                                  atomic.Int64
	lastSuccess                                                atomic.Int64
	lastErr                                                    atomic.Pointer[error]
}

type queued struct {
	r Request // r.Body owned by the queue
}

// New returns a pipeline. It fails on an invalid Config, naming the field
// as the exporter's options call it (prefix says whose: "otlp: ").
func New(cfg Config, t Transport, prefix string) (*Pipeline, error) {
	if t == nil {
		return nil, errors.New(prefix + "nil transport")
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Interval < 0 {
		return nil, fmt.Errorf("%sInterval %v is negative", prefix, cfg.Interval)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ExportTimeout < 0 {
		return nil, fmt.Errorf("%sExportTimeout %v is negative", prefix, cfg.ExportTimeout)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%sTimeout %v is negative", prefix, cfg.Timeout)
	}
	if cfg.MaxQueuedBytes == 0 {
		cfg.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if cfg.MaxQueuedBytes < 0 {
		return nil, fmt.Errorf("%sMaxQueuedBytes %d is negative", prefix, cfg.MaxQueuedBytes)
	}
	r := cfg.Retry
	if r.InitialBackoff < 0 || r.MaxBackoff < 0 {
		return nil, fmt.Errorf("%sRetry backoff %v..%v is negative", prefix, r.InitialBackoff, r.MaxBackoff)
	}
	if r.InitialBackoff == 0 {
		r.InitialBackoff = DefaultInitialBackoff
	}
	if r.MaxBackoff == 0 {
		r.MaxBackoff = max(DefaultMaxBackoff, r.InitialBackoff)
	}
	if r.MaxBackoff < r.InitialBackoff {
		return nil, fmt.Errorf("%sRetry.MaxBackoff %v is below Retry.InitialBackoff %v", prefix, r.MaxBackoff, r.InitialBackoff)
	}
	cfg.Retry = r
	p := &Pipeline{cfg: cfg, transport: t, pol: retry.Policy{Initial: r.InitialBackoff, Max: r.MaxBackoff}}
	p.log = cfg.Logger
	if p.log == nil {
		p.log = slog.Default()
	}
	p.self = selfstats.NewSink(cfg.Name)
	return p, nil
}

// Self returns the exporter's self-observability recorder (package
// selfstats), for what only the exporter knows (views it refused).
func (p *Pipeline) Self() *selfstats.Sink { return p.self }

// Config returns the configuration with its defaults filled in.
func (p *Pipeline) Config() Config { return p.cfg }

// Start calls export every Interval, each call bounded by the Interval,
// until Stop. Calling it again does nothing.
//
// From Start to Stop, a view unregistered between two exports stays in
// what the next export reads (core.ExportViews), with its final values:
// what it recorded since the last export is not lost (a view registered
// again under its name meanwhile waits for the export after). A series
// another exporter evicts is freed only after this one's next export has
// read it sealed. An exporter that is not started reads the registered
// views only.
func (p *Pipeline) Start(export func(context.Context) error) {
	p.mu.Lock()
	if p.reader.Load() == nil {
		p.reader.Store(core.AddExportReader())
	}
	p.mu.Unlock()
	p.runner.Start(p.cfg.Interval, export, p.cfg.OnError)
}

// ExportViews returns the views an export reads: the registered views
// and, from Start to Stop, those unregistered since the pipeline last
// exported them (core.ExportViews). Safe for concurrent use; no
// allocation unless a view is retiring.
func (p *Pipeline) ExportViews() []*core.View { return core.ExportViews(p.reader.Load()) }

// Stop ends the periodic exports (waiting, within ctx, for one in
// progress), then exports once more with produce, queued requests first,
// so that nothing recorded before Stop stays unsent while the receiver
// works, and calls release (if not nil) within that export, to let go of
// what the exporter holds (a delta reader's registration, and the
// pipeline's own on unregistered views, core.ExportReader). It returns the
// final export's error, saying what is still queued: those requests stay
// in Stats.Queued, and an Export called later sends them.
func (p *Pipeline) Stop(ctx context.Context, produce func(*Cycle) error, release func()) error {
	// However Stop ends, the pipeline no longer holds unregistered views
	// (after the final export, which sends them).
	defer func() {
		if r := p.reader.Swap(nil); r != nil {
			core.RemoveExportReader(r)
		}
	}()
	if running, err := p.runner.Stop(ctx); err != nil {
		// ctx ended while a periodic export ran (a backend down, a sink
		// that blocks): that export's context is ended, and once it has
		// returned the exporter lets go of what it holds, as after a
		// final export (its delta reader's registration, so that the
		// series other exporters evict are freed). No final export: ctx
		// has no time left for one.
		go func() {
			<-running
			p.mu.Lock() // after the export, never during one
			defer p.mu.Unlock()
			if release != nil {
				release()
			}
		}()
		q := p.Stats()
		return fmt.Errorf("%s: stopped without a final export (an export in progress outlasted the deadline); unsent: %d queued requests (%d points, %d bytes) and what was recorded since the last export: %w",
			p.cfg.Name, q.Queued, q.QueuedPoints, q.QueuedBytes, err)
	}
	// The final export's failure is returned: logging it too would say it
	// twice.
	p.stopping.Store(true)
	err := p.Export(ctx, func(c *Cycle) error {
		err := produce(c)
		if release != nil {
			release()
		}
		return err
	})
	p.stopping.Store(false)
	if s := p.Stats(); s.Queued > 0 {
		return fmt.Errorf("%s: stopped with %d requests (%d points, %d bytes) unsent: %w", p.cfg.Name, s.Queued, s.QueuedPoints, s.QueuedBytes, err)
	}
	return err
}

// Cycle is one export in progress, handed to the produce function. Not
// safe for concurrent use.
type Cycle struct {
	p       *Pipeline
	ctx     context.Context
	err     error // the cycle's first failure, returned by Export
	blocked bool  // a transient failure: later requests are not tried
}

// Send delivers r, retrying as the Config says. When delivery fails:
//
//   - for a failure that may pass (no answer, 429, 5xx: an error wrapped
//     by Retryable), r is queued with a Queue, dropped without, and the
//     rest of the cycle is not tried (it would wait on the same receiver);
//   - for a final failure (the receiver refused this request: another
//     4xx), r is dropped and counted — sending it again cannot succeed —
//     and the cycle goes on with the next request.
//
// It returns nil when the producer should go on (r was delivered, queued,
// or refused alone with a queue), the failure when it should stop.
func (c *Cycle) Send(r *Request) error {
	if r.Oversized {
		c.p.oversized.Add(1)
	}
	if !c.blocked {
		err := c.p.deliver(c.ctx, r)
		if err == nil {
			return nil
		}
		if c.err == nil {
			c.err = err
		}
		if !transient(err) {
			c.p.drop(r)
			if c.p.cfg.Queue {
				return nil
			}
			return err
		}
		c.blocked = true
	}
	if c.p.cfg.Queue {
		c.p.enqueue(r)
		return nil
	}
	c.p.drop(r)
	return c.err
}

// transient reports whether a failed delivery may succeed later: the
// transport marked its error Retryable (retries ran out of time, or were
// off).
func transient(err error) bool {
	var re *retry.Error
	return errors.As(err, &re)
}

// Failed reports the cycle's first failure, if any.
func (c *Cycle) Failed() error { return c.err }

// Export runs one export: it sends the queued requests, oldest first,
// then calls produce, which encodes the snapshot (of ExportViews: the
// views unregistered since this pipeline's last successful export are
// still there, with their final values) and passes each request to
// Cycle.Send. ctx bounds it (one Interval when ctx has no deadline). It
// returns the first failure, or produce's error, joined with the
// failures of the snapshot's callbacks (wrapping core.ErrCallback, as
// metric.ErrCallback): a failed callback leaves its values out, and is
// not a failed export (the rest is delivered, nothing is resent).
func (p *Pipeline) Export(ctx context.Context, produce func(*Cycle) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.Interval)
		defer cancel()
	}
	if p.cfg.ExportTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.ExportTimeout) // the earlier deadline wins
		defer cancel()
	}
	p.exports.Add(1)
	began := time.Now()
	retries0, dropped0 := p.retries.Load(), p.dropped.Load()
	cbErr := core.CollectContext(ctx) // callback gauges and counters (metric, runtime, otel), within half of ctx's time
	selfstats.RecordViews()           // zerostat/live_series, ... in this snapshot
	c := &p.cycle
	*c = Cycle{p: p, ctx: ctx}
	p.rejectedRun = false
	c.err, c.blocked = p.flush(ctx)
	reader := p.reader.Load()
	var ticket core.Ticket
	if reader != nil {
		ticket = reader.Ticket() // the views unregistered and the series sealed so far are in what produce reads
	}
	perr := produce(c)
	if reader != nil {
		// Read, delivered or not: another exporter may free the series
		// it evicts (core.ExportReader.Read). Also when produce stopped
		// early, on a request the pipeline dropped: an exporter that
		// keeps failing must not hold every view's eviction.
		reader.Read(ticket)
	}
	err := c.err
	*c = Cycle{} // keep no context past the export
	if err == nil || perr != nil && errors.Is(perr, err) {
		err = perr // produce's error, or its account of the cycle's failure
	}
	p.storeQueue()
	p.self.Export(err, time.Since(began), int(p.retries.Load()-retries0), int(p.dropped.Load()-dropped0))
	if err != nil {
		p.failures.Add(1)
		stored := err // a copy, so err itself does not escape on success
		p.lastErr.Store(&stored)
		p.failedRuns++
		if p.state != stateFailing && !p.stopping.Load() {
			p.log.Warn("zerostat exporter: exports failing", "sink", p.cfg.Name, "target", p.cfg.Target, "err", err)
			p.state = stateFailing
		}
		return errors.Join(err, cbErr)
	}
	if reader != nil {
		reader.Ack(ticket)
	}
	p.lastSuccess.Store(began.UnixNano())
	switch {
	case p.state == stateFailing:
		p.log.Info("zerostat exporter: exports recovered", "sink", p.cfg.Name, "target", p.cfg.Target, "failed_exports", p.failedRuns)
		p.state, p.failedRuns = stateOK, 0
	case p.state == statePartial && !p.rejectedRun:
		// A later partial success is a change again, and is logged.
		p.log.Info("zerostat exporter: the receiver accepts every data point again", "sink", p.cfg.Name, "target", p.cfg.Target)
		p.state = stateOK
	}
	// Delivered: a failed callback's values are what the snapshot lacks.
	// Reported as the OTel SDK's reader reports it (Collect's error), but
	// not as a failed export: nothing is resent or counted as failing.
	return cbErr
}

// Rejected records that a receiver accepted a request but rejected n of
// its points (OTLP partial success), logging it once per change of state.
// Called by a Transport, during Export.
func (p *Pipeline) Rejected(n int64, msg string) {
	if n <= 0 {
		// Every point accepted, with a message: a warning (OTLP: "the
		// server MAY populate error_message with rejected_data_points =
		// 0"), logged once per message, neither a rejection nor a
		// partial state.
		if msg != "" && msg != p.lastWarning {
			p.log.Warn("zerostat exporter: the receiver accepted every data point, with a warning", "sink", p.cfg.Name, "target", p.cfg.Target, "message", msg)
			p.lastWarning = msg
		}
		return
	}
	p.rejected.Add(uint64(n))
	p.rejectedRun = true
	if p.state != statePartial {
		p.log.Warn("zerostat exporter: the receiver rejected data points", "sink", p.cfg.Name, "target", p.cfg.Target, "rejected", n, "message", msg)
		p.state = statePartial
	}
}

// flush sends the queued requests, oldest first, until one fails in a
// way that may pass; one the receiver refuses for good is dropped and
// counted, so that it cannot hold up those after it. It returns the
// first failure, and whether it may pass (then the cycle is blocked).
func (p *Pipeline) flush(ctx context.Context) (first error, blocked bool) {
	for len(p.queue) > 0 {
		q := &p.queue[0]
		if err := p.deliver(ctx, &q.r); err != nil {
			if first == nil {
				first = err
			}
			if transient(err) {
				return first, true
			}
			p.drop(&q.r)
		}
		p.qBytes -= len(q.r.Body)
		p.qPoints -= q.r.Points
		p.queue[0] = queued{}
		p.queue = p.queue[1:]
	}
	p.queue = p.queue[:0:0]
	return first, false
}

func (p *Pipeline) enqueue(r *Request) {
	q := queued{r: *r}
	q.r.Body = bytes.Clone(r.Body)
	p.queue = append(p.queue, q)
	p.qBytes += len(q.r.Body)
	p.qPoints += q.r.Points
	for p.qBytes > p.cfg.MaxQueuedBytes && len(p.queue) > 0 {
		old := p.queue[0]
		p.queue[0] = queued{}
		p.queue = p.queue[1:]
		p.qBytes -= len(old.r.Body)
		p.qPoints -= old.r.Points
		p.drop(&old.r)
	}
}

func (p *Pipeline) drop(r *Request) {
	p.dropped.Add(1)
	p.droppedPoints.Add(uint64(r.Points))
	p.droppedBytes.Add(uint64(len(r.Body)))
}

func (p *Pipeline) storeQueue() {
	p.queuedN.Store(int64(len(p.queue)))
	p.queuedP.Store(int64(p.qPoints))
	p.queuedB.Store(int64(p.qBytes))
}

// deliver sends r, retrying within ctx's deadline.
func (p *Pipeline) deliver(ctx context.Context, r *Request) error {
	attempts, err := 1, error(nil)
	if p.cfg.Retry.Disabled {
		err = p.attempt(ctx, r)
	} else {
		attempts, err = retry.Do(ctx, p.pol, func(ctx context.Context) error { return p.attempt(ctx, r) })
	}
	if attempts > 1 {
		p.retries.Add(uint64(attempts - 1))
	}
	if err != nil {
		return fmt.Errorf("%s: sending request %d.%d (%d bytes, %d attempts): %w", p.cfg.Name, r.Sequence, r.Part, len(r.Body), attempts, err)
	}
	p.sent.Add(1)
	p.points.Add(uint64(r.Points))
	p.nbytes.Add(uint64(len(r.Body)))
	p.self.Payload(len(r.Body))
	return nil
}

// attempt makes one attempt to send r, within Timeout.
func (p *Pipeline) attempt(ctx context.Context, r *Request) error {
	p.requests.Add(1)
	// A context of its own only when ctx's deadline is later than the
	// attempt's timeout: creating one allocates.
	actx := ctx
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > p.cfg.Timeout {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
	}
	err := p.transport(actx, r)
	if err != nil && actx != ctx && actx.Err() != nil && ctx.Err() == nil {
		// This attempt ran out of its own time, but the export has time
		// left: a slow receiver is worth another try.
		var re *retry.Error
		if !errors.As(err, &re) {
			err = retry.Retryable(err, 0)
		}
	}
	return err
}

// Stats returns the counters. Safe for concurrent use; it does not wait
// for an export.
func (p *Pipeline) Stats() Stats {
	s := Stats{
		Exports:       p.exports.Load(),
		Failures:      p.failures.Load(),
		Requests:      p.requests.Load(),
		Retries:       p.retries.Load(),
		Sent:          p.sent.Load(),
		Points:        p.points.Load(),
		Bytes:         p.nbytes.Load(),
		Dropped:       p.dropped.Load(),
		DroppedPoints: p.droppedPoints.Load(),
		DroppedBytes:  p.droppedBytes.Load(),
		Queued:        int(p.queuedN.Load()),
		QueuedPoints:  int(p.queuedP.Load()),
		QueuedBytes:   int(p.queuedB.Load()),
		Rejected:      p.rejected.Load(),
		Oversized:     p.oversized.Load(),
	}
	if ns := p.lastSuccess.Load(); ns != 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	if e := p.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	return s
}
