package statsd

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/exphist"
)

// overflowTag tags the overflow series (a view past its cardinality
// limit), as the Prometheus outputs label it (otel_metric_overflow="true").
const overflowTag = "otel_metric_overflow"

// encoder turns a snapshot into StatsD lines and packs them into
// datagrams (or stream writes) of at most max bytes, never splitting a
// line: a line that does not fit the current datagram starts the next; a
// multi-value line is cut between values instead. The only line that can
// exceed max is a single value whose name and tags alone do (sent alone,
// and refused by a datagram transport: dropped and counted).
//
// Not safe for concurrent use: the pipeline serialises exports. Every
// buffer is the encoder's and reused, so a steady-state export allocates
// nothing here.
type encoder struct {
	o         *Options
	plain     bool
	datagram  bool // lines are joined by '\n' (datagrams), else each ends with one (streams)
	max       int
	typ       string // the distribution type: "d", "h" or "ms"
	constTags []byte // DogStatsD: "k:v,k:v" (Tags, then the DD_* tags); plain: ".k.v.k.v"
	ns        []byte // the namespace and its '.', sanitised ("" without one)

	tracker *delta.Tracker
	views   func() []*core.View // the pipeline's ExportViews
	names   map[*core.View]*viewName
	seq     uint64 // export cycles
	series  []*core.Series
	buckets []int64
	strs    []string
	pairs   []pair
	pcts    []pct        // OpenCensusDatadog percentiles: name and value in (0, 1]
	rv      delta.Values // a series' read: its exponential Counts are reused

	// OpenCensusDatadog mode's exponential views: each series' read, their
	// merge and its layout (ocExpView).
	expRows   []exphist.Snapshot
	expAcc    exphist.Snapshot
	expLayout exphist.Layout

	name []byte // the current view's metric name (namespace included)
	tags []byte // the current series' tags: DogStatsD "|#..." (empty: none); plain: the folded ".k.v" suffix
	head []byte // the start of the multi-value line being cut
	tail []byte // the end of a line: "|d|@r|#tags"

	pkt   []byte // the datagram being filled; every line in it ends with '\n'
	lines int    // lines in pkt
	spill []byte
	val   []byte                             // a value moved to the next multi-value line
	send  func(body []byte, lines int) error // hands a datagram to the pipeline
	err   error                              // the first failure of this export's sends
}

type viewName struct {
	name []byte
	seen uint64
}

// pair is count values at v: what a native distribution sends of a bucket.
type pair struct {
	n uint64
	v float64
}

type pct struct {
	name string // "50percentile", as the OpenCensus Datadog exporter names it
	p    float64
}

func newEncoder(o *Options, datagram bool, max int) *encoder {
	e := &encoder{o: o, plain: o.Dialect == Plain, datagram: datagram, max: max, typ: o.DistributionType,
		names: map[*core.View]*viewName{}, tracker: delta.NewTracker(o.EvictIdleAfter)}
	if o.Namespace != "" {
		if o.OpenCensusDatadog {
			e.ns = appendOCNamespace(nil, o.Namespace)
		} else {
			e.ns = appendName(nil, o.Namespace)
		}
		e.ns = append(e.ns, '.')
	}
	for _, t := range o.Tags {
		k, v, hasV := cut(t)
		hasV = hasV && v != "" // "key:" is the tag "key"
		if e.plain {
			e.constTags = append(e.constTags, '.')
			e.constTags = appendSegment(e.constTags, k)
			if hasV {
				e.constTags = append(e.constTags, '.')
				e.constTags = appendSegment(e.constTags, v)
			}
			continue
		}
		if len(e.constTags) > 0 {
			e.constTags = append(e.constTags, ',')
		}
		e.constTags = appendTagKey(e.constTags, k)
		if hasV {
			e.constTags = append(e.constTags, ':')
			e.constTags = appendTagValue(e.constTags, v)
		}
	}
	for _, p := range o.Percentiles {
		e.pcts = append(e.pcts, pct{name: percentileName(p), p: p})
	}
	return e
}

