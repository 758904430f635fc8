package remotewrite

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/zerostat/zerostat/exporter/push"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/promnative"
	"github.com/zerostat/zerostat/internal/snappy"
	"github.com/zerostat/zerostat/selfstats"
)

// Defaults.
const (
	DefaultInterval            = push.DefaultInterval
	DefaultTimeout             = push.DefaultTimeout
	DefaultMaxSeriesPerRequest = 2000 // Prometheus's max_samples_per_send default
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

// Retry configures retries; the policy every push exporter shares (see
// push.Retry). Remote write retries 429, every 5xx and network errors;
// other answers are final (the specification's rule).
type Retry = push.Retry

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
	// MaxSeriesPerRequest splits a push into requests of about this many
	// time series (default 2000). A request ends only between rows, so a
	// histogram's buckets, _sum and _count always travel together (a
	// request may exceed the number by one row's series).
	MaxSeriesPerRequest int
	// Retry shapes the retries (default: full-jitter backoff from 100 ms
	// up to 5 s, honouring Retry-After, within the push's deadline).
	Retry Retry
	// Namespace, if set, prefixes every metric name with Namespace + "_".
	Namespace string
	// ConstLabels are added to every series. Remote write has no scrape to
	// add "job" and "instance": set them here so that several processes'
	// series stay apart. A label with an empty value is not sent (an
	// empty value means no label in Prometheus's data model).
	ConstLabels map[string]string
	// NoNativeHistograms sends an exponential view
	// (view.ExponentialDistribution) as the text exposition shows it, a
	// classic histogram with no bound: "<name>_bucket{le="+Inf"}" (the
	// count), "<name>_sum", "<name>_count", what a Prometheus without
	// native histograms stores from a scrape, instead of one native
	// histogram per series. For receivers without native histograms:
	// Prometheus 2.42 without --enable-feature=native-histograms answers
	// a request that carries one with 500 "native histograms are
	// disabled", losing the whole request, every other series in it
	// included (tested); VictoriaMetrics 1.79 ignores them.
	NoNativeHistograms bool
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
	// OnError, if set, is called (from the pushing goroutine) with each
	// failed periodic push.
	OnError func(error)
	// Logger logs when pushes start failing and when they succeed again,
	// once per change. nil: slog.Default(); a logger on
	// slog.DiscardHandler silences it.
	Logger *slog.Logger
}

// Stats are a Writer's counters since it was created (push.Stats: a
// request is one remote-write request, a point one sample).
type Stats = push.Stats

