package prometheus

import (
	"encoding/hex"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zerostat/zerostat/internal/accept"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/delta"
	"github.com/zerostat/zerostat/internal/exphist"
	"github.com/zerostat/zerostat/internal/promname"
	"github.com/zerostat/zerostat/internal/promnative"
	"github.com/zerostat/zerostat/selfstats"
)

// Format is an exposition format.
type Format uint8

const (
	// FormatText is the Prometheus text format 0.0.4
	// (https://prometheus.io/docs/instrumenting/exposition_formats/).
	FormatText Format = 1 + iota
	// FormatOpenMetrics is OpenMetrics 1.0.0
	// (https://github.com/prometheus/OpenMetrics/blob/main/specification/OpenMetrics.md).
	FormatOpenMetrics
	// FormatProtobuf is the protobuf exposition: length-delimited
	// io.prometheus.client.MetricFamily messages (client_model's
	// metrics.proto), the only format with native histograms, which
	// Prometheus asks for first when its native-histograms feature is on.
	FormatProtobuf
)

// Content types of the formats, as client_golang's expfmt spells them.
const (
	ContentTypeText        = "text/plain; version=0.0.4; charset=utf-8"
	ContentTypeOpenMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
	ContentTypeProtobuf    = protoType + "; proto=" + protoMessage + "; encoding=delimited"
)

// The protobuf exposition's media type and message.
const (
	protoType    = "application/vnd.google.protobuf"
	protoMessage = "io.prometheus.client.MetricFamily"
)

// ContentType returns the format's Content-Type header value.
func (f Format) ContentType() string {
	switch f {
	case FormatOpenMetrics:
		return ContentTypeOpenMetrics
	case FormatProtobuf:
		return ContentTypeProtobuf
	}
	return ContentTypeText
}

func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatOpenMetrics:
		return "openmetrics"
	case FormatProtobuf:
		return "protobuf"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// offers are the formats in the server's order of preference: text first
// (what client_golang serves to "*/*"), then OpenMetrics 1.0.0 and its
// pre-release 0.0.1, which is the same text and which Prometheus 2.x also
// asks for, then the protobuf exposition (offered only to a range that
// names it with its proto and encoding parameters: protoParams).
var offers = []accept.Offer{
	{Type: "text/plain", Version: "0.0.4"},
	{Type: "application/openmetrics-text", Version: "1.0.0"},
	{Type: "application/openmetrics-text", Version: "0.0.1"},
	{Type: protoType}, // protoOffer
}

// protoOffer is the index of the protobuf exposition in offers.
const protoOffer = 3

// Negotiate returns the format an Accept header prefers, and false when it
// accepts none (NewHandler's handler then serves the text format, as
// client_golang does). The protobuf exposition is chosen only for a media
// range that asks for it whole,
// "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited",
// as Prometheus sends it with its native-histograms feature on (and as
// client_golang's expfmt.Negotiate requires). It does not allocate.
func Negotiate(acceptHeader string) (Format, bool) {
	i := accept.Negotiate(acceptHeader, offers)
	if i == protoOffer && !protoParams(acceptHeader) {
		i = accept.Negotiate(acceptHeader, offers[:protoOffer])
	}
	switch i {
	case 0:
		return FormatText, true
	case 1, 2:
		return FormatOpenMetrics, true
	case protoOffer:
		return FormatProtobuf, true
	}
	return FormatText, false
}

// Options configure a Handler. The zero value negotiates the format,
// compresses with gzip when the scraper accepts it, and adds no prefix and
// no constant labels.
type Options struct {
	// Namespace, if set, prefixes every metric name with Namespace + "_".
	Namespace string
	// ConstLabels are added to every series (for example an "env" or a
	// "region"). Names are sanitized like tag keys; a tag key of a view
	// with the same label name takes precedence in that view.
	ConstLabels map[string]string
	// Format, if set, is served whatever the Accept header says.
	Format Format
	// DisableCompression turns off gzip (used when the request's
	// Accept-Encoding allows it, at gzip.BestSpeed).
	DisableCompression bool
	// OpenCensusNames names metrics as OpenCensus's Prometheus exporter
	// (contrib.go.opencensus.io/exporter/prometheus v0.4.2) does, so that
	// a migrated service keeps its series: Namespace + "_" + the view
	// name sanitized, no unit suffix, no "_total" on counters, "le" in
	// the text format's spelling ("1"). OpenMetrics requires a counter's
	// sample to end in "_total": in OpenMetrics such counters are typed
	// "unknown", keeping their names. See docs/metric-mapping.md.
	OpenCensusNames bool
}