// cut splits a "key:value" tag at its first ':'.
func cut(t string) (k, v string, hasV bool) {
	for i := 0; i < len(t); i++ {
		if t[i] == ':' {
			return t[:i], t[i+1:], true
		}
	}
	return t, "", false
}

// encode reads every view once and hands its lines, packed, to send. It
// returns the first send failure (the rest of the export is still read
// and handed over: the pipeline drops, or queues, what it cannot send).
func (e *encoder) encode() error {
	e.seq++
	e.err = nil
	e.pkt, e.lines = e.pkt[:0], 0
	views := e.views()
	e.tracker.Begin()
	for _, v := range views {
		e.view(v)
	}
	e.tracker.End()
	clear(e.series) // keep no series alive past the export
	e.flush()
	if len(e.names) > len(views) {
		for v, n := range e.names {
			if n.seen != e.seq {
				delete(e.names, v)
			}
		}
	}
	return e.err
}

// reads reports whether view v is read as the change since the last
// export: natively Count, Sum (not an up-down sum), Distribution and
// exponential distribution; in
// OpenCensusDatadog mode Count only, as that exporter (stats.go: "compute
// the difference of now and last collected period") — it sends sums and
// distributions as cumulative gauges.
func (e *encoder) reads(v *core.View) bool {
	switch v.Agg.Kind() {
	case core.KindCount:
		return true
	case core.KindSum:
		return !v.UpDown && !e.o.OpenCensusDatadog
	case core.KindDistribution, core.KindExponential:
		return !e.o.OpenCensusDatadog
	}
	return false
}

func (e *encoder) view(v *core.View) {
	a := v.Agg
	kind := a.Kind()
	var st *delta.View // nil: cumulative
	if e.reads(v) {
		st = e.tracker.View(a)
	}
	defer st.Done() // every series read: acknowledge the view's seals
	vn := e.names[v]
	if vn == nil {
		vn = &viewName{name: e.viewName(v)}
		e.names[v] = vn
	}
	vn.seen = e.seq
	e.name = vn.name
	if n := len(a.Bounds()) + 1; cap(e.buckets) < n {
		e.buckets = make([]int64, n)
	}
	e.buckets = e.buckets[:len(a.Bounds())+1]
	var complete bool
	e.series, complete = v.AppendSeries(e.series[:0])
	if !complete {
		st.LeftOut() // its keys grew since the views were loaded: next export
	}
	overflow := a.Overflow()
	if overflow != nil {
		e.series = append(e.series, overflow)
	}
	e.strs = core.Interned() // after the series: holds their values
	if kind == core.KindExponential && e.o.OpenCensusDatadog {
		e.ocExpView(v, overflow)
		return
	}
	rv := &e.rv
	for _, s := range e.series {
		say := delta.Read(kind, s, st, e.buckets, rv)
		if !say && !(e.o.OpenCensusDatadog && kind == core.KindCount) {
			continue // nothing new (that exporter sends a count of 0)
		}
		e.seriesTags(v, s, s == overflow)
		if e.o.OpenCensusDatadog {
			e.ocRow(v, rv)
		} else {
			e.nativeRow(v, rv)
		}
	}
}

// viewName is the view's metric name, namespace included: sanitised by
// the name rule, or the OpenCensus Datadog exporter's (viewSignature).
func (e *encoder) viewName(v *core.View) []byte {
	b := append([]byte(nil), e.ns...)
	if !e.o.OpenCensusDatadog {
		return appendName(b, v.Name)
	}
	b = appendKept(b, v.Name, alnumByte)
	if e.o.TagMetricNames {
		for _, k := range v.Keys {
			b = append(b, '_')
			b = appendName(b, k)
		}
	}
	return b
}

// appendOCNamespace is the OpenCensus Datadog exporter's namespace rule
// (sanitizeMetricName: spaces removed, then [^a-zA-Z0-9]+ made "_").
func appendOCNamespace(dst []byte, ns string) []byte {
	var b [64]byte
	s := b[:0]
	for i := 0; i < len(ns); i++ {
		if ns[i] != ' ' {
			s = append(s, ns[i])
		}
	}
	return appendKept(dst, string(s), alnumByte)
}