// Writer pushes every registered view to a remote-write endpoint, on an
// interval (Start, Stop) or on demand (Push).
//
// It is the remote-write encoder and an HTTP transport on the shared push
// pipeline (package exporter/push), which owns the loop, the retries and
// Stats. Remote write is cumulative: a request that could not be sent is
// dropped and counted, and the next push carries the same totals.
//
// Concurrency protocol: the pipeline serialises pushes, and so guards the
// families and buffers; the counters are atomics, read by Stats without a
// lock. Recorders never wait for a Writer: a push reads series with
// atomic loads.
type Writer struct {
	opts  Options
	pipe  *push.Pipeline
	http  push.HTTP
	self  *selfstats.Sink
	namer *promname.Namer // guarded by mu
	// produceFn is w.produce, made once: a method value passed per push
	// would allocate.
	produceFn func(*push.Cycle) error

	mu     sync.Mutex // guards the encoder state for AppendWriteRequest
	fams   map[*core.View]*family
	gen    uint64
	lastTS int64 // the last push's timestamp: the next is later
	series []*core.Series
	// sums holds a Sum view's values, read once per push: its metadata
	// type and its rows are chosen from the same reads (w.series order).
	sums    []float64
	buckets []int64
	exs     []*core.Exemplar     // Series.Exemplars' buffer, cleared after each row
	exp     exphist.Snapshot     // an exponential series' read
	native  promnative.Histogram // its native histogram
	quants  []float64            // a summary series' quantile values (summary.go)
	labels  []label
	pb      []byte // the timeseries of one push, concatenated
	cuts    []int  // request boundaries in pb
	// meta holds the metadata of each request's families, metaCuts its
	// request boundaries; req1 is one request, series then metadata.
	meta     []byte
	metaCuts []int
	req1     []byte
	counts   []int // time series per request
	zb       []byte
	enc      snappy.Encoder
	req      push.Request // the request being sent, reused
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
	switch {
	case opts.Interval < 0:
		return nil, fmt.Errorf("remotewrite: Interval %v is negative", opts.Interval)
	case opts.Timeout < 0 || opts.Timeout > opts.Interval:
		return nil, fmt.Errorf("remotewrite: Timeout %v is not within (0, Interval %v]", opts.Timeout, opts.Interval)
	case opts.MaxSeriesPerRequest < 0:
		return nil, fmt.Errorf("remotewrite: MaxSeriesPerRequest %d is negative", opts.MaxSeriesPerRequest)
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	w := &Writer{
		namer: promname.NewNamer(promname.Options{Namespace: opts.Namespace,
			Consts: promname.ConstLabels(opts.ConstLabels), OpenCensus: opts.OpenCensusNames}),
		fams: map[*core.View]*family{},
	}
	pipe, err := push.New(push.Config{
		Name: "remotewrite", Target: opts.URL,
		Interval: opts.Interval, Timeout: opts.Timeout, Retry: opts.Retry,
		Logger: opts.Logger, OnError: opts.OnError,
	}, w.transport, "remotewrite: ")
	if err != nil {
		return nil, err
	}
	opts.Retry = pipe.Config().Retry
	w.opts, w.pipe, w.self = opts, pipe, pipe.Self()
	w.produceFn = w.produce
	h := make(http.Header, len(opts.Header)+4)
	for k, vs := range opts.Header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	h.Set("Content-Type", ContentType)
	h.Set(VersionHeader, Version)
	h.Set("User-Agent", opts.UserAgent)
	w.http = push.HTTP{URL: opts.URL, Client: opts.Client, Header: h, Retry: push.RetryAny5xx}
	return w, nil
}

// Start begins pushing every Interval. Calling it again does nothing.
// Push's errors reach Stats, OnError and the Logger.
func (w *Writer) Start() { w.pipe.Start(w.Push) }

// Stop ends the periodic pushes and pushes a final time, so nothing
// recorded before Stop is left unsent. It returns that push's error, or
// ctx's if ctx ends first (a push in progress is waited for within ctx).
func (w *Writer) Stop(ctx context.Context) error { return w.pipe.Stop(ctx, w.produceFn, nil) }

// Push snapshots the registered views now and sends them, in requests of
// about MaxSeriesPerRequest series, retrying 5xx and 429 answers and
// network errors with backoff. It returns within Interval (or by ctx's
// deadline if earlier). A request answered with another 4xx is not
// retried: it is dropped and counted in Stats (the next push carries the
// same totals), and the requests after it in this push are still sent
// (the receiver refused that request, not the others). After a failure
// that may pass (5xx, 429, no answer), the rest of the push is not tried
// and is dropped and counted. The error says how many samples of how
// many were dropped. Safe for concurrent use; pushes are serialised.
func (w *Writer) Push(ctx context.Context) error { return w.pipe.Export(ctx, w.produceFn) }

// produce encodes a push and hands each request to the cycle.
func (w *Writer) produce(c *push.Cycle) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.encode(w.timestamp(time.Now().UnixMilli()))
	gen := w.gen
	var err error
	dropped := 0
	for i := range w.counts {
		// The request's time series, then its families' metadata: the
		// field order proto.Marshal writes (timeseries = 1, metadata = 3).
		w.req1 = append(append(w.req1[:0], w.pb[w.cuts[i]:w.cuts[i+1]]...), w.meta[w.metaCuts[i]:w.metaCuts[i+1]]...)
		w.zb = w.enc.Append(w.zb[:0], w.req1)
		r := &w.req
		*r = push.Request{Body: w.zb, Encoding: ContentEncoding, Points: w.counts[i],
			Sequence: w.gen, Part: uint64(i), Last: i == len(w.counts)-1}
		// After a failure, Send drops the rest of the push without trying
		// it, and counts it.
		if serr := c.Send(r); serr != nil {
			dropped += w.counts[i]
			if err == nil {
				err = serr
			}
		}
	}
	if err != nil {
		return fmt.Errorf("remotewrite: push to %s dropped %d of %d samples: %w", w.opts.URL, dropped, w.total(), err)
	}
	if c.Failed() == nil {
		w.delivered(gen) // every request of it: its stale markers and exemplars arrived
	}
	return nil
}