// Handler serves every registered view in the Prometheus text format,
// OpenMetrics or the protobuf exposition. It is safe for concurrent use:
// requests build their exposition one at a time (under a mutex; the
// registry's recorders are never blocked), then write it to their
// connections concurrently.
type Handler struct {
	opts  Options
	namer *promname.Namer // guarded by mu
	self  *selfstats.Sink

	// mu serialises AppendFormat: it guards the per-view state and the
	// scratch buffers below.
	mu      sync.Mutex
	fams    map[*core.View]*family
	gen     uint64
	scratch []*core.Series
	buckets []int64
	exs     []*core.Exemplar // a histogram series' exemplars (OpenMetrics)
	values  []float64        // a Sum view's values, read before its head is chosen
	labels  []byte
	sorter  seriesSorter
	exp     exphist.Snapshot     // an exponential series' read
	native  promnative.Histogram // its native form (protobuf)
	quants  []float64            // a summary series' quantile values (summary.go)

	// spare is one output buffer kept by the handler itself, so the usual
	// single scraper reuses it even across garbage collections (which
	// empty sync.Pools); concurrent scrapes take more from bufPool.
	spare atomic.Pointer[buffer]
}

var _ http.Handler = (*Handler)(nil)

// family is what the handler keeps per view: its names, rendered once,
// and its series sorted by tag values (re-sorted only when series entered
// or left the view: changes is the aggregator's Changes() at the last
// sort).
type family struct {
	fam     *promname.Family
	kind    core.Kind
	seen    uint64
	changes uint64
	series  []*core.Series

	// heads[om][untyped] are the "# HELP", "# TYPE" (and "# UNIT") lines
	// of the text format (om 0) and OpenMetrics (om 1), for the family's
	// type (untyped 0) and, for a counter, for an export in which it is
	// not a valid counter (untyped 1: "unknown", named after its sample).
	heads [2][2][]byte
	// omUntyped: in OpenMetrics the counter is always "unknown" (its
	// samples lack "_total": OpenCensus naming).
	omUntyped      bool
	sampleName     string   // a counter's or gauge's sample, or "<name>_bucket"
	sumName        string   // histograms: "<name>_sum"
	countName      string   // histograms: "<name>_count"
	createdName    string   // OpenMetrics counters and histograms: "<name>_created"
	labelHeads     []string // per label: `name="` or, for a constant, `name="value"`
	overflowLabels []byte   // the labels of the overflow series, rendered
	les            []string // histograms: `le="<bound>"` per bound and "+Inf", on every path
	qs             []string // summaries: `quantile="<q>"` per quantile (summary.go)
	pb             protoFamily
}

// NewHandler returns a handler serving the registered views. It returns
// the concrete *Handler, which also offers AppendFormat and WriteFormat.
// Views whose metric names collide with an earlier registered view's are
// left out of the output, reported by Err and counted by selfstats'
// zerostat/refused_views.
func NewHandler(opts Options) *Handler {
	h := &Handler{
		opts: opts,
		namer: promname.NewNamer(promname.Options{Namespace: opts.Namespace,
			Consts: promname.ConstLabels(opts.ConstLabels), OpenCensus: opts.OpenCensusNames}),
		self: selfstats.NewSink("prometheus"),
		fams: map[*core.View]*family{},
	}
	h.self.Refused(h.namer.Sync(core.Views()))
	return h
}

// Err returns an error naming each view left out of the output because
// its metric name collides with an earlier registered view's (and that
// view), as of NewHandler or the last exposition; nil when none is. Safe
// for concurrent use.
func (h *Handler) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.self.Refused(h.namer.Sync(core.Views()))
	return h.namer.Err()
}