// seriesTags writes the tags of series s into e.tags: DogStatsD
// "|#<const tags>,<key>:<value>,..." in the view's key order (absent keys
// left out), plain StatsD the folded suffix ".<key>.<value>...".
func (e *encoder) seriesTags(v *core.View, s *core.Series, overflow bool) {
	t := e.tags[:0]
	if e.plain {
		t = append(t, e.constTags...)
	} else {
		t = append(t, "|#"...)
		t = append(t, e.constTags...)
	}
	for i, id := range s.ValueIDs() {
		if id == 0 || i >= len(v.Keys) || int(id) >= len(e.strs) {
			continue // absent
		}
		if e.plain {
			t = append(t, '.')
			t = appendSegment(t, v.Keys[i])
			t = append(t, '.')
			t = appendSegment(t, e.strs[id])
			continue
		}
		if len(t) > 2 {
			t = append(t, ',')
		}
		t = appendTagKey(t, v.Keys[i])
		t = append(t, ':')
		t = appendTagValue(t, e.strs[id])
	}
	if overflow {
		if e.plain {
			t = append(t, "."+overflowTag+".true"...)
		} else {
			if len(t) > 2 {
				t = append(t, ',')
			}
			t = append(t, overflowTag+":true"...)
		}
	}
	if !e.plain && len(t) == 2 {
		t = t[:0] // no tag at all
	}
	e.tags = t
}

// nativeRow writes a series natively: Count and Sum as counters of the
// interval's change, an up-down sum and a LastValue as gauges, a
// Distribution as values that rebuild the interval's buckets.
func (e *encoder) nativeRow(v *core.View, rv *delta.Values) {
	switch v.Agg.Kind() {
	case core.KindCount:
		m := e.begin("")
		e.pkt = strconv.AppendUint(e.pkt, rv.Count, 10)
		e.finish(m, "c", 0, -1)
	case core.KindSum:
		if v.UpDown {
			e.gauge("", rv.Sum, -1)
			return
		}
		if isFinite(rv.Sum) {
			m := e.begin("")
			e.pkt = appendValue(e.pkt, rv.Sum)
			e.finish(m, "c", 0, -1)
		}
	case core.KindLastValue:
		e.gauge("", rv.Last, -1)
	case core.KindDistribution:
		e.distribution(v.Agg, &rv.Dist)
	case core.KindExponential:
		e.expDistribution(&rv.Exp)
	case core.KindSummary:
		e.summaryGauges(v.Agg.Quantiles(), rv) // summary.go
	}
}

// gauge writes name<sfx>:x|g. A negative x is written after a line setting
// 0, in the same datagram: in StatsD a signed gauge value is a change
// (Etsy statsd, statsd_exporter), so "-5" alone would subtract 5; the
// pair sets -5 in every server (the Datadog agent, which reads signed
// values as absolute, keeps the last). A non-finite x is not sent.
func (e *encoder) gauge(sfx string, x float64, bucket int) {
	if !isFinite(x) {
		return
	}
	m := len(e.pkt)
	e.headTo(sfx, bucket)
	n := 1
	if x < 0 {
		e.pkt = append(e.pkt, '0')
		e.tailTo(m, "g", 0, bucket)
		e.pkt = append(e.pkt, '\n')
		e.headTo(sfx, bucket)
		n = 2
	}
	if e.o.OpenCensusDatadog {
		e.pkt = appendDDFloat(e.pkt, x)
	} else {
		e.pkt = appendValue(e.pkt, x)
	}
	e.tailTo(m, "g", 0, bucket)
	e.end(m, n)
}

func isFinite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// begin starts a line: the name (with sfx, and plain StatsD's folded
// tags) and ':'. It returns the line's mark for finish.
func (e *encoder) begin(sfx string) int {
	m := len(e.pkt)
	e.headTo(sfx, -1)
	return m
}