// delivered forgets the series and views gone before push gen, whose stale
// markers gen carried and the receiver took, and marks the exemplars gen
// carried as delivered. Until then every push carries them again (a
// marker at a later timestamp is harmless; Prometheus ignores an exemplar
// it has), so a push that failed loses none: before, a marker was written
// once and forgotten, and a 503 on that push left the series live in
// Prometheus for its 5-minute lookback. Called right after gen was
// encoded and sent (under mu): the exemplars carried are gen's.
func (w *Writer) delivered(gen uint64) {
	for v, f := range w.fams {
		if f.seen < gen {
			delete(w.fams, v)
			continue
		}
		for s, st := range f.sent {
			if st.gen < gen {
				delete(f.sent, s)
				continue
			}
			for i := range st.ex { // shared with the map's copy
				if x := st.ex[i].carried; x != nil {
					st.ex[i].delivered, st.ex[i].carried = x, nil
				}
			}
		}
	}
}

// timestamp returns ms, or one millisecond after the last push's when ms
// is not later (two pushes in one millisecond, a clock stepped back): a
// receiver refuses a sample not newer than the last of its series.
func (w *Writer) timestamp(ms int64) int64 {
	if ms <= w.lastTS {
		ms = w.lastTS + 1
	}
	w.lastTS = ms
	return ms
}

func (w *Writer) transport(ctx context.Context, r *push.Request) error { return w.http.Post(ctx, r) }

// total returns the samples of the push encoded last.
func (w *Writer) total() int {
	n := 0
	for _, c := range w.counts {
		n += c
	}
	return n
}

// Stats returns the Writer's counters. Safe for concurrent use.
func (w *Writer) Stats() Stats { return w.pipe.Stats() }

// Err returns an error naming each view left out of the pushes because
// its series names collide with an earlier registered view's (and that
// view), as of the last push; nil when none is. Such views are also
// counted by selfstats' zerostat/refused_views. Safe for concurrent use.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.self.Refused(w.namer.Sync(w.pipe.ExportViews()))
	return w.namer.Err()
}

// AppendWriteRequest appends the uncompressed protobuf WriteRequest of
// every registered view, with timestamp ts (Unix milliseconds), to dst:
// what one push sends, before it is cut into requests and compressed,
// stale markers and exemplars not yet delivered included. For tests and
// tools: it sends nothing, and the next push still carries every stale
// marker and exemplar it holds. Safe for concurrent use (serialised with
// pushes).
func (w *Writer) AppendWriteRequest(dst []byte, ts int64) []byte {
	core.Collect() // callback gauges and counters (metric, runtime) read now
	w.mu.Lock()
	defer w.mu.Unlock()
	w.encode(ts)
	return append(append(dst, w.pb...), w.meta...)
}