// appendHead appends the "# HELP", "# TYPE" and "# UNIT" lines of a
// family named name.
func appendHead(dst []byte, name string, pf *promname.Family, typ string, unit string, om bool) []byte {
	if pf.Help != "" {
		dst = append(dst, "# HELP "+name+" "...)
		dst = append(promname.AppendHelp(dst, pf.Help, om), '\n')
	}
	dst = append(dst, "# TYPE "+name+" "+typ+"\n"...)
	if unit != "" {
		dst = append(dst, "# UNIT "+name+" "+unit+"\n"...)
	}
	return dst
}

func (h *Handler) newFamily(pf *promname.Family) *family {
	v := pf.View
	f := &family{fam: pf, kind: v.Agg.Kind(), sampleName: pf.Sample}
	// Text format 0.0.4: the family is named as client_golang names a
	// counter, after its sample ("<name>_total"); "# UNIT" is
	// OpenMetrics's.
	textName := pf.Name
	if pf.Type == promname.Counter {
		textName = pf.Sample
	}
	f.heads[0][0] = appendHead(nil, textName, pf, pf.Type.String(), "", false)
	f.heads[1][0] = appendHead(nil, pf.Name, pf, pf.Type.String(), pf.Unit, true)
	if pf.Type == promname.Counter {
		// Untyped, a family is named after its one sample, and its unit
		// is no longer a suffix of the name.
		f.heads[0][1] = appendHead(nil, pf.Sample, pf, "untyped", "", false)
		f.heads[1][1] = appendHead(nil, pf.Sample, pf, "unknown", "", true)
		f.omUntyped = pf.Sample == pf.Name
		if f.omUntyped {
			f.heads[1][0] = f.heads[1][1]
		}
	}
	f.createdName = pf.Created
	for _, l := range pf.Labels {
		if l.Tag >= 0 {
			f.labelHeads = append(f.labelHeads, l.Name+`="`)
		} else {
			f.labelHeads = append(f.labelHeads, string(promname.AppendLabelValue([]byte(l.Name+`="`), l.Value))+`"`)
		}
	}
	for _, l := range pf.OverflowLabels {
		if len(f.overflowLabels) > 0 {
			f.overflowLabels = append(f.overflowLabels, ',')
		}
		f.overflowLabels = append(f.overflowLabels, l.Name+`="`...)
		f.overflowLabels = append(promname.AppendLabelValue(f.overflowLabels, l.Value), '"')
	}
	switch f.kind {
	case core.KindDistribution:
		f.sumName, f.countName = pf.Name+"_sum", pf.Name+"_count"
		for _, le := range pf.Les {
			f.les = append(f.les, `le="`+le+`"`)
		}
	case core.KindExponential:
		// In the text formats, what client_golang writes for a native
		// histogram without classic buckets: a "+Inf" bucket, the sum,
		// the count.
		f.sumName, f.countName = pf.Name+"_sum", pf.Name+"_count"
		f.les = []string{`le="+Inf"`}
	case core.KindSummary:
		f.sumName, f.countName = pf.Name+"_sum", pf.Name+"_count"
		f.qs = summaryQs(pf)
	}
	f.pb = newProtoFamily(pf, textName, f.kind)
	return f
}

// seriesSorter orders series by their tag values in key order (View.Keys).
type seriesSorter struct {
	s    []*core.Series
	strs []string
}

func (x *seriesSorter) Len() int      { return len(x.s) }
func (x *seriesSorter) Swap(i, j int) { x.s[i], x.s[j] = x.s[j], x.s[i] }
func (x *seriesSorter) Less(i, j int) bool {
	a, b := x.s[i].ValueIDs(), x.s[j].ValueIDs()
	for k := range max(len(a), len(b)) {
		// Past a series' values (keys added to its view since), absent.
		ak, bk := core.ValueID(a, k), core.ValueID(b, k)
		if ak != bk {
			if c := strings.Compare(x.strs[ak], x.strs[bk]); c != 0 {
				return c < 0
			}
		}
	}
	return false
}