// headTo appends a line's name and ':'; bucket >= 0 adds the
// OpenCensusDatadog bucket_idx tag (plain: folded).
func (e *encoder) headTo(sfx string, bucket int) {
	e.pkt = append(e.pkt, e.name...)
	e.pkt = append(e.pkt, sfx...)
	if e.plain {
		e.pkt = append(e.pkt, e.tags...)
		if bucket >= 0 {
			e.pkt = append(e.pkt, ".bucket_idx."...)
			e.pkt = strconv.AppendInt(e.pkt, int64(bucket), 10)
		}
	}
	e.pkt = append(e.pkt, ':')
}

// tailTo appends "|<typ>", the rate (0: none) and the DogStatsD tags.
func (e *encoder) tailTo(m int, typ string, rate float64, bucket int) {
	e.pkt = append(e.pkt, '|')
	e.pkt = append(e.pkt, typ...)
	if rate > 0 {
		e.pkt = append(e.pkt, "|@"...)
		e.pkt = appendRate(e.pkt, rate)
	}
	if e.plain {
		return
	}
	e.pkt = append(e.pkt, e.tags...)
	if bucket >= 0 {
		if len(e.tags) == 0 {
			e.pkt = append(e.pkt, "|#"...)
		} else {
			e.pkt = append(e.pkt, ',')
		}
		e.pkt = append(e.pkt, "bucket_idx:"...)
		e.pkt = strconv.AppendInt(e.pkt, int64(bucket), 10)
	}
}

// finish ends a one-line entry begun at m.
func (e *encoder) finish(m int, typ string, rate float64, bucket int) {
	e.tailTo(m, typ, rate, bucket)
	e.end(m, 1)
}

// end closes the n lines written since mark m (one entry: they travel in
// one datagram). When they do not fit the datagram being filled, that
// datagram is sent without them and they start the next.
func (e *encoder) end(m, n int) {
	e.pkt = append(e.pkt, '\n')
	if m > 0 && e.over(len(e.pkt)) {
		e.spill = append(e.spill[:0], e.pkt[m:]...)
		e.pkt = e.pkt[:m]
		e.flush()
		e.pkt = append(e.pkt, e.spill...)
	}
	e.lines += n
}

// over reports whether a datagram of l bytes (with every line's '\n')
// exceeds the limit: a datagram does not carry its last '\n'.
func (e *encoder) over(l int) bool {
	if e.datagram {
		l--
	}
	return l > e.max
}

// flush hands the datagram being filled to the pipeline.
func (e *encoder) flush() {
	if len(e.pkt) == 0 {
		return
	}
	body := e.pkt
	if e.datagram {
		body = body[:len(body)-1]
	}
	if err := e.send(body, e.lines); err != nil && e.err == nil {
		e.err = err
	}
	e.pkt, e.lines = e.pkt[:0], 0
}

// distribution writes a native distribution: for each bucket that changed
// in the interval, its count of one value inside the bucket (pairs), as
// one value with a sample rate 1/count (count 1: no rate); values of the
// same count share a multi-value line (DogStatsD 1.1) unless NoMultiValue
// or plain StatsD. Bytes per export are bounded by the buckets that
// changed, whatever the number of recordings.
func (e *encoder) distribution(a *core.Aggregator, d *core.DistStats) {
	bounds := a.Bounds()
	upper := a.UpperInclusive()
	nonEmpty := 0
	for _, c := range e.buckets {
		if c > 0 {
			nonEmpty++
		}
	}
	e.pairs = e.pairs[:0]
	for i, c := range e.buckets {
		if c <= 0 {
			continue
		}
		e.addPair(uint64(c), representative(bounds, upper, i, d, nonEmpty == 1))
	}
	e.sendPairs()
}

// addPair adds n values at x to the pairs of the series being written:
// one pair when n has an exact rate, else two that have (splitRate), else
// one at floorRate.
func (e *encoder) addPair(n uint64, x float64) {
	if _, ok := exactRate(n); ok || n == 1 {
		e.pairs = append(e.pairs, pair{n, x})
	} else if k, ok := splitRate(n); ok {
		e.pairs = append(e.pairs, pair{n - k, x}, pair{k, x})
	} else {
		e.pairs = append(e.pairs, pair{n, x}) // floorRate
	}
}