// encode writes every registered view's time series into w.pb, and the
// request boundaries into w.cuts and w.counts. Steady state: no
// allocation.
func (w *Writer) encode(ts int64) {
	w.gen++
	w.pb = w.pb[:0]
	w.meta = w.meta[:0]
	w.cuts = append(w.cuts[:0], 0)
	w.metaCuts = append(w.metaCuts[:0], 0)
	w.counts = w.counts[:0]
	inReq := 0
	// cut counts a time series; rowDone ends a request once a row has
	// brought it to MaxSeriesPerRequest, so that a row's series (a
	// histogram's buckets, _sum and _count) are never split.
	cut := func(n int) { inReq += n }
	rowDone := func() {
		if inReq >= w.opts.MaxSeriesPerRequest {
			w.cuts = append(w.cuts, len(w.pb))
			w.metaCuts = append(w.metaCuts, len(w.meta))
			w.counts = append(w.counts, inReq)
			inReq = 0
		}
	}
	views := w.pipe.ExportViews() // and, started, the views unregistered since the last push, once more
	w.self.Refused(w.namer.Sync(views))
	for _, v := range views {
		pf := w.namer.Family(v)
		if pf == nil {
			continue // refused: its names are an earlier view's (Err)
		}
		f := w.fams[v]
		if f == nil || f.fam != pf {
			var prev *family
			if f == nil {
				prev = w.grownFrom(v)
			}
			f = newFamily(pf, w.opts.NoNativeHistograms)
			if prev != nil {
				// What the family of the view v replaced sent: those
				// series gone since get their stale markers (staleGone).
				f.sent, prev.sent = prev.sent, map[*core.Series]sentSeries{}
			}
			w.fams[v] = f
		}
		f.seen = w.gen
		w.series, _ = v.AppendSeries(w.series[:0]) // at most len(v.Keys) values each (cumulative: what it leaves out is in the next push)
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
		if len(w.series) > 0 {
			// Metadata (type, help, unit) goes with the family's series:
			// in the request that holds its first series. A sum with a
			// value no counter may have is untyped for this push, named
			// after its sample, as the scrape handler exposes it
			// (docs/metric-mapping.md).
			typ, name := metaType(pf.Type), pf.Name
			if f.kind == core.KindSum {
				valid := w.readSums()
				if pf.Type == promname.Counter && !valid {
					typ, name = metaUnknown, pf.Sample
				}
			}
			w.meta = appendMetadata(w.meta, typ, name, pf.Help, pf.Unit)
		}
		for i, s := range w.series {
			st := sentSeries{gen: w.gen, overflow: s == overflow}
			sum := 0.0
			if f.kind == core.KindSum {
				sum = w.sums[i]
			}
			if !w.appendRow(f, s, &st, strs, ts, sum) {
				continue // not sent: an exponential series with no native form
			}
			f.sent[s] = st
			cut(w.rowSeries(f))
			rowDone()
		}
		w.staleGone(f, strs, ts, cut, rowDone)
	}
	// Views no longer registered: every series they had is stale, until
	// a push that carries the markers is delivered (delivered), unless a
	// registered view took the name (its series would collide).
	var names map[string]bool // built only when a view went away
	for v, f := range w.fams {
		if f.seen != w.gen {
			if names == nil {
				names = map[string]bool{}
				for _, g := range w.fams {
					if g.seen == w.gen {
						names[g.fam.Name] = true
					}
				}
			}
			if names[f.fam.Name] {
				delete(w.fams, v)
				continue
			}
			strs := core.Interned()
			for s, st := range f.sent {
				w.appendStaleRow(f, s, st.overflow, strs, ts)
				cut(w.rowSeries(f))
				rowDone()
			}
		}
	}
	if inReq > 0 {
		w.cuts = append(w.cuts, len(w.pb))
		w.metaCuts = append(w.metaCuts, len(w.meta))
		w.counts = append(w.counts, inReq)
	}
}

// grownFrom returns the family of the view v took the place of (a view of
// the same aggregator, which core.GrowView replaced by v with more keys),
// nil when there is none.
func (w *Writer) grownFrom(v *core.View) *family {
	for u, f := range w.fams {
		if u != v && u.Agg == v.Agg && f.seen != w.gen {
			return f
		}
	}
	return nil
}

