package remotewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/periodic"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/retry"
	"github.com/zerostat/zerostat/internal/snappy"
	"github.com/zerostat/zerostat/selfstats"
)

// Defaults.
const (
	DefaultInterval            = 10 * time.Second
	DefaultTimeout             = 5 * time.Second
	DefaultMaxSeriesPerRequest = 2000 // Prometheus's max_samples_per_send default
	DefaultMinBackoff          = 50 * time.Millisecond
	DefaultMaxBackoff          = 5 * time.Second
	DefaultUserAgent           = "zerostat-remotewrite/1"
)

// The remote-write 1.0 request headers
// (https://prometheus.io/docs/specs/remote_write_spec/#protocol).
const (
	ContentType     = "application/x-protobuf"
	ContentEncoding = "snappy"
	VersionHeader   = "X-Prometheus-Remote-Write-Version"
	Version         = "0.1.0"
)

// Options configure a Writer. URL is required; the other fields have
// defaults.
type Options struct {
	// URL receives the POSTs: Prometheus's /api/v1/write (started with
	// --web.enable-remote-write-receiver), VictoriaMetrics's /api/v1/write.
	URL string
	// Interval between pushes (default 10 s). A push, retries included,
	// ends within one interval.
	Interval time.Duration
	// Timeout bounds each HTTP request (default 5 s, at most Interval).
	Timeout time.Duration
	// MaxSeriesPerRequest splits a push into requests of at most this
	// many time series (default 2000; a histogram row is len(bounds)+3
	// series).
	MaxSeriesPerRequest int
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// retries (defaults 50 ms and 5 s); each wait is drawn up to the
	// current bound ("full jitter", as every zerostat exporter). A
	// Retry-After header overrides it.
	MinBackoff, MaxBackoff time.Duration
	// Namespace, if set, prefixes every metric name with Namespace + "_".
	Namespace string
	// ConstLabels are added to every series. Remote write has no scrape to
	// add "job" and "instance": set them here so that several processes'
	// series stay apart.
	ConstLabels map[string]string
	// OpenCensusNames names series as OpenCensus's Prometheus exporter
	// does (see exporter/prometheus's Options.OpenCensusNames), so that
	// they match a scrape of a handler with the same option.
	OpenCensusNames bool
	// Client sends the requests (nil: http.DefaultClient).
	Client *http.Client
	// Header holds extra request headers (authentication, tenant ids).
	Header http.Header
	// UserAgent (default DefaultUserAgent).
	UserAgent string
	// OnStateChange is called, from the pushing goroutine, when pushes
	// start failing (with the error) and when they succeed again (with
	// nil): once per change, not once per failure. nil logs the changes
	// with the standard logger.
	OnStateChange func(err error)
}

// Stats are a Writer's counters since it was created.
type Stats struct {
	Pushes         uint64 // push cycles
	FailedPushes   uint64 // cycles that dropped samples
	Requests       uint64 // HTTP requests made, retries included
	Retries        uint64
	SentSamples    uint64 // samples accepted by the server
	DroppedSamples uint64 // samples given up on: rejected (4xx), or not accepted within the interval
	SentBytes      uint64 // compressed bytes of accepted requests
	LastSuccess    time.Time
	LastError      error
}

// StatusError is a non-2xx answer.
type StatusError struct {
	StatusCode int
	Body       string // the start of the response body
}

func (e *StatusError) Error() string {
	return "remotewrite: HTTP " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode) + ": " + e.Body
}