// sendPairs writes the pairs of the series: grouped by count, one line
// per count (a multi-value line unless NoMultiValue or plain StatsD).
func (e *encoder) sendPairs() {
	// Group by count (stable: bucket order within a count), in place: no
	// allocation.
	ps := e.pairs
	slices.SortStableFunc(ps, func(a, b pair) int { return cmp.Compare(a.n, b.n) })
	multi := !e.plain && !e.o.NoMultiValue
	for i := 0; i < len(ps); {
		j := i + 1
		if multi {
			for j < len(ps) && ps[j].n == ps[i].n {
				j++
			}
		}
		e.values(ps[i:j])
		i = j
	}
}

// values writes one line "name:v1:v2:...|<typ>|@<1/n>|#tags" for pairs of
// one count n, cut between values into lines that each fit an empty
// datagram.
func (e *encoder) values(ps []pair) {
	n := ps[0].n
	rate := 0.0
	if n > 1 {
		var ok bool
		if rate, ok = exactRate(n); !ok {
			rate = floorRate(n)
		}
	}
	// The line's end, written once: "|d|@r|#tags".
	m := len(e.pkt)
	e.tailTo(m, e.typ, rate, -1)
	e.tail = append(e.tail[:0], e.pkt[m:]...)
	e.pkt = e.pkt[:m]
	e.headTo("", -1)
	e.head = append(e.head[:0], e.pkt[m:]...)
	for k, p := range ps {
		if k > 0 {
			at := len(e.pkt)
			e.pkt = append(e.pkt, ':')
			e.pkt = appendValue(e.pkt, p.v)
			// The line with this value and its end, alone in a datagram.
			if len(e.pkt)-m+len(e.tail) > e.max {
				e.val = append(e.val[:0], e.pkt[at+1:]...)
				e.pkt = append(e.pkt[:at], e.tail...)
				e.end(m, 1)
				m = len(e.pkt)
				e.pkt = append(e.pkt, e.head...)
				e.pkt = append(e.pkt, e.val...)
			}
			continue
		}
		e.pkt = appendValue(e.pkt, p.v)
	}
	e.pkt = append(e.pkt, e.tail...)
	e.end(m, 1)
}

// representative returns a value inside bucket i for a series whose
// interval is d: the interval's mean when it is the only bucket that
// changed (the sum is then exact); otherwise the middle of an inner
// bucket, and for the buckets below the first bound and above the last
// the series' min and max (which lie in them whenever they are not
// empty), or half a neighbouring bucket's width past the bound when those
// are not finite. Each value is inside its bucket under the view's rule
// (view.Distribution: b[i-1] <= v < b[i]; DistributionUpperInclusive:
// b[i-1] < v <= b[i]).
func representative(bounds []float64, upper bool, i int, d *core.DistStats, only bool) float64 {
	in := func(x float64) bool { return isFinite(x) && inBucket(bounds, upper, i, x) }
	if only && d.PosInf+d.NegInf+d.NaN == 0 && in(d.Mean) {
		return d.Mean
	}
	nb := len(bounds)
	switch {
	case nb == 0:
		if isFinite(d.Mean) {
			return d.Mean
		}
		return 0
	case i == 0:
		if in(d.Min) {
			return d.Min
		}
		x := bounds[0] - halfWidth(bounds, 0)
		for !in(x) && isFinite(x) {
			x = math.Nextafter(x, math.Inf(-1))
		}
		return x
	case i == nb:
		if in(d.Max) {
			return d.Max
		}
		x := bounds[nb-1] + halfWidth(bounds, nb-2)
		for !in(x) && isFinite(x) {
			x = math.Nextafter(x, math.Inf(1))
		}
		return x
	}
	lo, hi := bounds[i-1], bounds[i]
	return lo + (hi-lo)/2
}