// staleGone writes a stale marker for each series f sent that this push no
// longer has (evicted), until a push that carries it is delivered
// (delivered); not when a series with the same tag values replaced it in
// this push (their samples would collide): then it is forgotten.
func (w *Writer) staleGone(f *family, strs []string, ts int64, cut func(int), rowDone func()) {
	var current map[string]bool // built only when a series went away
	for s, st := range f.sent {
		if st.gen == w.gen {
			continue
		}
		if current == nil {
			current = map[string]bool{}
			for t, tst := range f.sent {
				if tst.gen == w.gen {
					current[valueKey(t, strs)] = true
				}
			}
		}
		if current[valueKey(s, strs)] {
			delete(f.sent, s)
			continue
		}
		w.appendStaleRow(f, s, st.overflow, strs, ts)
		cut(w.rowSeries(f))
		rowDone()
	}
}

// valueKey identifies a series by its tag values.
func valueKey(s *core.Series, strs []string) string {
	var b []byte
	vids := s.ValueIDs()
	for len(vids) > 0 && vids[len(vids)-1] == 0 {
		vids = vids[:len(vids)-1] // absent: as a series that lacks the key (one older than its view's added keys)
	}
	for _, id := range vids {
		b = append(b, strs[id]...)
		b = append(b, 0xff) // not in UTF-8: a separator no value holds
	}
	return string(b)
}

// rowSeries is the number of time series one row of f writes (one
// native histogram for an exponential series).
func (w *Writer) rowSeries(f *family) int {
	if f.classic {
		return len(f.les) + 2
	}
	return 1
}

// appendRow writes the time series of series s (a histogram's buckets,
// _sum and _count); st is its entry in f.sent for this push, which the
// caller stores. A Sum's value is sum, read by readSums. A histogram's
// bucket series carries the bucket's exemplar (the latest value recorded
// into it with attachments: the one OpenMetrics exposes on the same
// series) unless a delivered push carried it already (carryExemplars:
// st.ex says which); a counter's series the exemplars of its reservoir
// likewise (appendCounterRow). An exponential series is one native histogram (the
// "histograms" field, internal/promnative's conversion), named after the
// family; one whose scale has no native schema (below -4,
// promnative.ErrScale) is not written, and appendRow reports false.
func (w *Writer) appendRow(f *family, s *core.Series, st *sentSeries, strs []string, ts int64, sum float64) bool {
	vids, slots := s.ValueIDs(), f.slots
	if st.overflow {
		slots = f.overflowSlots
	}
	switch f.kind {
	case core.KindCount:
		w.appendCounterRow(f, s, st, slots, vids, strs, float64(s.ReadCount()), ts)
	case core.KindSum:
		w.appendCounterRow(f, s, st, slots, vids, strs, sum, ts)
	case core.KindLastValue:
		w.appendSeries(slots, vids, strs, f.sample, "", s.ReadLast(), ts, nil)
	case core.KindDistribution:
		// Exemplars before counts: a record counts its value before it
		// stores its exemplar, so each exemplar read is in the counts.
		exs := w.carryExemplars(f, s, st)
		dist := s.ReadDist(w.buckets)
		var cum int64
		for i, c := range w.buckets {
			cum += c
			var x *core.Exemplar
			if i < len(st.ex) {
				x = st.ex[i].carried
			}
			w.appendSeries(slots, vids, strs, f.sample, f.les[i], float64(cum), ts, x)
		}
		clear(exs) // hold no exemplar past the row
		w.appendSeries(slots, vids, strs, f.sumName, "", dist.Sum, ts, nil)
		w.appendSeries(slots, vids, strs, f.countName, "", float64(cum), ts, nil)
	case core.KindSummary:
		w.appendSummaryRow(f, s, slots, vids, strs, ts)
	case core.KindExponential:
		s.ReadExp(&w.exp)
		if f.classic { // NoNativeHistograms: "+Inf" (the count), _sum, _count
			n := float64(w.exp.Count)
			w.appendSeries(slots, vids, strs, f.sample, f.les[0], n, ts, nil)
			w.appendSeries(slots, vids, strs, f.sumName, "", w.exp.Sum, ts, nil)
			w.appendSeries(slots, vids, strs, f.countName, "", n, ts, nil)
			break
		}
		if w.native.Set(&w.exp) != nil {
			return false
		}
		w.appendHistogram(slots, vids, strs, f.sample, &w.native, ts)
	}
	return true
}