// Writer pushes every registered view to a remote-write endpoint, on an
// interval (Start, Stop) or on demand (Push).
//
// Concurrency protocol: mu serialises pushes and guards the families and
// buffers; the counters are atomics, read by Stats without the lock;
// runner owns the periodic loop. Recorders never wait for a
// Writer: a push reads series with atomic loads.
type Writer struct {
	opts   Options
	namer  *promname.Namer // guarded by mu
	client *http.Client

	mu      sync.Mutex
	fams    map[*core.View]*family
	gen     uint64
	series  []*core.Series
	buckets []int64
	labels  []label
	pb      []byte // the timeseries of one push, concatenated
	cuts    []int  // request boundaries in pb
	counts  []int  // time series per request
	zb      []byte
	enc     snappy.Encoder
	failing bool

	runner periodic.Runner // the Start/Stop loop
	self   *selfstats.Sink // zerostat's own health, tagged sink="remotewrite"

	pushes, failedPushes, requests, retries, sent, dropped, sentBytes atomic.Uint64
	lastSuccess                                                       atomic.Int64
	lastErr                                                           atomic.Pointer[error]
}

// New returns a Writer. It fails on invalid options, naming the option.
func New(opts Options) (*Writer, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remotewrite: URL %q is not an http(s) URL", opts.URL)
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Timeout == 0 {
		opts.Timeout = min(DefaultTimeout, opts.Interval)
	}
	if opts.MaxSeriesPerRequest == 0 {
		opts.MaxSeriesPerRequest = DefaultMaxSeriesPerRequest
	}
	if opts.MinBackoff == 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	switch {
	case opts.Interval < 0:
		return nil, fmt.Errorf("remotewrite: Interval %v is negative", opts.Interval)
	case opts.Timeout < 0 || opts.Timeout > opts.Interval:
		return nil, fmt.Errorf("remotewrite: Timeout %v is not within (0, Interval %v]", opts.Timeout, opts.Interval)
	case opts.MaxSeriesPerRequest < 0:
		return nil, fmt.Errorf("remotewrite: MaxSeriesPerRequest %d is negative", opts.MaxSeriesPerRequest)
	case opts.MinBackoff < 0 || opts.MaxBackoff < opts.MinBackoff:
		return nil, fmt.Errorf("remotewrite: backoff bounds %v, %v are not 0 <= MinBackoff <= MaxBackoff", opts.MinBackoff, opts.MaxBackoff)
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	w := &Writer{
		opts: opts,
		namer: promname.NewNamer(promname.Options{Namespace: opts.Namespace,
			Consts: promname.ConstLabels(opts.ConstLabels), OpenCensus: opts.OpenCensusNames}),
		client: opts.Client,
		fams:   map[*core.View]*family{},
	}
	if w.client == nil {
		w.client = http.DefaultClient
	}
	w.self = selfstats.NewSink("remotewrite")
	return w, nil
}

// Start begins pushing every Interval. Calling it again does nothing.
// Push's errors reach Stats and OnStateChange.
func (w *Writer) Start() { w.runner.Start(w.opts.Interval, w.Push, nil) }

// Stop ends the periodic pushes and pushes a final time, so nothing
// recorded before Stop is left unsent. It returns that push's error, or
// ctx's if ctx ends first (a push in progress is waited for within ctx).
func (w *Writer) Stop(ctx context.Context) error {
	if err := w.runner.Stop(ctx); err != nil {
		return err
	}
	return w.Push(ctx)
}

// Push snapshots the registered views now and sends them, in requests of
// at most MaxSeriesPerRequest series, retrying 5xx and 429 answers and
// network errors with backoff. It returns within Interval (or by ctx's
// deadline if earlier). A request answered with another 4xx is not
// retried; its samples, and those not accepted in time, are dropped and
// counted in Stats. It returns the first error. Safe for concurrent use;
// pushes are serialised.
func (w *Writer) Push(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > w.opts.Interval {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.opts.Interval)
		defer cancel()
	}
	w.pushes.Add(1)
	began := time.Now()
	retries0 := w.retries.Load()
	var first error
	droppedReqs := 0
	defer func() { // zerostat/exports, retries, dropped requests for this sink (selfstats)
		w.self.Export(first, time.Since(began), int(w.retries.Load()-retries0), droppedReqs)
	}()
	selfstats.RecordViews()
	w.encode(began.UnixMilli())

	var dropped uint64
	for i := range w.counts {
		n := uint64(w.counts[i])
		if first != nil && ctx.Err() != nil {
			dropped += n // out of time: give up on the rest
			droppedReqs++
			continue
		}
		w.zb = w.enc.Append(w.zb[:0], w.pb[w.cuts[i]:w.cuts[i+1]])
		if err := w.send(ctx, w.zb); err != nil {
			dropped += n
			droppedReqs++
			if first == nil {
				first = err
			}
			continue
		}
		w.sent.Add(n)
		w.sentBytes.Add(uint64(len(w.zb)))
		w.self.Payload(len(w.zb))
	}

	if first != nil {
		w.failedPushes.Add(1)
		w.dropped.Add(dropped)
		first = fmt.Errorf("remotewrite: push to %s dropped %d of %d samples: %w", w.opts.URL, dropped, w.total(), first)
		stored := first
		w.lastErr.Store(&stored)
	} else {
		w.lastSuccess.Store(time.Now().UnixNano())
	}
	if failing := first != nil; failing != w.failing {
		w.failing = failing
		w.stateChanged(first)
	}
	return first
}