// halfWidth is half the width of the bucket between bounds j and j+1, or
// of max(|b|, 1) when the view has one bound.
func halfWidth(bounds []float64, j int) float64 {
	if len(bounds) < 2 {
		return max(math.Abs(bounds[0]), 1) / 2
	}
	j = max(j, 0)
	return (bounds[j+1] - bounds[j]) / 2
}

// inBucket reports whether x falls in bucket i of bounds under the view's
// rule.
func inBucket(bounds []float64, upper bool, i int, x float64) bool {
	if i > 0 {
		lo := bounds[i-1]
		if upper && x <= lo || !upper && x < lo {
			return false
		}
	}
	if i < len(bounds) {
		hi := bounds[i]
		if upper && x > hi || !upper && x >= hi {
			return false
		}
	}
	return true
}

// ocRow writes a series as the OpenCensus Datadog exporter's
// submitMetric does (stats.go), for a migrating service's dashboards:
//
//	CountData         client.Count(name, value - last sent, tags, 1)  -> name:<int>|c, every period, 0 included
//	SumData           client.Gauge(name, float64(value), tags, 1)     -> name:<value>|g (cumulative)
//	LastValueData     client.Gauge(name, value, tags, 1)              -> name:<value>|g
//	DistributionData  client.Gauge(name+"."+k, v, tags, 1) for k in
//	                  min, max, count, avg, squared_dev_sum            -> cumulative gauges
//	                  (and, on its client-percentiles branch, the
//	                  percentiles "<p×100>percentile")
//	                  client.Gauge(name+".count_per_bucket", c, tags+bucket_idx:<i>, 1) per bucket
//	                  unless DisableCountPerBuckets
//
// The distribution's five gauges are written in that order; the exporter
// ranges over a Go map, so its order varies from period to period.
func (e *encoder) ocRow(v *core.View, rv *delta.Values) {
	switch v.Agg.Kind() {
	case core.KindCount:
		m := e.begin("")
		e.pkt = strconv.AppendInt(e.pkt, int64(rv.Count), 10) // client.Count takes an int64
		e.finish(m, "c", 0, -1)
	case core.KindSum:
		e.gauge("", rv.Sum, -1)
	case core.KindLastValue:
		e.gauge("", rv.Last, -1)
	case core.KindDistribution:
		d := &rv.Dist
		e.gauge(".min", d.Min, -1)
		e.gauge(".max", d.Max, -1)
		e.gauge(".count", float64(d.Count), -1)
		e.gauge(".avg", d.Mean, -1)
		e.gauge(".squared_dev_sum", d.M2, -1)
		if bounds := v.Agg.Bounds(); len(bounds) > 0 {
			for _, p := range e.pcts {
				e.gauge("."+p.name, calculatePercentile(p.p, bounds, e.buckets), -1)
			}
		}
		if !e.o.DisableCountPerBuckets {
			for i, c := range e.buckets {
				e.gauge(".count_per_bucket", float64(c), i)
			}
		}
	case core.KindSummary:
		e.summaryGauges(v.Agg.Quantiles(), rv) // summary.go: as natively
	}
}

// calculatePercentile is the OpenCensus Datadog exporter's percentile
// (branch alex/vendasta/client-percentiles, stats.go, commit bdf6c27):
// the bound of the first bucket whose cumulative count reaches
// floor(p × count), the last bound past them.
func calculatePercentile(p float64, bounds []float64, counts []int64) float64 {
	var sum int64
	for _, c := range counts {
		sum += c
	}
	atBin := int64(math.Floor(p * float64(sum)))
	var prev, cum int64
	for n, c := range counts {
		cum += c
		if atBin >= prev && atBin <= cum && n < len(bounds) {
			return bounds[n]
		}
		prev = cum
	}
	return bounds[len(bounds)-1]
}

// percentileName is that branch's name for percentile p: p×100 truncated,
// ×1000 above 0.99 ("50percentile", "999percentile").
func percentileName(p float64) string {
	mult := 100
	if p > 0.99 {
		mult = 1000
	}
	return strconv.Itoa(int(p*float64(mult))) + "percentile"
}