// AppendFormat appends the exposition of every registered view in format
// f to dst and returns it (for FormatProtobuf, the delimited MetricFamily
// messages). Views come sorted by name, series sorted by
// their tag values. Cost: one atomic read per series (a distribution's
// cell is locked while its buckets are copied) and the text; in steady
// state (no new view or series since the last call) it allocates nothing
// beyond growing dst. Safe for concurrent use; calls are serialised.
func (h *Handler) AppendFormat(dst []byte, f Format) []byte {
	core.Collect() // callback gauges and counters (metric, runtime) read now
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	om := f == FormatOpenMetrics
	pb := f == FormatProtobuf
	views := core.Views()
	h.self.Refused(h.namer.Sync(views))
	for _, v := range views {
		pf := h.namer.Family(v)
		if pf == nil {
			continue // refused: its name is an earlier view's (Err)
		}
		fam := h.fams[v]
		if fam == nil || fam.fam != pf {
			fam = h.newFamily(pf)
			h.fams[v] = fam
		}
		fam.seen = h.gen
		changes := v.Agg.Changes()                   // before AppendSeries (see Changes)
		h.scratch, _ = v.AppendSeries(h.scratch[:0]) // at most len(v.Keys) values each (cumulative: what it leaves out is in the next scrape)
		strs := core.Interned()                      // after AppendSeries: holds their values
		if changes != fam.changes || len(h.scratch) != len(fam.series) {
			fam.changes = changes
			fam.series = append(fam.series[:0], h.scratch...)
			h.sorter = seriesSorter{s: fam.series, strs: strs}
			sort.Sort(&h.sorter)
			h.sorter = seriesSorter{}
		}
		overflow := v.Agg.Overflow()
		if len(fam.series) == 0 && overflow == nil {
			continue
		}
		ctx := exposition{om: om, agg: v.Agg}
		if fam.kind == core.KindSum {
			// Read the values first: the head depends on them, and the
			// lines must show the values the head was chosen for.
			h.values = h.values[:0]
			valid := true
			for _, s := range fam.series {
				x := s.ReadSum()
				valid = valid && promname.CounterValid(x)
				h.values = append(h.values, x)
			}
			if overflow != nil {
				x := overflow.ReadSum()
				valid = valid && promname.CounterValid(x)
				h.values = append(h.values, x)
			}
			// Only a counter turns untyped: an up-down sum is a gauge,
			// which may be negative.
			ctx.untyped = !valid && fam.fam.Type == promname.Counter
		}
		ctx.untyped = ctx.untyped || om && fam.omUntyped
		if fam.kind == core.KindDistribution {
			if n := len(v.Agg.Bounds()) + 1; cap(h.buckets) < n {
				h.buckets = make([]int64, n)
			}
			h.buckets = h.buckets[:len(v.Agg.Bounds())+1]
		}
		if pb {
			dst = h.appendFamilyProto(dst, fam, overflow, strs, &ctx)
			continue
		}
		dst = append(dst, fam.heads[b2i(om)][b2i(ctx.untyped)]...)
		for i, s := range fam.series {
			ctx.i = i
			dst = h.appendSeries(dst, fam, s, h.appendLabels(fam, s, strs), &ctx)
		}
		if overflow != nil {
			ctx.i = len(fam.series)
			dst = h.appendSeries(dst, fam, overflow, fam.overflowLabels, &ctx)
		}
	}
	for v, fam := range h.fams {
		if fam.seen != h.gen {
			delete(h.fams, v)
		}
	}
	if om {
		dst = append(dst, "# EOF\n"...)
	}
	return dst
}