func (w *Writer) total() int {
	n := 0
	for _, c := range w.counts {
		n += c
	}
	return n
}

func (w *Writer) stateChanged(err error) {
	if w.opts.OnStateChange != nil {
		w.opts.OnStateChange(err)
		return
	}
	if err != nil {
		log.Printf("%v (logged once until pushes succeed again)", err)
	} else {
		log.Printf("remotewrite: pushes to %s succeed again", w.opts.URL)
	}
}

// send posts one compressed request, retrying while ctx allows (the
// policy every zerostat exporter shares, internal/retry): 429, 5xx and
// network errors are retried, other 4xx are not.
func (w *Writer) send(ctx context.Context, body []byte) error {
	pol := retry.Policy{Initial: w.opts.MinBackoff, Max: w.opts.MaxBackoff}
	attempts, err := retry.Do(ctx, pol, func(ctx context.Context) error {
		after, err := w.post(ctx, body)
		if err == nil {
			return nil
		}
		var se *StatusError
		if errors.As(err, &se) && !retry.HTTPStatusRetryable(se.StatusCode) {
			return err // the request itself is wrong: retrying cannot help
		}
		if ctx.Err() != nil {
			return err
		}
		return retry.Retryable(err, after)
	})
	if attempts > 1 {
		w.retries.Add(uint64(attempts - 1))
	}
	return err
}

// post makes one request. It returns the server's Retry-After, if any.
func (w *Writer) post(ctx context.Context, body []byte) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.opts.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, vs := range w.opts.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("Content-Encoding", ContentEncoding)
	req.Header.Set(VersionHeader, Version)
	req.Header.Set("User-Agent", w.opts.UserAgent)
	w.requests.Add(1)
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	return retry.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now(), time.Hour), &StatusError{StatusCode: resp.StatusCode, Body: string(bytes.TrimSpace(msg))}
}

// Stats returns the Writer's counters. Safe for concurrent use.
func (w *Writer) Stats() Stats {
	s := Stats{
		Pushes:         w.pushes.Load(),
		FailedPushes:   w.failedPushes.Load(),
		Requests:       w.requests.Load(),
		Retries:        w.retries.Load(),
		SentSamples:    w.sent.Load(),
		DroppedSamples: w.dropped.Load(),
		SentBytes:      w.sentBytes.Load(),
	}
	if ns := w.lastSuccess.Load(); ns != 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	if p := w.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}

// Err returns an error naming each view left out of the pushes because
// its series names collide with an earlier registered view's (and that
// view), as of the last push; nil when none is. Such views are also
// counted by selfstats' zerostat/refused_views. Safe for concurrent use.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.self.Refused(w.namer.Sync(core.Views()))
	return w.namer.Err()
}