// appendStaleRow writes the time series of series s (a histogram's
// buckets, _sum and _count) with Prometheus's stale marker as their value,
// and no exemplar.
func (w *Writer) appendStaleRow(f *family, s *core.Series, overflow bool, strs []string, ts int64) {
	vids, slots := s.ValueIDs(), f.slots
	if overflow {
		slots = f.overflowSlots
	}
	staleV := math.Float64frombits(StaleNaN)
	if f.kind == core.KindExponential && !f.classic {
		// A native histogram's stale marker: the sum StaleNaN, as
		// Prometheus stores and forwards it.
		w.appendHistogram(slots, vids, strs, f.sample, &promnative.Histogram{Sum: staleV}, ts)
		return
	}
	if f.classic {
		for _, le := range f.les {
			w.appendSeries(slots, vids, strs, f.sample, le, staleV, ts, nil)
		}
		w.appendSeries(slots, vids, strs, f.sumName, "", staleV, ts, nil)
		w.appendSeries(slots, vids, strs, f.countName, "", staleV, ts, nil)
		return
	}
	w.appendSeries(slots, vids, strs, f.sample, "", staleV, ts, nil)
}

// appendSeries appends one time series labelled by slots: name is its
// __name__, le its bucket bound (histogram buckets only), ex its exemplar
// (nil: none).
func (w *Writer) appendSeries(slots []slot, vids []uint32, strs []string, name, le string, v float64, ts int64, ex *core.Exemplar) {
	w.labels = w.labelsOf(slots, vids, strs, name, le)
	w.pb = appendTimeSeries(w.pb, w.labels, v, ts, ex)
}

// labelsOf returns, in w.labels's array, the labels of a time series
// labelled by slots: __name__ name, le (histogram buckets only), the
// constant labels and the tags, empty values left out.
func (w *Writer) labelsOf(slots []slot, vids []uint32, strs []string, name, le string) []label {
	ls := w.labels[:0]
	for _, sl := range slots {
		switch sl.kind {
		case slotName:
			ls = append(ls, label{sl.name, name})
		case slotConst:
			if sl.value != "" { // remote write 1.0: empty label values MUST NOT be sent
				ls = append(ls, label{sl.name, sl.value})
			}
		case slotTag:
			if val := strs[core.ValueID(vids, sl.tag)]; val != "" {
				ls = append(ls, label{sl.name, val})
			}
		case slotLe:
			if le != "" {
				ls = append(ls, label{sl.name, le})
			}
		}
	}
	return ls
}

// appendHistogram appends one time series labelled by slots, named name,
// holding native histogram h.
func (w *Writer) appendHistogram(slots []slot, vids []uint32, strs []string, name string, h *promnative.Histogram, ts int64) {
	w.labels = w.labelsOf(slots, vids, strs, name, "")
	w.pb = appendHistogramSeries(w.pb, w.labels, h, ts)
}

// readSums reads the value of each series of w.series (a Sum view's) into
// w.sums, once: the metadata type and the rows are chosen from the same
// values, so a sum that crosses zero between two reads cannot get COUNTER
// metadata with a negative sample. It reports whether every value may be
// a counter's (promname.CounterValid). Cost: one atomic read per series.
func (w *Writer) readSums() (countersValid bool) {
	w.sums, countersValid = w.sums[:0], true
	for _, s := range w.series {
		x := s.ReadSum()
		countersValid = countersValid && promname.CounterValid(x)
		w.sums = append(w.sums, x)
	}
	return countersValid
}