// appendLabels renders the labels of s into h.labels: `a="x",b="y"`.
func (h *Handler) appendLabels(fam *family, s *core.Series, strs []string) []byte {
	vids := s.ValueIDs()
	lb := h.labels[:0]
	for i, l := range fam.fam.Labels {
		if l.Tag < 0 {
			if len(lb) > 0 {
				lb = append(lb, ',')
			}
			lb = append(lb, fam.labelHeads[i]...)
			continue
		}
		val := strs[core.ValueID(vids, l.Tag)]
		if val == "" {
			continue // an absent tag: Prometheus treats empty labels as absent
		}
		if len(lb) > 0 {
			lb = append(lb, ',')
		}
		lb = append(lb, fam.labelHeads[i]...)
		lb = append(promname.AppendLabelValue(lb, val), '"')
	}
	h.labels = lb
	return lb
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// exposition is the state of one family's exposition: the format,
// whether a counter is shown untyped, and the index of the series (in
// Handler.values, for a Sum view).
type exposition struct {
	om, untyped bool
	i           int
	agg         *core.Aggregator
}

// appendSeries appends the samples of s, labelled lb. In OpenMetrics a
// counter or histogram also gets its "_created" sample (the start every
// cumulative path gives it, delta.CumulativeStart: the view's, or the
// series' own once it may be a re-created one), and a histogram whose values include negative ones (or NaN)
// has no "_sum" (OpenMetrics 1.0: a histogram's sum is a counter, and
// counters are never negative); the text format keeps it.
func (h *Handler) appendSeries(dst []byte, fam *family, s *core.Series, lb []byte, x *exposition) []byte {
	appendFloat := promname.AppendFloat
	if x.om {
		appendFloat = promname.AppendOpenMetricsFloat
	}
	switch fam.kind {
	case core.KindCount:
		dst = appendName(dst, fam.sampleName, lb)
		dst = appendCount(dst, s.ReadCount(), x.om)
		dst = append(h.appendCounterExemplar(dst, fam, s, x), '\n')
	case core.KindSum:
		dst = appendName(dst, fam.sampleName, lb)
		dst = appendFloat(dst, h.values[x.i]+0) // +0: no "-0"
		dst = append(h.appendCounterExemplar(dst, fam, s, x), '\n')
	case core.KindLastValue:
		dst = appendName(dst, fam.sampleName, lb)
		dst = append(appendFloat(dst, s.ReadLast()+0), '\n') // +0: no "-0"
	case core.KindDistribution:
		st := s.ReadDist(h.buckets)
		les := fam.les
		exs := h.exs[:0]
		if x.om {
			exs = s.Exemplars(exs)
			h.exs = exs
		}
		var cum int64
		for i, c := range h.buckets {
			cum += c
			dst = append(dst, fam.sampleName...)
			dst = append(dst, '{')
			if len(lb) > 0 {
				dst = append(append(dst, lb...), ',')
			}
			dst = append(dst, les[i]...)
			dst = append(dst, '}', ' ')
			dst = appendBucketCount(dst, cum, x.om)
			if i < len(exs) && exs[i] != nil {
				dst = appendExemplar(dst, exs[i])
			}
			dst = append(dst, '\n')
		}
		if !x.om || st.Count == 0 || promname.CounterValid(st.Min) && promname.CounterValid(st.Sum) {
			dst = appendName(dst, fam.sumName, lb)
			dst = append(appendFloat(dst, st.Sum+0), '\n')
		}
		dst = appendName(dst, fam.countName, lb)
		dst = append(appendBucketCount(dst, cum, x.om), '\n')
	case core.KindExponential:
		// No classic buckets: "+Inf" holds the count.
		s.ReadExp(&h.exp)
		st := &h.exp
		n := int64(st.Count)
		dst = append(dst, fam.sampleName...)
		dst = append(dst, '{')
		if len(lb) > 0 {
			dst = append(append(dst, lb...), ',')
		}
		dst = append(dst, fam.les[0]...)
		dst = append(dst, '}', ' ')
		dst = append(appendBucketCount(dst, n, x.om), '\n')
		if !x.om || n == 0 || promname.CounterValid(st.Min) && promname.CounterValid(st.Sum) {
			dst = appendName(dst, fam.sumName, lb)
			dst = append(appendFloat(dst, st.Sum+0), '\n')
		}
		dst = appendName(dst, fam.countName, lb)
		dst = append(appendBucketCount(dst, n, x.om), '\n')
	case core.KindSummary:
		dst = h.appendSummary(dst, fam, s, lb, x.om)
	}
	if x.om && !x.untyped && fam.createdName != "" {
		dst = appendName(dst, fam.createdName, lb)
		start, _ := delta.CumulativeStart(x.agg, s)
		dst = append(promname.AppendOpenMetricsFloat(dst, float64(start.UnixNano())/1e9), '\n')
	}
	return dst
}

// minExpCount is the least count client_golang's float formatting
// (strconv's shortest 'g' form) writes with an exponent: 1e6 is "1e+06".
const minExpCount = 1_000_000

// appendCount appends the count n as client_golang writes a counter's
// value, a float: n's digits below a million, the shortest 'g' form from
// there ("1e+06", "1.234567e+06"), and in OpenMetrics (om) with ".0"
// after integral digits ("2.0"). Below a million, the common case, it
// formats n as an integer (the same digits, cheaper). No allocation.
func appendCount(dst []byte, n int64, om bool) []byte {
	if n >= 0 && n < minExpCount {
		dst = strconv.AppendInt(dst, n, 10)
		if om {
			dst = append(dst, '.', '0')
		}
		return dst
	}
	if om {
		return promname.AppendOpenMetricsFloat(dst, float64(n))
	}
	return promname.AppendFloat(dst, float64(n))
}

// appendBucketCount appends a histogram's cumulative bucket count or
// _count as client_golang writes it: an integer in OpenMetrics, a float
// in the text format (appendCount: "1e+06" from a million).
func appendBucketCount(dst []byte, n int64, om bool) []byte {
	if om {
		return strconv.AppendInt(dst, n, 10)
	}
	return appendCount(dst, n, false)
}

// appendExemplar appends an OpenMetrics exemplar, " # {labels} value
// timestamp": the labels are trace_id and span_id (lower-case hex) when
// the exemplar has a span context attachment (stats.SpanContext, or
// OpenCensus's trace.SpanContext: core.NewExemplar), none otherwise (other
// attachments are not labels: OpenMetrics caps an exemplar's labels at 128
// characters). No allocation.
func appendExemplar(dst []byte, e *core.Exemplar) []byte {
	dst = append(dst, " # {"...)
	if e.HasSpan() {
		dst = append(dst, `trace_id="`...)
		dst = hex.AppendEncode(dst, e.TraceID[:])
		dst = append(dst, `",span_id="`...)
		dst = hex.AppendEncode(dst, e.SpanID[:])
		dst = append(dst, '"')
	}
	dst = append(dst, '}', ' ')
	dst = promname.AppendOpenMetricsFloat(dst, e.Value+0) // +0: no "-0"
	dst = append(dst, ' ')
	return promname.AppendOpenMetricsFloat(dst, float64(e.Time)/1e9)
}

// appendName appends `name{labels} ` (no braces without labels).
func appendName(dst []byte, name string, labels []byte) []byte {
	dst = append(dst, name...)
	if len(labels) > 0 {
		dst = append(dst, '{')
		dst = append(dst, labels...)
		dst = append(dst, '}')
	}
	return append(dst, ' ')
}

// WriteFormat writes the exposition in format f to w in one Write, from a
// pooled buffer. Steady-state cost: AppendFormat's, with no allocation.
func (h *Handler) WriteFormat(w io.Writer, f Format) (int, error) {
	b := h.getBuffer()
	defer h.putBuffer(b)
	b.b = h.AppendFormat(b.b[:0], f)
	return w.Write(b.b)
}

// ServeHTTP serves the exposition in the format the request's Accept
// header prefers (or Options.Format), gzip-compressed when the request
// accepts it. The whole body is built in a pooled buffer before anything
// is written, so the response carries a Content-Length and a slow client
// holds no lock.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := h.opts.Format
	if f == 0 {
		f, _ = Negotiate(r.Header.Get("Accept"))
	}
	buf := h.getBuffer()
	defer h.putBuffer(buf)
	buf.b = h.AppendFormat(buf.b[:0], f)
	accept.WriteBody(w, r, buf.b, f.ContentType(), !h.opts.DisableCompression)
}

// buffer is a pooled byte buffer. The caller that got it from getBuffer
// owns it until putBuffer and must keep no reference to b.b after.
type buffer struct{ b []byte }

func (b *buffer) Write(p []byte) (int, error) {
	b.b = append(b.b, p...)
	return len(p), nil
}

// maxPooledBuffer is the largest buffer returned to the pool; larger ones
// are left to the garbage collector (as log/slog's internal/buffer does),
// so one huge scrape does not pin its memory.
const maxPooledBuffer = 32 << 20

var bufPool = sync.Pool{New: func() any { return new(buffer) }}

func (h *Handler) getBuffer() *buffer {
	if b := h.spare.Swap(nil); b != nil {
		return b
	}
	return bufPool.Get().(*buffer)
}

func (h *Handler) putBuffer(b *buffer) {
	if cap(b.b) > maxPooledBuffer {
		return
	}
	b.b = b.b[:0]
	if !h.spare.CompareAndSwap(nil, b) {
		bufPool.Put(b)
	}
}