// AppendWriteRequest appends the uncompressed protobuf WriteRequest of
// every registered view, with timestamp ts (Unix milliseconds), to dst:
// what one push sends, before it is cut into requests and compressed. For
// tests and tools; safe for concurrent use (serialised with pushes).
func (w *Writer) AppendWriteRequest(dst []byte, ts int64) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.encode(ts)
	return append(dst, w.pb...)
}

// encode writes every registered view's time series into w.pb, and the
// request boundaries into w.cuts and w.counts. Steady state: no
// allocation.
func (w *Writer) encode(ts int64) {
	w.gen++
	w.pb = w.pb[:0]
	w.cuts = append(w.cuts[:0], 0)
	w.counts = w.counts[:0]
	inReq := 0
	// cut ends a request after every MaxSeriesPerRequest time series.
	cut := func() {
		inReq++
		if inReq == w.opts.MaxSeriesPerRequest {
			w.cuts = append(w.cuts, len(w.pb))
			w.counts = append(w.counts, inReq)
			inReq = 0
		}
	}
	views := core.Views()
	w.self.Refused(w.namer.Sync(views))
	for _, v := range views {
		pf := w.namer.Family(v)
		if pf == nil {
			continue // refused: its names are an earlier view's (Err)
		}
		f := w.fams[v]
		if f == nil || f.fam != pf {
			f = newFamily(pf)
			w.fams[v] = f
		}
		f.seen = w.gen
		w.series = v.Agg.AppendSeries(w.series[:0])
		strs := core.Interned()
		if f.kind == core.KindDistribution {
			n := len(v.Agg.Bounds()) + 1
			if cap(w.buckets) < n {
				w.buckets = make([]int64, n)
			}
			w.buckets = w.buckets[:n]
		}
		overflow := v.Agg.Overflow()
		if overflow != nil {
			w.series = append(w.series, overflow)
		}
		for _, s := range w.series {
			vids, slots := s.ValueIDs(), f.slots
			if s == overflow {
				slots = f.overflowSlots
			}
			switch f.kind {
			case core.KindCount:
				w.appendSeries(slots, vids, strs, f.sample, "", float64(s.ReadCount()), ts)
				cut()
			case core.KindSum:
				w.appendSeries(slots, vids, strs, f.sample, "", s.ReadSum(), ts)
				cut()
			case core.KindLastValue:
				w.appendSeries(slots, vids, strs, f.sample, "", s.ReadLast(), ts)
				cut()
			case core.KindDistribution:
				st := s.ReadDist(w.buckets)
				var cum int64
				for i, c := range w.buckets {
					cum += c
					w.appendSeries(slots, vids, strs, f.sample, f.les[i], float64(cum), ts)
					cut()
				}
				w.appendSeries(slots, vids, strs, f.sumName, "", st.Sum, ts)
				cut()
				w.appendSeries(slots, vids, strs, f.countName, "", float64(cum), ts)
				cut()
			}
		}
	}
	if inReq > 0 {
		w.cuts = append(w.cuts, len(w.pb))
		w.counts = append(w.counts, inReq)
	}
	for v, f := range w.fams {
		if f.seen != w.gen {
			delete(w.fams, v)
		}
	}
}

// appendSeries appends one time series labelled by slots: name is its
// __name__, le its bucket bound (histogram buckets only).
func (w *Writer) appendSeries(slots []slot, vids []uint32, strs []string, name, le string, v float64, ts int64) {
	ls := w.labels[:0]
	for _, sl := range slots {
		switch sl.kind {
		case slotName:
			ls = append(ls, label{sl.name, name})
		case slotConst:
			ls = append(ls, label{sl.name, sl.value})
		case slotTag:
			if val := strs[vids[sl.tag]]; val != "" {
				ls = append(ls, label{sl.name, val})
			}
		case slotLe:
			if le != "" {
				ls = append(ls, label{sl.name, le})
			}
		}
	}
	w.labels = ls
	w.pb = appendTimeSeries(w.pb, ls, v, ts)
}
